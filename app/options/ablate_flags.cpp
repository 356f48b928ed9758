#include "options/ablate_flags.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "options/flags.hpp"
#include "options/run_options.hpp"
#include "options/terminal.hpp"

namespace mha::options {
namespace {

const char* const kHeadSyntax =
    "Name heads as LAYER.HEAD (1.3 is layer 1, head 3; both count from 0) or as the Model view names them (L1H3), "
    "separated by commas: 0.1,1.3.";

// A whole number of at most 6 digits, or -1.
int SmallNumber(const std::string& s) {
  if (s.empty() || s.size() > 6) return -1;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  return std::atoi(s.c_str());
}

// "1.3" or "L1H3" (either case); false if it is neither.
bool ParseHead(const std::string& item, HeadRef& h) {
  std::string a, b;
  const std::size_t dot = item.find('.');
  if (dot != std::string::npos) {
    a = item.substr(0, dot);
    b = item.substr(dot + 1);
  } else if (item.size() >= 4 && (item[0] == 'L' || item[0] == 'l')) {
    const std::size_t hpos = item.find_first_of("Hh", 1);
    if (hpos == std::string::npos) return false;
    a = item.substr(1, hpos - 1);
    b = item.substr(hpos + 1);
  } else {
    return false;
  }
  h.layer = SmallNumber(a);
  h.head = SmallNumber(b);
  return h.layer >= 0 && h.head >= 0;
}

}  // namespace

std::vector<HeadRef> ParseHeadList(const std::string& flag, const std::string& text) {
  std::vector<HeadRef> heads;
  if (text.find_first_not_of(" \t") == std::string::npos)
    throw UsageError(flag + " is empty: name at least one head. " + kHeadSyntax);
  std::size_t i = 0;
  while (true) {
    const std::size_t j = text.find(',', i);
    std::string item = text.substr(i, j == std::string::npos ? std::string::npos : j - i);
    const std::size_t a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
    item = a == std::string::npos ? std::string() : item.substr(a, b - a + 1);
    HeadRef h;
    if (item.empty())
      throw UsageError(flag + " '" + TerminalSafe(text) + "' has an empty item (two commas, or one at an end). " +
                       kHeadSyntax);
    if (!ParseHead(item, h))
      throw UsageError(
          flag + ": '" + TerminalSafe(item) + "' is not a head. " + kHeadSyntax +
          (item.find('-') != std::string::npos ? " Ranges such as 1-3 are not taken: list each head." : ""));
    for (const HeadRef& o : heads)
      if (o == h) throw UsageError(flag + ": head " + HeadName(h) + " is named twice; name each head once.");
    heads.push_back(h);
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return heads;
}

void CheckHeadsFit(const std::string& flag, const std::vector<HeadRef>& heads, int num_layers, int num_heads,
                   const std::string& model_name, bool allow_all) {
  const std::string range = model_name + " has " + std::to_string(num_layers) + " layer" +
                            (num_layers == 1 ? "" : "s") + " (0 to " + std::to_string(num_layers - 1) + ") of " +
                            std::to_string(num_heads) + " head" + (num_heads == 1 ? "" : "s") + " (0 to " +
                            std::to_string(num_heads - 1) + "): heads L0H0 (0.0) to L" +
                            std::to_string(num_layers - 1) + "H" + std::to_string(num_heads - 1) + " (" +
                            std::to_string(num_layers - 1) + "." + std::to_string(num_heads - 1) + ").";
  for (const HeadRef& h : heads) {
    if (h.layer >= num_layers)
      throw UsageError(flag + ": layer " + std::to_string(h.layer) + " (in " + HeadName(h) + ") does not exist; " +
                       range);
    if (h.head >= num_heads)
      throw UsageError(flag + ": head " + std::to_string(h.head) + " (in " + HeadName(h) + ") does not exist; " +
                       range);
  }
  const int total = num_layers * num_heads;
  if (!allow_all && total > 1 && static_cast<int>(heads.size()) == total)
    throw UsageError(flag + " names all " + std::to_string(total) + " heads of " + model_name +
                     ": with every head out, no token can read any other and only the residual path is left. "
                     "Leave at least one head in; the importance table (ablate without --heads) measures each "
                     "layer with all its heads out.");
}

AblationMode ParseAblationMode(const std::string& flag, const std::string& text) {
  if (text == "zero") return AblationMode::Zero;
  if (text == "mean") return AblationMode::Mean;
  throw UsageError(flag +
                   " must be 'zero' (the head's context is set to 0 before W_O) or 'mean' (it is replaced "
                   "by its mean over a reference text); got '" +
                   TerminalSafe(text) + "'.");
}

void AddAblateFlags(CLI::App& app, RunOptions& o) {
  app.add_option_function<std::string>(
         "--ablate",
         [&o](const std::string& v) {
           o.ablate = ParseHeadList("--ablate", v);
           o.ablate_given = true;
         },
         "knock heads out before W_O: LAYER.HEAD or L1H3, comma-separated (e.g. 0.1,1.3);\n"
         "every tensor after concat is then the ablated model's")
      ->type_name("HEADS")
      ->group(kComputeGroup)
      ->check(CLI::Validator([](std::string& v) { return HeadListError("--ablate", v); }, ""));
  app.add_option_function<std::string>(
         "--ablate-mode", [&o](const std::string& v) { o.ablate_mode = ParseAblationMode("--ablate-mode", v); },
         "zero (default): the head's context becomes 0 | mean: its mean over a reference text\n"
         "(a language model's validation text, a task model's held-out examples, else the sentence)")
      ->type_name("zero|mean")
      ->group(kComputeGroup)
      ->check(CLI::Validator(
          [](std::string& v) {
            try {
              ParseAblationMode("--ablate-mode", v);
              return std::string();
            } catch (const UsageError& e) {
              return std::string(e.what());
            }
          },
          ""));
}

std::string HeadListError(const std::string& flag, const std::string& text) {
  try {
    ParseHeadList(flag, text);
    return "";
  } catch (const UsageError& e) {
    return e.what();
  }
}

std::string ResidualOnlyNote(const std::vector<HeadRef>& heads, int num_layers, int num_heads) {
  if (static_cast<int>(heads.size()) != num_layers * num_heads) return "";
  return "every head of the model is knocked out: no token reads any other, so the model has only its residual "
         "path (each position's own embedding through the layers' norms and feed-forward networks).";
}

}  // namespace mha::options
