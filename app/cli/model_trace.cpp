#include "model_trace.hpp"

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "cli/ablate_apply.hpp"
#include "io/assets.hpp"
#include "io/checkpoint.hpp"
#include "options/flags.hpp"

namespace mha::cli {

void HeldOutBatch(const TaskSpec& t, std::uint64_t seed, std::uint64_t index, int batch, Batch& out) {
  MakeBatch(t, seed + 1, index, batch, out);
}

std::vector<int> ParseTokenIds(const std::string& text) {
  std::vector<int> ids;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == ',' || text[i] == '\t' || text[i] == '\n') {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != ',' && text[j] != '\t' && text[j] != '\n') ++j;
    const std::string word = text.substr(i, j - i);
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(word.c_str(), &end, 10);
    if (end != word.c_str() + word.size() || errno == ERANGE || v < -(1LL << 30) || v > (1LL << 30))
      throw Error("--tokens takes token ids, whole numbers separated by spaces, such as \"3 1 4 1 5\"; '" + word +
                  "' is not one. The ids index the model's vocabulary (its config's 'vocab').");
    ids.push_back(static_cast<int>(v));
    if (ids.size() > static_cast<std::size_t>(ModelLimits::kMaxSeq))
      throw Error("--tokens has more than " + std::to_string(ModelLimits::kMaxSeq) + " ids, over any model's max_seq.");
    i = j;
  }
  if (ids.empty()) throw Error("--tokens is empty; give token ids such as \"3 1 4 1 5\".");
  return ids;
}

LoadedModelTrace LoadForTrace(const std::string& path, const std::string& tokens_text, int example, int layer,
                              const RunOptions* run) {
  LoadedModelTrace r;
  r.model = io::LoadModel(path);
  // How to compute, not what: the checkpoint's numbers stay (Flash keeps no weights).
  if (run) r.model.cfg.layer.attention = run->cfg.attention;
  const ModelConfig& c = r.model.cfg;
  if (layer < 0 || layer >= c.num_layers)
    throw Error("--layer " + std::to_string(layer) + " does not exist: the model has " + std::to_string(c.num_layers) +
                " layer" + (c.num_layers == 1 ? "" : "s") + " (0 to " + std::to_string(c.num_layers - 1) + ").");
  r.layer = layer;
  std::vector<int> tokens;
  if (!tokens_text.empty()) {
    tokens = ParseTokenIds(tokens_text);
  } else {
    if (c.task.empty())
      throw Error("'" + path + "' was not trained on a task, so it has no examples; give --tokens \"3 1 4 ...\".");
    if (example < 0) throw Error("--example " + std::to_string(example) + " must be 0 or more.");
    if (io::IsTextTask(c.task))
      throw Error("'" + path + "' is a language model: give a sentence with --sentence \"...\" (trace), or its "
                  "piece ids with --tokens.");
    const TaskSpec t = io::ParseTaskJson(c.task, "'" + path + "'");
    Batch b;
    HeldOutBatch(t, c.layer.seed, static_cast<std::uint64_t>(example), 1, b);
    tokens.assign(b.tokens.begin(), b.tokens.end());
  }
  const std::vector<HeadAblation> ablate = run ? AblateModel(*run, path, r.model, tokens) : std::vector<HeadAblation>();
  // checks the ids against the vocabulary and max_seq
  RunModel(r.model, tokens, r.trace, ablate.empty() ? nullptr : &ablate);
  return r;
}

CLI::Validator ShippedModelName() {
  return CLI::Validator(
      [](std::string& v) {
        // The shipped model by name, unless a file of that name is here.
        std::error_code ec;
        if (v != io::kSmallModelArg || std::filesystem::exists(v, ec)) return std::string();
        const std::string path = io::FindAsset("models", io::kSmallModelFile);
        if (path.empty())
          return std::string("--model mhaviz-small: ") + io::kSmallModelFile +
                 " is not in assets/models here, beside the program, or in its install's share/mhaviz/models. "
                 "Give the checkpoint's path, or reinstall mhaviz.";
        v = path;
        return std::string();
      },
      "");
}

CLI::Option* ModelPathFlag(CLI::App& app, std::string& path, const std::string& help) {
  return TextFlag(app, "--model", path, help, "--model needs a checkpoint, e.g. --model model.npz.")
      ->transform(ShippedModelName())
      ->type_name("M.npz");
}

void AddModelSourceFlags(CLI::App& app, ModelSource& m) {
  const std::string g = "A trained model (mhaviz train)";
  ModelPathFlag(app, m.model,
                "a checkpoint from mhaviz train: trace its layer --layer instead of a sentence;\n"
                "mhaviz-small: the shipped language model (assets/models/mhaviz-small.npz)")
      ->group(g);
  TextFlag(app, "--tokens", m.tokens, "token ids in the model's vocabulary, e.g. \"3 1 4 1 5\"",
           "--tokens needs ids, e.g. --tokens \"3 1 4 1 5\".")
      ->type_name("IDS")
      ->group(g);
  IntFlag(app, "--example", 0, 1 << 20, [&m](int v) { m.example = v; },
          "held-out example N of the model's task (default 0; when --tokens is not given)")
      ->group(g);
  IntFlag(app, "--layer", 0, ModelLimits::kMaxLayers - 1, [&m](int v) { m.layer = v; },
          "which layer to show (default 0)")
      ->group(g);
}

// With --model the checkpoint fixes the input and the configuration: any flag that
// would set them is a contradiction, refused rather than silently ignored.
void CheckModelSourceFlags(const std::vector<std::string>& argv, const ModelSource& m,
                           const std::vector<std::string>& allowed) {
  if (m.model.empty()) {
    if (!m.tokens.empty() || m.layer != 0 || m.example != 0 || m.top_k != 0)
      throw UsageError("--tokens, --example, --layer and --top-k choose what a trained model runs on: give the checkpoint "
                       "with --model M.npz.");
    return;
  }
  static const char* const kAllowed[] = {"--model", "--tokens",      "--example", "--layer",
                                         "--help",  "-h",            "--ablate",  "--ablate-mode"};
  for (const std::string& a : argv) {
    if (a.size() < 2 || a[0] != '-' || (a[1] != '-' && a.size() > 2 && a != "-q" && a != "-h")) continue;
    const std::string flag = a.substr(0, a.find('='));
    if (flag == "-" || flag.find_first_not_of("-0123456789.e") == std::string::npos) continue;  // a value
    bool ok = false;
    for (const char* k : kAllowed) ok |= flag == k;
    for (const std::string& k : allowed) ok |= flag == k;
    if (!ok)
      throw UsageError(flag + " cannot be used with --model: the checkpoint fixes the model's configuration and "
                       "its vocabulary. Give the input as --tokens \"3 1 4\" or --example N, and the layer as --layer i.");
  }
}


}  // namespace mha::cli
