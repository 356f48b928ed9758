// The flags that pick a trained model instead of a sentence, declared once for
// `trace`, `export` and `gui` (what they load: lm/model_trace.hpp).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace mha::options {

// The flags that pick a trained model's layer instead of a sentence, declared once
// for `trace`, `export` and `gui`: --model M.npz, --tokens IDS, --example N, --layer i.
struct ModelFlags {
  std::string model, tokens;
  int example = 0, layer = 0;
  int top_k = 0;  // trace: the likeliest next pieces per position (language models)
};
void AddModelFlags(CLI::App& app, ModelFlags& m);
// --model M.npz alone, with mhaviz-small standing for the shipped language model.
CLI::Option* ModelPathFlag(CLI::App& app, std::string& path, const std::string& help);
// --model's transform: "mhaviz-small" (unless a file of that name is here) becomes the
// shipped checkpoint's path; an error if it is not installed.
CLI::Validator ShippedModelName();
// After parsing: with --model, any flag of argv outside `allowed` (which sets the input
// or the configuration the checkpoint fixes) is a usage error; without it, --tokens,
// --example and --layer are.
void CheckModelFlags(const std::vector<std::string>& argv, const ModelFlags& m,
                     const std::vector<std::string>& allowed);

}  // namespace mha::options
