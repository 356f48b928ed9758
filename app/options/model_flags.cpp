#include "options/model_flags.hpp"

#include <filesystem>

#include "io/assets.hpp"
#include "mha/model.hpp"
#include "options/flags.hpp"

namespace mha::options {

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

void AddModelFlags(CLI::App& app, ModelFlags& m) {
  const std::string g = "A trained model (mhaviz train)";
  ModelPathFlag(app, m.model,
                "a checkpoint from mhaviz train: trace its layer --layer instead of a sentence;\n"
                "mhaviz-small: the shipped language model (assets/models/mhaviz-small.npz)")
      ->group(g);
  TextFlag(app, "--tokens", m.tokens, "token ids in the model's vocabulary, e.g. \"3 1 4 1 5\"",
           "--tokens needs ids, e.g. --tokens \"3 1 4 1 5\".")
      ->type_name("IDS")
      ->group(g);
  IntFlag(
      app, "--example", 0, 1 << 20, [&m](int v) { m.example = v; },
      "held-out example N of the model's task (default 0; when --tokens is not given)")
      ->group(g);
  IntFlag(
      app, "--layer", 0, ModelLimits::kMaxLayers - 1, [&m](int v) { m.layer = v; }, "which layer to show (default 0)")
      ->group(g);
}

// With --model the checkpoint fixes the input and the configuration: any flag that
// would set them is a contradiction, refused rather than silently ignored.
void CheckModelFlags(const std::vector<std::string>& argv, const ModelFlags& m,
                     const std::vector<std::string>& allowed) {
  if (m.model.empty()) {
    if (!m.tokens.empty() || m.layer != 0 || m.example != 0 || m.top_k != 0)
      throw UsageError(
          "--tokens, --example, --layer and --top-k choose what a trained model runs on: give the checkpoint "
          "with --model M.npz.");
    return;
  }
  static const char* const kAllowed[] = {"--model", "--tokens", "--example", "--layer",
                                         "--help",  "-h",       "--ablate",  "--ablate-mode"};
  for (const std::string& a : argv) {
    if (a.size() < 2 || a[0] != '-' || (a[1] != '-' && a.size() > 2 && a != "-q" && a != "-h")) continue;
    const std::string flag = a.substr(0, a.find('='));
    if (flag == "-" || flag.find_first_not_of("-0123456789.e") == std::string::npos) continue;  // a value
    bool ok = false;
    for (const char* k : kAllowed) ok |= flag == k;
    for (const std::string& k : allowed) ok |= flag == k;
    if (!ok)
      throw UsageError(
          flag +
          " cannot be used with --model: the checkpoint fixes the model's configuration and "
          "its vocabulary. Give the input as --tokens \"3 1 4\" or --example N, and the layer as --layer i.");
  }
}

}  // namespace mha::options
