// `mhaviz patch --model M --clean S1 --corrupt S2 [--target PIECE] [--layer-only] [--json]`:
// activation patching (app/lm/patching.hpp). The corrupt sentence runs with one head's
// context taken from the clean run, and the table says how much of the clean run's
// log-probability of the target piece each head restores.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/lm_trace.hpp"
#include "commands.hpp"
#include "lm/patching.hpp"
#include "options/model_flags.hpp"
#include "options/terminal.hpp"

namespace mha::cli {
namespace {

struct PatchArgs {
  std::string model, clean, corrupt, target;
  bool clean_given = false, corrupt_given = false, target_given = false;
  bool layer_only = false, json = false;
};

const char* const kAbout =
    "Activation patching: run the corrupt sentence with one head's context (before W_O) taken from the clean "
    "sentence's run, and measure how much of the clean run's log-probability of the target piece (after the "
    "last position) that head restores: recovered = (patched - corrupt) / (clean - corrupt). Every head alone, "
    "at every position together and at each position alone, and every layer's heads together.";
const char* const kFooter =
    "\nExample:\n"
    "  mhaviz patch --model mhaviz-small --clean \"할머니께서 방에서\" --corrupt \"형이 방에서\" --target 주무\n"
    "The two sentences need the same number of pieces (trace --model M --sentence S lists them).\n"
    "Exit status: 0 ok, 1 runtime error, 2 usage error (flags, sentences, target).";

void Declare(CLI::App& app, PatchArgs& a) {
  ModelPathFlag(app, a.model, "the language model: a checkpoint from mhaviz train --task text, or mhaviz-small");
  auto text = [&app](const char* flag, std::string& v, bool& given, const char* help) {
    app.add_option_function<std::string>(
           flag,
           [&v, &given](const std::string& s) {
             v = s;
             given = true;
           },
           help)
        ->type_name("S");
  };
  text("--clean", a.clean, a.clean_given, "the sentence whose heads' contexts are patched in");
  text("--corrupt", a.corrupt, a.corrupt_given, "the sentence that runs with them (as many pieces as --clean)");
  text("--target", a.target, a.target_given,
       "the piece whose log-probability after the last position is measured, as the vocabulary spells it (▁ for "
       "a word start is added if missing); default: the clean run's likeliest next piece");
  app.get_option("--target")->type_name("PIECE");
  app.add_flag("--layer-only", a.layer_only,
               "only the layer x head grid (every position patched at once), not each position alone");
  app.add_flag("--json", a.json, "print the result as one JSON object");
}

std::string Fixed(double v, int digits = 3) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

nlohmann::json ReportJson(const PatchArgs& a, const lm::PatchReport& r) {
  auto side = [](const lm::PatchSide& s) {
    return nlohmann::json{{"sentence", s.sentence}, {"ids", s.ids}, {"pieces", s.pieces}, {"logp", s.logp}};
  };
  nlohmann::json heads = nlohmann::json::array();
  for (const lm::HeadPatch& h : r.heads) {
    nlohmann::json one{{"layer", h.head.layer},
                       {"head", h.head.head},
                       {"name", HeadName(h.head)},
                       {"logp", h.logp},
                       {"recovered", h.recovered}};
    if (!a.layer_only) {
      one["positions"] = h.recovered_at;
      one["positions_logp"] = h.logp_at;
    }
    heads.push_back(one);
  }
  nlohmann::json layers = nlohmann::json::array();
  for (const lm::LayerPatch& l : r.layers)
    layers.push_back({{"layer", l.layer}, {"logp", l.logp}, {"recovered", l.recovered}});
  return {{"model", a.model},
          {"clean", side(r.clean)},
          {"corrupt", side(r.corrupt)},
          {"target", {{"id", r.target}, {"piece", r.target_piece}, {"default", r.target_default}}},
          {"recovered", "(patched - corrupt) / (clean - corrupt), of log P(target) after the last position"},
          {"heads", heads},
          {"layers", layers}};
}

void PrintReport(const PatchArgs& a, const lm::PatchReport& r) {
  std::cout << "clean   (" << r.clean.pieces.size() << " pieces):";
  for (const auto& p : r.clean.pieces) std::cout << " [" << TerminalToken(p) << "]";
  std::cout << "\ncorrupt (" << r.corrupt.pieces.size() << " pieces):";
  for (const auto& p : r.corrupt.pieces) std::cout << " [" << TerminalToken(p) << "]";
  std::cout << "\ntarget [" << TerminalToken(r.target_piece) << "]"
            << (r.target_default ? " (the clean run's likeliest next piece)" : "")
            << ": log P = " << Fixed(r.clean.logp) << " clean, " << Fixed(r.corrupt.logp) << " corrupt\n\n"
            << "recovered = (patched - corrupt) / (clean - corrupt): 1 restores the clean run's log-probability, "
               "0 nothing.\n\n";
  const int H = r.heads.empty() ? 0 : static_cast<int>(r.heads.size() / r.layers.size());
  std::cout << "layer x head (every position patched):\n       ";
  for (int h = 0; h < H; ++h) std::cout << "  head " << h << " ";
  std::cout << "  all heads\n";
  for (const lm::LayerPatch& l : r.layers) {
    std::cout << "layer " << l.layer;
    for (int h = 0; h < H; ++h) {
      char cell[32];
      std::snprintf(cell, sizeof cell, " %8.3f", r.heads[static_cast<std::size_t>(l.layer * H + h)].recovered);
      std::cout << cell;
    }
    std::cout << "  " << Fixed(l.recovered) << "\n";
  }
  if (a.layer_only) return;
  std::cout << "\nhead x position (one position patched at a time):\n     ";
  for (const auto& p : r.corrupt.pieces) std::cout << " [" << TerminalToken(p) << "]";
  std::cout << "\n";
  for (const lm::HeadPatch& h : r.heads) {
    std::cout << HeadName(h.head) << " ";
    for (double v : h.recovered_at) std::cout << " " << Fixed(v, 2);
    std::cout << "\n";
  }
}

}  // namespace

int PatchCommand(const std::vector<std::string>& args) {
  return Guard("patch", [&] {
    PatchArgs a;
    CLI::App app{kAbout, "mhaviz patch"};
    app.footer(kFooter);
    Declare(app, a);
    if (ParseFlags(app, "patch", args)) {
      std::cout << app.help();
      return 0;
    }
    if (a.model.empty()) throw UsageError("--model is required: give a language model, e.g. --model mhaviz-small.");
    if (!a.clean_given || !a.corrupt_given)
      throw UsageError(
          "patch needs two sentences of as many pieces: --clean \"할머니께서 방에서\" --corrupt \"형이 방에서\".");
    if (a.target_given && a.target.empty()) throw UsageError("--target is empty: give a piece, e.g. --target 주무.");
    const lm::LanguageModel lm = LoadLanguageModelArg(a.model, "patch");
    lm::PatchReport r;
    try {
      r = lm::PatchEveryHead(lm, a.clean, a.corrupt, a.target, !a.layer_only);
    } catch (const Error& e) {
      throw UsageError(e.what());  // the sentences or the target: the input must change
    }
    if (a.json) {
      std::cout << ReportJson(a, r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
      return 0;
    }
    PrintReport(a, r);
    return 0;
  });
}

}  // namespace mha::cli
