#include "options/flags.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <sstream>
#include <utility>

#include "io/json_parse.hpp"
#include "options/ablate_flags.hpp"
#include "options/shared_flags.hpp"
#include "options/terminal.hpp"

namespace mha::options {
namespace {

// Sizes are range-checked loosely here (so absurd numbers never reach an allocation)
// and precisely, with a teaching message, by mha::Validate.
constexpr long long kBig = 1LL << 30;
const std::string kHeadsLimit = "num_heads <= " + std::to_string(Limits::kMaxHeads);
const std::string kDModelLimit = "d_model <= " + std::to_string(Limits::kMaxDModel);

std::string SeeHelp(const std::string& command) { return "See 'mhaviz " + command + " --help'"; }

bool LooksLikeLongFlag(const std::string& a) { return a.size() > 2 && a.compare(0, 2, "--") == 0; }

// The value of a flag is the next argument unless it looks like a long flag:
// "--sentence --npz out.npz" forgot the sentence (CLI11 would take "--npz" as the
// sentence), while "--heads -3" (Validate explains), "--sentence-file -" (stdin) and
// "--temperature -inf" are values. CLI11 would read "-inf" as short flags, so such a
// value is attached to its flag ("--temperature=-inf") before CLI11 sees it.
std::vector<std::string> AttachValues(const CLI::App& app, const std::string& command,
                                      const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    out.push_back(args[i]);
    const CLI::Option* opt = args[i].size() > 1 && args[i][0] == '-' ? app.get_option_no_throw(args[i]) : nullptr;
    if (!opt || opt->get_expected_min() < 1 || i + 1 == args.size()) continue;
    const std::string& next = args[i + 1];
    if (LooksLikeLongFlag(next))
      throw UsageError(args[i] + " needs a value, but the next argument is the flag '" + next + "'. " +
                       SeeHelp(command) + ".");
    if (next.size() < 2 || next[0] != '-') continue;
    out.back() += (LooksLikeLongFlag(args[i]) ? "=" : "") + next;
    ++i;
  }
  return out;
}

// The option name CLI11 puts before ": " in its messages.
std::string NameIn(const std::string& what) { return what.substr(0, what.find(": ")); }

// CLI11's errors, worded the way mhaviz teaches: what is wrong and what to do.
std::string TeachingMessage(const CLI::App& app, const CLI::Error& e, const std::string& command,
                            const std::vector<std::string>& args,
                            const std::function<std::string(const std::string&)>& unexpected) {
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ValidationError*>(&e)) {
    // A validator's own message already names the flag.
    const auto colon = what.find(": ");
    return colon == std::string::npos ? what : what.substr(colon + 2);
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    const std::vector<std::string> left = app.remaining();
    const std::string word = left.empty() ? std::string() : left.front();
    if (!word.empty() && word[0] != '-') {
      if (unexpected) return unexpected(word);
      // Only a command that takes a sentence is told to put one after --sentence.
      if (app.get_option_no_throw("--sentence"))
        return "unexpected argument '" + io::Excerpt(word) +
               "'. Put a sentence after --sentence, in quotes: --sentence \"" + io::Excerpt(word) + " ...\". " +
               SeeHelp(command) + ".";
      return "unexpected argument '" + io::Excerpt(word) + "': mhaviz " + command +
             " takes no bare words; each value follows its flag (--flag VALUE). " + SeeHelp(command) +
             " for the flags it takes.";
    }
    return "unknown flag '" + word + "'. " + SeeHelp(command) + " for the flags it takes.";
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
    // A flag that takes a value is the last argument (AttachValues caught the others).
    const CLI::Option* last = args.empty() ? nullptr : app.get_option_no_throw(args.back());
    const std::string flag = last && last->get_name() == NameIn(what) ? args.back() : NameIn(what);
    if (what.find(" missing") != std::string::npos) return flag + " needs a value. " + SeeHelp(command) + ".";
  }
  return what + ". " + SeeHelp(command) + ".";
}

// Help that reads like the rest of mhaviz: the usage line, what the command does, then
// its flags by group ("--heads H   num_heads (default 8)"), then the footer.
class HelpLayout : public CLI::Formatter {
 public:
  HelpLayout() { column_width(27); }
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    std::string groups = make_groups(app, mode);
    for (std::size_t at; (at = groups.find("\n\n\n")) != std::string::npos;) groups.erase(at, 1);
    std::string help = "usage: " + name + " [flags]\n\n" + app->get_description() + "\n" + groups;
    if (!app->get_footer().empty()) help += "\n" + app->get_footer() + "\n";
    return help;
  }
};

void UseMhavizHelpLayout(CLI::App& app) {
  app.formatter(std::make_shared<HelpLayout>());
  app.set_help_flag("-h,--help", "print this help and exit")->group("Help");
}

// An integer as typed: an optional '-' and digits, nothing else. strtoll alone would
// also take leading spaces and a '+' (and strtoull a '-': " -1" became 2^64 - 1).
bool IsWholeNumber(const std::string& v, bool allow_minus) {
  const std::size_t digits = allow_minus && !v.empty() && v[0] == '-' ? 1 : 0;
  return v.size() > digits && v.find_first_not_of("0123456789", digits) == std::string::npos;
}

// Records a configuration flag: in `o.cfg` (on the defaults) and as an edit the GUI
// replays on the saved settings.
template <class T>
void SetConfig(RunOptions& o, T Config::*field, T value) {
  o.cfg.*field = value;
  o.cfg_edits.push_back([field, value](Config& c) { c.*field = value; });
}

template <class T>
CLI::Option* ConfigInt(CLI::App& app, RunOptions& o, const std::string& flag, T Config::*field, const std::string& help,
                       const std::string& limit, std::function<std::string(long long)> rule = {}) {
  return IntFlag(
      app, flag, -kBig, kBig, [&o, field](int v) { SetConfig(o, field, static_cast<T>(v)); }, help, std::move(rule),
      limit);
}

// A flag with named values: `choices` maps each name to its value.
template <class E>
CLI::Option* ConfigChoice(CLI::App& app, RunOptions& o, const std::string& flag, E Config::*field,
                          std::vector<std::pair<std::string, E>> choices, const std::string& error,
                          const std::string& help) {
  auto known = [choices](const std::string& v) {
    return std::any_of(choices.begin(), choices.end(), [&v](const auto& c) { return c.first == v; });
  };
  std::string names;
  for (const auto& c : choices) names += (names.empty() ? "" : "|") + c.first;
  return app
      .add_option_function<std::string>(
          flag,
          [&o, field, choices](const std::string& v) {
            for (const auto& c : choices)
              if (c.first == v) SetConfig(o, field, c.second);
          },
          help)
      ->type_name(names)
      ->check(CLI::Validator(
          [known, error](std::string& v) { return known(v) ? std::string() : error + ", got '" + v + "'."; }, ""));
}

}  // namespace

bool ParseFlags(CLI::App& app, const std::string& command, const std::vector<std::string>& args,
                const std::function<std::string(const std::string& word)>& unexpected) {
  UseMhavizHelpLayout(app);
  for (CLI::Option* opt : app.get_options()) opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.failure_message([command, args, unexpected](const CLI::App* a, const CLI::Error& e) {
    return TeachingMessage(*a, e, command, args, unexpected);
  });
  try {
    std::vector<std::string> reversed = AttachValues(app, command, args);
    std::reverse(reversed.begin(), reversed.end());  // CLI11 takes argv back to front
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    return true;
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;
    app.exit(e, out, err);  // words it with the failure message above
    throw UsageError(err.str());
  }
  return false;
}

int PrintHelp(const CLI::App& app) {
  std::cout << app.help();
  return 0;
}

CLI::Validator WholeNumber(const std::string& flag, long long lo, long long hi,
                           std::function<std::string(long long)> rule, const std::string& limit) {
  return CLI::Validator(
      [flag, lo, hi, rule, limit](std::string& v) -> std::string {
        const std::string shown = TerminalSafe(v);
        if (!IsWholeNumber(v, lo < 0))
          return flag + " expects a whole number" + (lo >= 0 ? " >= " + std::to_string(lo) : std::string()) +
                 ", got '" + shown + "' (digits only, no spaces or sign" + (lo < 0 ? " other than a leading '-'" : "") +
                 ").";
        errno = 0;
        const long long n = std::strtoll(v.c_str(), nullptr, 10);
        const bool huge = errno == ERANGE;
        if (huge)
          return flag + " expects a whole number, got '" + shown + "', which is beyond any number it can use (" +
                 (limit.empty() ? std::to_string(lo) + " to " + std::to_string(hi) : limit) + ").";
        if (!huge && n >= lo && n <= hi) return rule ? rule(n) : std::string();
        // Out of range: the flag's own rule explains it where it can (it names the limit).
        if (!huge && rule && !rule(n).empty()) return rule(n);
        if (!limit.empty()) return flag + " = " + shown + " is far outside any value mhaviz can use (" + limit + ").";
        return flag + " = " + shown + " is out of range: it must be between " + std::to_string(lo) + " and " +
               std::to_string(hi) + ".";
      },
      "");
}

CLI::Option* IntFlag(CLI::App& app, const std::string& flag, long long lo, long long hi, std::function<void(int)> set,
                     const std::string& help, std::function<std::string(long long)> rule, const std::string& limit) {
  return app
      .add_option_function<std::string>(
          flag, [set](const std::string& v) { set(static_cast<int>(std::strtoll(v.c_str(), nullptr, 10))); }, help)
      ->type_name("N")
      ->check(WholeNumber(flag, lo, hi, std::move(rule), limit));
}

CLI::Option* NumberFlag(CLI::App& app, const std::string& flag, int& target, long long lo, long long hi,
                        const std::string& help) {
  return IntFlag(
             app, flag, lo, hi, [&target](int v) { target = v; }, help)
      ->default_str(std::to_string(target));
}

CLI::Option* SeedFlag(CLI::App& app, const std::string& flag, std::function<void(std::uint64_t)> set,
                      const std::string& help) {
  return app
      .add_option_function<std::string>(
          flag, [set](const std::string& v) { set(static_cast<std::uint64_t>(std::strtoull(v.c_str(), nullptr, 10))); },
          help)
      ->type_name("N")
      ->check(CLI::Validator(
          [flag](std::string& v) -> std::string {
            const std::string bad =
                flag + " expects a whole number >= 0, got '" + TerminalSafe(v) + "' (digits only, no spaces or sign).";
            if (!IsWholeNumber(v, false)) return bad;
            errno = 0;
            std::strtoull(v.c_str(), nullptr, 10);
            return errno == ERANGE ? flag + " = " + TerminalSafe(v) + " is over the largest seed, " +
                                         std::to_string(std::numeric_limits<std::uint64_t>::max()) + "."
                                   : std::string();
          },
          ""));
}

std::optional<long long> ParseWholeNumber(std::string_view v, long long lo, long long hi, bool allow_minus) {
  const std::string text(v);
  if (!IsWholeNumber(text, allow_minus)) return std::nullopt;
  errno = 0;
  const long long n = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE || n < lo || n > hi) return std::nullopt;
  return n;
}

std::optional<std::pair<int, int>> ParseNumberPair(std::string_view v, char sep, int lo, int hi) {
  const std::size_t at = v.find(sep);
  if (at == std::string_view::npos) return std::nullopt;
  const auto a = ParseWholeNumber(v.substr(0, at), lo, hi), b = ParseWholeNumber(v.substr(at + 1), lo, hi);
  if (!a || !b) return std::nullopt;
  return std::make_pair(static_cast<int>(*a), static_cast<int>(*b));
}

CLI::Option* TextFlag(CLI::App& app, const std::string& flag, std::string& target, const std::string& help,
                      const std::string& empty_error) {
  CLI::Option* opt = app.add_option(flag, target, help)->type_name("TEXT");
  if (!empty_error.empty())
    opt->check(CLI::Validator([empty_error](std::string& v) { return v.empty() ? empty_error : std::string(); }, ""));
  return opt;
}

CLI::Option* AttentionFlag(CLI::App& app, std::function<void(Attention)> set) {
  return app
      .add_option_function<std::string>(
          "--attention", [set](const std::string& v) { set(v == "flash" ? Attention::Flash : Attention::Standard); },
          "standard: every head's seq x seq scores and weights kept (default)\n"
          "flash: tiles of scores and an online softmax (Flash attention): the same\n"
          "context, nothing seq x seq kept, memory linear in seq")
      ->type_name("standard|flash")
      ->check(CLI::Validator(
          [](std::string& v) {
            return v == "standard" || v == "flash"
                       ? std::string()
                       : "--attention must be 'standard' (keeps the seq x seq attention weights) or 'flash' (tiles "
                         "and an online softmax, memory linear in seq); got '" +
                             TerminalSafe(v) + "'.";
          },
          ""));
}

CLI::Option* PresetFlag(CLI::App& app, std::function<void(const std::string&)> set) {
  return app
      .add_option_function<std::string>(
          "--preset", std::move(set),
          "lesson: the lesson's worked example (X = [[1,2,3,4],[5,6,7,8],[9,10,11,12]],\n"
          "d_model 4, 2 heads, identity weights); replaces the sentence and configuration\n"
          "hand: the lesson's hand calculation (X = [1, 2], 2 heads of d_k 1, W = 0.5 and 0.3)\n"
          "heads: four hand-built positional heads (previous, self, first, next word) on the\n"
          "sentence's tokens: x = positional encoding only, d_model 64, 4 heads")
      ->type_name("lesson|hand|heads")
      ->check(CLI::Validator(
          [](std::string& v) {
            return v == "lesson" || v == "hand" || v == "heads"
                       ? std::string()
                       : "--preset must be 'lesson' (the lesson's worked example), 'hand' (its hand calculation) "
                         "or 'heads' (four hand-built positional heads on the sentence); got '" +
                             v + "'.";
          },
          ""));
}

void AddModelSizeFlags(CLI::App& app, RunOptions& o) {
  const std::string g = kComputeGroup;
  ConfigInt(app, o, "--heads", &Config::num_heads, "num_heads (default 8)", kHeadsLimit)->type_name("H")->group(g);
  IntFlag(
      app, "--d-model", -kBig, kBig,
      [&o](int v) {
        SetConfig(o, &Config::d_model, v);
        o.d_model_given = true;
      },
      "d_model (default 512); must be divisible by num_heads", {}, kDModelLimit)
      ->type_name("D")
      ->group(g);
  ConfigInt(app, o, "--kv-heads", &Config::num_kv_heads,
            "num_kv_heads for grouped-query attention (divides num_heads; 1 = multi-query)", kHeadsLimit,
            [](long long n) {
              return n > 0 ? std::string()
                           : "--kv-heads = " + std::to_string(n) +
                                 " must be at least 1 (1 = multi-query attention; leave it out for plain multi-head "
                                 "attention).";
            })
      ->type_name("G")
      ->group(g);
  SeedFlag(
      app, "--seed", [&o](std::uint64_t v) { SetConfig(o, &Config::seed, v); },
      "seed of the embeddings and weights (default 42)")
      ->group(g);
}

void AddRunFlags(CLI::App& app, RunOptions& o) {
  const std::string g = kComputeGroup;
  app.callback([&o] { CheckRunOptions(o); });
  app.add_option_function<std::string>(
         "-s,--sentence",
         [&o](const std::string& v) {
           o.sentence = v;
           o.sentence_given = true;
         },
         "the sentence (UTF-8, English or Korean); default \"The cat sat on the mat.\"")
      ->type_name("S")
      ->group(g);
  TextFlag(app, "--sentence-file", o.sentence_file,
           "read the sentence from file F (- = standard input); at most 1 MiB is read\n"
           "and at most 1024 tokens are used",
           "--sentence-file needs a file name, or - for standard input.")
      ->type_name("F")
      ->group(g);
  AddModelSizeFlags(app, o);
  ConfigChoice(app, o, "--mask", &Config::mask, {{"none", Mask::None}, {"causal", Mask::Causal}},
               "--mask must be 'none' or 'causal' (each token sees only itself and earlier tokens)",
               "none | causal (default none)")
      ->group(g);
  ConfigChoice(app, o, "--norm", &Config::norm, {{"post", Norm::Post}, {"pre", Norm::Pre}, {"none", Norm::None}},
               "--norm must be 'post' (LN(x + MHA(x)), Transformer/BERT), 'pre' (x + MHA(LN(x)), GPT/ViT) or 'none'",
               "post: LN(x + MHA(x)) | pre: x + MHA(LN(x)) | none: x + MHA(x) (default post)")
      ->group(g);
  app.add_flag_callback(
         "--no-scale", [&o] { SetConfig(o, &Config::scale, false); }, "do not divide the scores by sqrt(d_k)")
      ->group(g);
  DecimalFlag(
      app, "--temperature", [&o](double t) { SetConfig(o, &Config::temperature, static_cast<float>(t)); },
      "divide the scores by T too (default 1)", "1",
      [](double t, const std::string&) {
        // Casting a double outside float's range to float is undefined behaviour; such a
        // value is refused here and Validate explains the usable range.
        return std::abs(t) <= std::numeric_limits<float>::max()
                   ? std::string()
                   : "--temperature = " + std::to_string(t) +
                         " is far outside the usable range; try 1 (below 1 sharpens the softmax, above 1 flattens it).";
      })
      ->type_name("T")
      ->group(g);
  app.add_flag_callback(
         "--no-pe", [&o] { SetConfig(o, &Config::positional_encoding, false); }, "no sinusoidal positional encoding")
      ->group(g);
  ConfigChoice(app, o, "--block", &Config::block, {{"attention", Block::Attention}, {"encoder", Block::Encoder}},
               "--block must be 'attention' (the attention layer only) or 'encoder' (attention, then a feed-forward "
               "network, each with residual + LayerNorm: a full Transformer encoder block)",
               "attention: the attention layer only (default) | encoder: then a feed-forward\n"
               "network with its own residual + LayerNorm (a Transformer encoder block)")
      ->type_name("B")
      ->group(g);
  ConfigInt(app, o, "--d-ff", &Config::d_ff, "feed-forward hidden width with --block encoder (default 4 x d_model)",
            "d_ff <= " + std::to_string(Limits::kMaxDFf),
            [](long long n) {
              return n > 0 ? std::string()
                           : "--d-ff = " + std::to_string(n) +
                                 " must be at least 1: it is the width of the feed-forward network's hidden layer. "
                                 "Leave it out for the usual 4 x d_model.";
            })
      ->group(g);
  ConfigChoice(app, o, "--activation", &Config::activation, {{"relu", Activation::Relu}, {"gelu", Activation::Gelu}},
               "--activation must be 'relu' (max(0, x), the original Transformer) or 'gelu' (x * Phi(x), BERT/GPT)",
               "relu (default) | gelu (exact erf form, as torch.nn.GELU()) with --block encoder")
      ->type_name("A")
      ->group(g);
  // An empty memory would silently mean self-attention; say so instead.
  TextFlag(app, "--memory", o.memory, "cross-attention: keys and values come from sentence S2",
           "--memory is empty: cross-attention needs a second sentence to read keys and values from, e.g. "
           "--memory \"the dog barked\". Leave out --memory for self-attention.")
      ->type_name("S2")
      ->group(g);
  TextFlag(app, "--input", o.input_npz,
           "use array x, shape (seq, d_model) or (1, seq, d_model), instead of a sentence\n"
           "(and array memory, if present, for cross-attention); no PE is added to it")
      ->type_name("X.npz")
      ->group(g);
  AddAblateFlags(app, o);
  TextFlag(app, "--weights", o.weights_npz,
           "load W_q, W_k, W_v, W_o (+ optional b_q, b_k, b_v, b_o, ln_gamma, ln_beta, ln_eps);\n"
           "with --block encoder also ffn_W1, ffn_W2 (+ optional ffn_b1, ffn_b2, ln2_gamma, ln2_beta)")
      ->type_name("W.npz")
      ->group(g);
}

}  // namespace mha::options
