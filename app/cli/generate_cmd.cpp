// `mhaviz generate`: a language model continues a prompt one piece at a time. The
// prompt is read once (the prefill), then every new piece is one decode step over the
// KV cache (mha/decode.hpp); beside it the whole sequence is recomputed as the model
// would without a cache, so each step's time and FLOPs are shown both ways and the two
// logits are compared.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "options/model_flags.hpp"
#include "options/shared_flags.hpp"
#include "options/table.hpp"
#include "commands.hpp"
#include "io/assets.hpp"
#include "io/checkpoint.hpp"
#include "lm/generation.hpp"
#include "lm/language_model.hpp"
#include "mha/decode.hpp"
#include "options/terminal.hpp"
#include "options/timing.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {
namespace {

const char* kGenerateAbout =
    "A trained language model continues a prompt, one piece at a time, with a KV cache:\n"
    "the prompt is read once (the prefill) and every layer keeps its K and V rows; each new\n"
    "piece then computes only its own row and attends over the cache. Beside it the whole\n"
    "sequence is recomputed, as without a cache, and both are timed.";
const char* kGenerateFooter =
    "The text streams to standard output, then a table per step: the position of the new\n"
    "piece, the time and FLOPs of the pass that chose it with the cache and without, and the\n"
    "cache's size (2 x layers x kv_heads x head_dim x pieces x 4 bytes). Notes go to standard\n"
    "error. Without --temperature and --top-k the likeliest piece is taken (greedy).\n"
    "Exit status: 0 ok, 1 runtime error (files), 2 usage error (flags, a model that is not\n"
    "a language model).\n\n"
    "  mhaviz generate --model mhaviz-small --prompt \"고양이가\" --tokens 40\n"
    "  mhaviz generate --prompt \"The cat\" --temperature 0.8 --top-k 40 --seed 7 --json\n"
    "  mhaviz generate --prompt \"할머니께서\" --no-repeat 4";

constexpr long long kBig = 1LL << 30;

struct GenerateArgs {
  std::string model = io::kSmallModelArg, prompt;
  int tokens = 40;
  double temperature = 0;
  bool temperature_given = false;
  int top_k = 0;
  std::uint64_t seed = 0;
  int no_repeat = 0;
  int threads = 0;  // 0: the checkpoint's own setting
  bool no_cache = false, json = false;
  bool stop_at_s = false;  // end the text where the model writes <s>
  bool help = false;
  std::string help_text;
};

void DeclareGenerateFlags(CLI::App& app, GenerateArgs& a) {
  const std::string g = "What to generate";
  TextFlag(app, "--model", a.model,
           "a language model from mhaviz train --task text (default mhaviz-small, the\n"
           "shipped one)",
           "--model needs a checkpoint, e.g. --model mhaviz-small.")
      ->transform(ShippedModelName())
      ->type_name("M.npz")
      ->group(g);
  app.add_option("--prompt", a.prompt, "the start of the text (default: none, the model starts from <s>)")
      ->type_name("TEXT")
      ->group(g);
  IntFlag(
      app, "--tokens", -kBig, kBig, [&a](int v) { a.tokens = v; },
      "new pieces to generate (default 40; generation stops at the model's context)",
      [](long long n) {
        return n >= 1 && n <= ModelLimits::kMaxSeq
                   ? std::string()
                   : "--tokens = " + std::to_string(n) + " asks for " + (n < 1 ? "no" : "too many") +
                         " new pieces: give 1 to " + std::to_string(ModelLimits::kMaxSeq) +
                         " (no model reads more; mhaviz-small's context is 64 pieces, prompt included). Try 40.";
      })
      ->group(g);
  DecimalFlag(
      app, "--temperature",
      [&a](double t) {
        a.temperature = t;
        a.temperature_given = true;
      },
      "sample from softmax(logits / T): below 1 sharper, above 1 flatter (default: greedy,\n"
      "the likeliest piece)",
      "0.8",
      [](double t, const std::string& typed) {
        return std::isfinite(t) && t > 0
                   ? std::string()
                   : "--temperature = " + typed +
                         " cannot divide the logits: it must be a positive number (0.8 sharpens the next piece's "
                         "distribution, 1.5 flattens it). For the likeliest piece every time, leave --temperature out.";
      })
      ->type_name("T")
      ->group(g);
  IntFlag(
      app, "--top-k", -kBig, kBig, [&a](int v) { a.top_k = v; },
      "sample only among the K likeliest pieces (with --temperature, or at T = 1)",
      [](long long n) {
        return n >= 1 && n <= ModelLimits::kMaxVocab
                   ? std::string()
                   : "--top-k = " + std::to_string(n) +
                         " keeps no piece or more than any vocabulary has: give 1 (greedy) up to the model's "
                         "vocabulary size (4000 for mhaviz-small). Try 40.";
      })
      ->type_name("K")
      ->group(g);
  SeedFlag(
      app, "--seed", [&a](std::uint64_t v) { a.seed = v; },
      "seed of the draws with --temperature or --top-k (default 0): the same seed, the same text")
      ->group(g);
  IntFlag(
      app, "--no-repeat", -kBig, kBig, [&a](int v) { a.no_repeat = v; },
      "never write a run of N pieces the text already has (n-gram blocking: such a piece\n"
      "gets probability 0); 3 or 4 keep a small model out of loops (default 0: off)",
      [](long long n) {
        return n >= 0 && n <= kMaxNoRepeatNgram
                   ? std::string()
                   : "--no-repeat = " + std::to_string(n) + " is outside 0 to " + std::to_string(kMaxNoRepeatNgram) +
                         ": it is the length of the runs of pieces that may not come back (0 turns it off). Try 3 "
                         "or 4.";
      })
      ->type_name("N")
      ->group(g);
  app.add_flag("--stop-at-s", a.stop_at_s,
               "stop once the model writes <s>: in its training text <s> starts a new paragraph, often\n"
               "in the other language, so the continuation of this text ends there")
      ->group(g);
  app.add_flag("--no-cache", a.no_cache,
               "generate by recomputing the whole sequence for every piece (no KV cache): the\n"
               "same text, slower")
      ->group(g);
  ThreadsFlag(
      app, [&a](int v) { a.threads = v; },
      "CPU threads of the prefill and of the full recomputation (default: the checkpoint's)",
      /*every_core_at_zero=*/false)
      ->group(g);
  app.add_flag("--json", a.json,
               "print one JSON object (text, pieces, ids, every step's times and FLOPs, the\n"
               "cache's shape and bytes) instead of the streamed text and table")
      ->group(kOutputGroup);
}

GenerateArgs ParseGenerateArgs(const std::vector<std::string>& argv) {
  GenerateArgs a = ParseCommandArgs(
      "generate", kGenerateAbout, kGenerateFooter, DeclareGenerateFlags, argv, [](const std::string& word) {
        return "'" + TerminalSafe(word) + "' is not a flag: put the text after --prompt, e.g. --prompt \"" +
               TerminalSafe(word) + "\".";
      });
  if (a.help) return a;
  if (a.model == io::kSmallModelArg) {  // the default, which no transform has seen
    const std::string error = ShippedModelName()(a.model);
    if (!error.empty()) throw UsageError(error);
  }
  return a;
}

// The text so far, printed as it grows. A character spelled in byte pieces decodes
// to U+FFFD until its last byte arrives, so a trailing U+FFFD waits.
class TextStream {
 public:
  TextStream(const lm::Tokenizer& tok, bool on) : tok_(tok), on_(on) {}
  void Update(const std::vector<int>& ids, bool last) {
    if (!on_) return;
    const std::string t = tok_.Decode(ids);
    static const std::string kReplacement = "\xEF\xBF\xBD";
    std::size_t stable = t.size();
    while (!last && stable >= 3 && t.compare(stable - 3, 3, kReplacement) == 0) stable -= 3;
    if (stable <= printed_.size() || t.compare(0, printed_.size(), printed_) != 0) return;
    std::cout << TerminalSafe(t.substr(printed_.size(), stable - printed_.size()), true) << std::flush;
    printed_ = t.substr(0, stable);
  }

 private:
  const lm::Tokenizer& tok_;
  bool on_;
  std::string printed_;
};

// "generating: piece 12 of 40" on stderr, only where someone watches it and the text
// is not already streaming onto the same screen.
class Progress {
 public:
  Progress(int total, bool text_on_screen)
      : total_(total), on_(isatty(fileno(stderr)) != 0 && !(text_on_screen && isatty(fileno(stdout)) != 0)) {}
  void Show(int done) {
    if (on_) std::fprintf(stderr, "\rgenerating: piece %d of %d", done, total_);
  }
  void Clear() {
    if (on_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  int total_;
  bool on_;
};

// A time, or "-" where none was measured (negative).
std::string Ms(double v) { return v < 0 ? "-" : Fixed(v, 3); }

void PrintTable(const std::vector<lm::GeneratedPiece>& steps, bool cached) {
  std::cout << "\nper step: the pass that chose each new piece (wall-clock ms; FLOPs of its matrix products)\n";
  std::cout << PadLeft("pos", 4) << "  " << Pad("piece", 14, 0) << PadLeft(cached ? "cached ms" : "", 10)
            << PadLeft("full ms", 10) << PadLeft("cached FLOPs", 15) << PadLeft("full FLOPs", 15) << "\n";
  for (const lm::GeneratedPiece& r : steps)
    std::cout << PadLeft(std::to_string(r.position), 4) << "  " << Pad(TerminalToken(r.piece, 12), 14, 0)
              << PadLeft(cached ? Ms(r.ms_cached) : "", 10) << PadLeft(Ms(r.ms_full), 10)
              << PadLeft(Thousands(static_cast<long long>(r.flops.cached)), 15)
              << PadLeft(Thousands(static_cast<long long>(r.flops.full)), 15) << "\n";
}

nlohmann::json StepsJson(const std::vector<lm::GeneratedPiece>& steps) {
  nlohmann::json a = nlohmann::json::array();
  auto num = [](double v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
  for (const lm::GeneratedPiece& r : steps)
    a.push_back({{"position", r.position},
                 {"id", r.id},
                 {"piece", r.piece},
                 {"ms_cached", num(r.ms_cached)},
                 {"ms_full", r.ms_full},
                 {"cpu_ms_cached", num(r.cpu_cached)},
                 {"cpu_ms_full", r.cpu_full},
                 {"flops_cached", r.flops.cached},
                 {"flops_full", r.flops.full},
                 {"max_logit_diff", num(r.logit_diff)},
                 {"blocked", r.blocked}});
  return a;
}

// "the task 'offsets'" from a checkpoint's task JSON, or "no task".
std::string TaskName(const std::string& task_json) {
  const nlohmann::json t = nlohmann::json::parse(task_json, nullptr, false);
  if (t.is_object() && t.contains("name") && t["name"].is_string())
    return "the task '" + TerminalSafe(t["name"].get<std::string>()) + "'";
  return "no text task";
}

int Generate(const GenerateArgs& a) {
  Model model = io::LoadModel(a.model);
  if (!lm::IsLanguageModel(model.cfg))
    throw UsageError("'" + a.model + "' is not a language model: it was trained on " + TaskName(model.cfg.task) +
                     ", whose tokens are not text, so there is nothing to continue a prompt with. Give a checkpoint "
                     "from mhaviz train --task text, such as --model mhaviz-small.");
  if (a.threads > 0) model.cfg.layer.threads = a.threads;
  const lm::LanguageModel lm = lm::WrapLanguageModel(std::move(model), "", a.model);
  const ModelConfig& cfg = lm.model.cfg;
  const int vocab = cfg.vocab_size(), context = cfg.max_seq;
  if (a.top_k > vocab)
    throw UsageError("--top-k = " + std::to_string(a.top_k) + " is more than the model's " + std::to_string(vocab) +
                     " pieces: give 1 to " + std::to_string(vocab) + ". Try 40.");
  Sampling sampling;
  sampling.temperature = a.temperature_given ? a.temperature : a.top_k > 0 ? 1.0 : 0.0;
  sampling.top_k = a.top_k;
  sampling.seed = a.seed;
  sampling.no_repeat_ngram = a.no_repeat;
  CheckSampling(sampling, vocab);

  lm::CheckCanGenerate(lm);  // a checkpoint's limit, not the prompt's
  std::vector<int> prompt_ids;
  std::string cut;
  try {
    prompt_ids = lm::PromptIds(lm, a.prompt, &cut);
  } catch (const Error& e) {
    throw UsageError(std::string("--prompt: ") + e.what());
  }
  std::vector<std::string> notes;
  if (!cut.empty()) notes.push_back(cut);
  const bool cached = !a.no_cache;
  // Refuses a model that is not causal, before anything is printed.
  lm::Generation gen(lm, prompt_ids, sampling, cached);
  for (const std::string& n : notes) std::cerr << "mhaviz generate: note: " << TerminalSafe(n) << "\n";

  TextStream stream(lm.tokenizer, !a.json);
  Progress progress(a.tokens, !a.json);
  stream.Update(gen.ids(), false);
  std::string stop;
  double worst_diff = 0;
  for (int j = 0; j < a.tokens; ++j) {
    if (gen.AtContext()) {
      stop = "stopped at the model's context: it reads at most " + std::to_string(context) +
             " pieces (max_seq), and the text has " + std::to_string(gen.ids().size()) + " with <s>; " +
             std::to_string(j) + " of the " + std::to_string(a.tokens) + " pieces asked for were generated.";
      break;
    }
    worst_diff = std::max(worst_diff, gen.Next().logit_diff);
    stream.Update(gen.ids(), false);
    progress.Show(j + 1);
    if (a.stop_at_s && gen.EndedText() && j + 1 < a.tokens) {
      stop = "stopped at <s> (--stop-at-s): the model ended this text and would start a new one; " +
             std::to_string(j + 1) + " of the " + std::to_string(a.tokens) + " pieces asked for were generated.";
      break;
    }
  }
  progress.Clear();
  stream.Update(gen.ids(), true);
  if (!stop.empty()) std::cerr << (a.json ? "" : "\n") << "mhaviz generate: note: " << stop << "\n";

  const Config lc = cfg.LayerConfig();
  const std::vector<int>& ids = gen.ids();
  const std::vector<lm::GeneratedPiece>& steps = gen.steps();
  const int read = gen.CacheRows();
  const std::int64_t bytes = gen.CacheBytes();
  const std::vector<int> generated(ids.begin() + static_cast<std::ptrdiff_t>(prompt_ids.size()), ids.end());
  if (a.json) {
    nlohmann::json j;
    j["model"] = lm.path;
    j["prompt"] = a.prompt;
    j["prompt_ids"] = prompt_ids;
    j["prompt_pieces"] = lm.tokenizer.Pieces(prompt_ids);
    j["ids"] = generated;
    j["pieces"] = lm.tokenizer.Pieces(generated);
    j["text"] = lm.tokenizer.Decode(ids);
    j["generated_text"] = lm.tokenizer.Decode(generated);
    j["cache_used"] = cached;
    j["sampling"] = {{"greedy", sampling.temperature == 0},
                     {"temperature", sampling.temperature},
                     {"top_k", sampling.top_k},
                     {"seed", sampling.seed},
                     {"no_repeat_ngram", sampling.no_repeat_ngram}};
    j["context"] = context;
    j["cache"] = {{"layers", cfg.num_layers},
                  {"kv_heads", lc.kv_heads()},
                  {"n", read},
                  {"head_dim", lc.head_dim()},
                  {"bytes", bytes}};
    j["max_logit_diff"] = cached && !steps.empty() ? nlohmann::json(worst_diff) : nlohmann::json(nullptr);
    j["steps"] = StepsJson(steps);
    nlohmann::json n = notes;
    if (!stop.empty()) n.push_back(stop);
    j["notices"] = n;
    // A path need not be UTF-8; JSON text must be (U+FFFD stands in for a bad byte).
    std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  std::cout << "\n";
  PrintTable(steps, cached);
  std::cout << "\nmodel " << TerminalSafe(lm.path) << ": " << cfg.num_layers << " layers, num_heads = " << lc.num_heads
            << ", kv_heads = " << lc.kv_heads() << ", head_dim = " << lc.head_dim() << ", context " << context
            << " pieces; "
            << (sampling.temperature == 0
                    ? std::string("greedy")
                    : "sampled at temperature " + Fixed(sampling.temperature, 3) +
                          (sampling.top_k > 0 ? ", top-k " + std::to_string(sampling.top_k) : std::string()) +
                          ", seed " + std::to_string(sampling.seed))
            << (sampling.no_repeat_ngram > 0
                    ? "; no run of " + std::to_string(sampling.no_repeat_ngram) + " pieces repeated (--no-repeat)"
                    : std::string())
            << (cached ? "" : "; without the cache (--no-cache)") << "\n";
  std::cout << "prompt " << prompt_ids.size() << (prompt_ids.size() == 1 ? " piece" : " pieces")
            << " (with <s>), generated " << generated.size() << "\n";
  std::cout << "KV cache: 2 x " << cfg.num_layers << " layers x " << lc.kv_heads() << " kv_heads x " << lc.head_dim()
            << " head_dim x " << read << " pieces x 4 bytes = " << Thousands(bytes) << " bytes"
            << (cached ? "" : " (what it would hold)") << "\n";
  if (!steps.empty()) {
    const lm::GeneratedPiece& last = steps.back();
    std::cout << "last step: " << Thousands(static_cast<long long>(last.flops.cached)) << " FLOPs with the cache, "
              << Thousands(static_cast<long long>(last.flops.full)) << " without ("
              << Fixed(last.flops.full / last.flops.cached, 1) << "x)\n";
    if (cached) {
      char diff[64];
      std::snprintf(diff, sizeof diff, "%.3g", worst_diff);
      std::cout << "largest |logit difference| between the cached step and the full recomputation: " << diff << "\n";
    }
  }
  return 0;
}

}  // namespace

int GenerateCommand(const std::vector<std::string>& args) {
  return Guard("generate", [&] {
    const GenerateArgs a = ParseGenerateArgs(args);
    if (a.help) return std::cout << a.help_text, 0;
    return Generate(a);
  });
}

}  // namespace mha::cli
