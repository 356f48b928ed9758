#include "cli/pairs_cmd.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "cli/lm_trace.hpp"
#include "io/assets.hpp"
#include "io/files.hpp"
#include "lm/ablate_model.hpp"
#include "lm/head_names.hpp"
#include "lm/pairs_table.hpp"
#include "options/ablate_flags.hpp"
#include "options/flags.hpp"
#include "options/model_flags.hpp"
#include "options/table.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {
namespace {

constexpr const char* kPairsFile = "pairs.jsonl";

struct PairsArgs {
  std::string model, pairs_path, ablate, mode = "zero", write_labels;
  int windows = -1;
  bool json = false;
};

// --ablate's heads: every head, each phenomenon's found head and its control, or a list.
std::vector<HeadRef> TableHeads(const std::string& spec, const lm::LanguageModel& lm, const lm::PairsReport& r,
                                const std::string& model) {
  const int L = lm.model.cfg.num_layers, H = lm.model.cfg.layer.num_heads;
  if (spec == "all") return lm::EveryHead(lm);
  std::vector<HeadRef> heads;
  if (spec == "found") {
    for (const lm::PhenomenonScore& p : r.phenomena) {
      heads.push_back({p.best_layer, p.best_head});
      const HeadRef c = lm::ControlHead(r, p);
      if (c.layer >= 0) heads.push_back(c);
    }
  } else {
    heads = ParseHeadList("--ablate", spec);
    CheckHeadsFit("--ablate", heads, L, H, model, /*allow_all=*/true);
  }
  std::sort(heads.begin(), heads.end());
  heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
  return heads;
}

int TableIndex(const lm::KnockoutTable& t, const HeadRef& h) {
  const auto it = std::find(t.heads.begin(), t.heads.end(), h);
  return it == t.heads.end() ? -1 : static_cast<int>(it - t.heads.begin());
}

nlohmann::json ReportJson(const PairsArgs& a, const lm::PairsReport& r, const lm::KnockoutTable* t,
                          const ContextMeans& means) {
  nlohmann::json j{
      {"model", a.model}, {"pairs_file", a.pairs_path}, {"num_layers", r.num_layers}, {"num_heads", r.num_heads}};
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < r.phenomena.size(); ++i) {
    const lm::PhenomenonScore& p = r.phenomena[i];
    nlohmann::json weights = nlohmann::json::array();
    for (int l = 0; l < r.num_layers; ++l) {
      nlohmann::json row = nlohmann::json::array();
      for (int h = 0; h < r.num_heads; ++h) row.push_back(p.mean_weight[static_cast<std::size_t>(l * r.num_heads + h)]);
      weights.push_back(row);
    }
    list.push_back({{"phenomenon", p.phenomenon},
                    {"pairs", p.pairs},
                    {"correct", p.correct},
                    {"accuracy", p.accuracy},
                    {"attention_pairs", p.attention_pairs},
                    {"head", {{"layer", p.best_layer}, {"head", p.best_head}, {"weight", p.best_weight}}},
                    {"uniform", p.uniform},
                    {"weights", weights}});
    if (!t) continue;
    // The found head and its control, where the table knocked them out.
    auto cell = [&](const HeadRef& h) -> nlohmann::json {
      const int k = h.layer < 0 ? -1 : TableIndex(*t, h);
      if (k < 0) return nullptr;
      return {{"layer", h.layer},
              {"head", h.head},
              {"name", HeadName(h)},
              {"accuracy", t->rows[i].cells[static_cast<std::size_t>(k)].accuracy}};
    };
    const nlohmann::json found = cell({p.best_layer, p.best_head}), control = cell(lm::ControlHead(r, p));
    list.back()["knockout"] = {
        {"head", found.is_null()
                     ? found
                     : nlohmann::json{{"layer", found["layer"]}, {"head", found["head"]}, {"name", found["name"]}}},
        {"accuracy_without_head", found.is_null() ? nlohmann::json(nullptr) : found["accuracy"]},
        {"control",
         control.is_null()
             ? control
             : nlohmann::json{{"layer", control["layer"]}, {"head", control["head"]}, {"name", control["name"]}}},
        {"accuracy_without_control", control.is_null() ? nlohmann::json(nullptr) : control["accuracy"]}};
  }
  j["phenomena"] = list;
  if (t) {
    // Every phenomenon's accuracy without each head: does only its own drop?
    nlohmann::json runs = nlohmann::json::array();
    for (std::size_t k = 0; k < t->heads.size(); ++k) {
      nlohmann::json acc = nlohmann::json::array();
      for (const lm::PhenomenonRow& row : t->rows) acc.push_back(row.cells[k].accuracy);
      runs.push_back({{"layer", t->heads[k].layer},
                      {"head", t->heads[k].head},
                      {"name", HeadName(t->heads[k])},
                      {"mode", ToString(t->mode)},
                      {"accuracy", acc}});
    }
    j["knockouts"] = runs;
    j["table"] = lm::TableJson(*t);
    // Mean ablation's replacements, per layer (num_heads, head_dim), so a rebuild can
    // knock the same heads out the same way.
    if (t->mode == AblationMode::Mean) {
      nlohmann::json m = nlohmann::json::array();
      for (const Mat& layer : means) {
        nlohmann::json rows = nlohmann::json::array();
        for (Eigen::Index h = 0; h < layer.rows(); ++h)
          rows.push_back(std::vector<float>(layer.row(h).data(), layer.row(h).data() + layer.cols()));
        m.push_back(rows);
      }
      j["table"]["means"] = m;
    }
  }
  return j;
}

void PrintAttention(const PairsArgs& a, std::size_t count, const lm::PairsReport& r) {
  std::cout << "Minimal pairs: " << count << " from " << a.pairs_path << "\n"
            << "accuracy: how often the good sentence is the likelier one; head: the (layer, head) whose weight "
               "from the deciding position to the cue word is highest on average; uniform: that weight if "
               "attention were spread evenly; of pairs: the pairs whose cue ends before the deciding position "
               "(where a piece joins the cue to the form, the pair counts for accuracy only).\n\n";
  std::cout << Pad("phenomenon", 32) << Pad("pairs", 7) << Pad("accuracy", 10) << Pad("head", 7) << Pad("weight", 8)
            << Pad("uniform", 9) << "of pairs\n";
  for (const lm::PhenomenonScore& p : r.phenomena)
    std::cout << Pad(p.phenomenon, 32) << Pad(std::to_string(p.pairs), 7) << Pad(Fixed(p.accuracy, 3), 10)
              << Pad("L" + std::to_string(p.best_layer) + "H" + std::to_string(p.best_head), 7)
              << Pad(Fixed(p.best_weight, 2), 8) << Pad(Fixed(p.uniform, 2), 9) << p.attention_pairs << "\n";
}

void PrintTable(const lm::KnockoutTable& t) {
  char level[32];
  std::snprintf(level, sizeof level, "%.2g", t.level);
  std::cout << "\nKnock-outs (" << ToString(t.mode) << " ablation, one head at a time): each phenomenon's accuracy "
            << "intact, then without each head. Chance is 0.500; \"band\" is the top of the accuracies a fair coin "
               "reaches over that many pairs with probability 0.99. '*': a drop beyond chance (exact one-sided "
               "McNemar test on the pairs the knock-out flips, p <= "
            << level << " = 0.01 / " << t.heads.size()
            << " heads); '!': such a drop that leaves a learned phenomenon (intact above the band) inside the "
               "band: the head carries it.\n\n";
  std::cout << Pad("phenomenon", 32) << Pad("pairs", 7) << Pad("band", 7) << Pad("intact", 8);
  for (const HeadRef& h : t.heads) std::cout << Pad(HeadName(h), 8);
  std::cout << "\n";
  for (const lm::PhenomenonRow& r : t.rows) {
    std::cout << Pad(r.phenomenon, 32) << Pad(std::to_string(r.pairs), 7) << Pad(Fixed(r.band.hi, 3), 7)
              << Pad(Fixed(r.accuracy, 3), 8);
    for (const lm::KnockoutCell& c : r.cells) {
      const bool carrier = std::find(r.carriers.begin(), r.carriers.end(), c.head) != r.carriers.end();
      std::cout << Pad(Fixed(c.accuracy, 3) + (carrier ? "!" : c.significant ? "*" : ""), 8);
    }
    std::cout << "\n";
  }
  bool any = false;
  for (const lm::PhenomenonRow& r : t.rows) {
    if (r.carriers.empty()) continue;
    std::cout << (any ? "" : "\n") << r.phenomenon << ": carried by";
    for (const HeadRef& h : r.carriers) std::cout << " " << HeadName(h);
    std::cout << (r.sole ? " alone (every other head's knock-out leaves it)" : "") << "\n";
    any = true;
  }
  if (!any) std::cout << "\nNo knock-out takes a learned phenomenon to chance.\n";
}

std::string ResolvePaths(PairsArgs& a) {
  if (a.model.empty()) throw UsageError("--model is required: give a language model, e.g. --model mhaviz-small.");
  if (a.pairs_path.empty()) {
    a.pairs_path = io::FindAsset("corpus", kPairsFile);
    if (a.pairs_path.empty())
      throw UsageError(std::string("no --pairs given and ") + kPairsFile +
                       " is not in assets/corpus: give a pairs file, e.g. --pairs pairs.jsonl "
                       "(scripts/make_teaching_corpus.py writes one).");
  }
  return a.model;
}

void Declare(CLI::App& app, PairsArgs& a) {
  ModelPathFlag(app, a.model,
                "the language model: a checkpoint from mhaviz train --task text, or mhaviz-small (the shipped one)");
  TextFlag(app, "--pairs", a.pairs_path,
           "the pairs, one JSON object a line: phenomenon, good, bad, cue, prefix (default: the shipped "
           "assets/corpus/pairs.jsonl)",
           "--pairs needs a file, e.g. --pairs assets/corpus/pairs.jsonl.")
      ->type_name("FILE");
  TextFlag(app, "--ablate", a.ablate,
           "knock heads out, one at a time, and score every phenomenon without each: all (every head: the "
           "proof table), found (each phenomenon's head and a control, the same layer's head that looks least "
           "at the cue), or heads (L1H0,0.0); marks the drops beyond chance",
           "--ablate needs all, found or a list of heads, e.g. --ablate all.")
      ->type_name("all|found|HEADS");
  app.add_option("--mode", a.mode,
                 "with --ablate: zero (default), the head's context becomes 0 before W_O; mean, its mean over the "
                 "validation windows (as mhaviz ablate --mode mean)")
      ->type_name("zero|mean")
      ->check(CLI::Validator(
          [](std::string& v) {
            try {
              ParseAblationMode("--mode", v);
              return std::string();
            } catch (const UsageError& e) {
              return std::string(e.what());
            }
          },
          ""));
  IntFlag(
      app, "--windows", 0, 1 << 20, [&a](int v) { a.windows = v; },
      "--mode mean: the validation windows the mean contexts are measured on (default 256, 0 = all)");
  TextFlag(app, "--write-labels", a.write_labels,
           "measure every head's label as the app names it (its pattern on the validation text, and the "
           "proof table on the model's own pairs) and write them as JSON, e.g. beside the checkpoint as "
           "M.labels.json (scripts/measure_head_labels.sh)",
           "--write-labels needs a file name, e.g. --write-labels mhaviz-small.labels.json.")
      ->type_name("OUT.json");
  app.add_flag("--json", a.json, "print the report as one JSON object");
}

// --write-labels: the evidence every view names heads from (lm/head_evidence.hpp).
int WriteLabels(const PairsArgs& a) {
  if (!a.pairs_path.empty() || !a.ablate.empty() || a.json)
    throw UsageError(
        "--write-labels measures on the model's own pairs and validation text, every head knocked out "
        "(zero): give it with --model alone.");
  io::CheckOutputs({{"--write-labels", a.write_labels}});  // before a minute of work
  const lm::LanguageModel lm = LoadLanguageModelArg(a.model, "pairs");
  const lm::HeadEvidence e = lm::MeasureHeadEvidence(lm);
  lm::SaveEvidence(e, a.write_labels);
  std::cout << "head labels of " << e.checkpoint.name << " (pairs " << e.pairs.name << ", validation text "
            << e.validation.name << "):\n";
  for (const lm::HeadLabel& l : lm::NameEveryHead(e))
    std::cout << "  " << Pad(HeadName({l.layer, l.head}), 6) << Pad(l.name.text, 24) << Pad(l.name.kind, 11)
              << l.name.evidence << "\n";
  std::cout << "wrote " << a.write_labels << "\n";
  return 0;
}

}  // namespace

int PairsCommand(const std::vector<std::string>& args) {
  return Guard("pairs", [&] {
    PairsArgs a;
    CLI::App app{
        "mhaviz pairs: score a language model on minimal pairs (a good sentence against the same sentence "
        "with one form wrong). Prints, per phenomenon, the share of pairs where the model gives the good "
        "sentence the higher probability, and the head (layer, head) whose attention from the deciding "
        "position to the cue word is highest on average, with that mean weight and what uniform attention "
        "would give. With --ablate, the same without each head: which head the model needs for what.",
        "mhaviz pairs"};
    Declare(app, a);
    if (ParseFlags(app, "pairs", args)) {
      std::cout << app.help();
      return 0;
    }
    if (!a.write_labels.empty()) {
      if (a.model.empty()) throw UsageError("--write-labels needs --model, e.g. --model mhaviz-small.");
      return WriteLabels(a);
    }
    ResolvePaths(a);
    const AblationMode mode = ParseAblationMode("--mode", a.mode);
    if (a.ablate.empty() && (mode != AblationMode::Zero || a.windows >= 0))
      throw UsageError(
          "--mode and --windows say how --ablate knocks heads out: add --ablate all (or found, or heads).");
    // Bad input is a usage error (exit 2): a pairs file that cannot be read or parsed, a
    // checkpoint that cannot be loaded or is not a language model.
    std::vector<lm::MinimalPair> pairs;
    try {
      pairs = lm::LoadMinimalPairs(a.pairs_path);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    const lm::LanguageModel lm = LoadLanguageModelArg(a.model, "pairs");
    // The heads are checked before any pair is scored, the pairs before any knock-out.
    std::vector<HeadRef> heads;
    if (!a.ablate.empty() && a.ablate != "found") heads = TableHeads(a.ablate, lm, {}, a.model);
    lm::PairsReport r;
    try {
      r = lm::ScoreMinimalPairs(lm, pairs);
    } catch (const Error& e) {
      throw UsageError("'" + a.pairs_path + "': " + e.what());
    }
    std::optional<lm::KnockoutTable> table;
    ContextMeans means;
    if (!a.ablate.empty()) {
      if (a.ablate == "found") heads = TableHeads(a.ablate, lm, r, a.model);
      if (mode == AblationMode::Mean) {
        const lm::AblationSubject s = lm::LoadSubject(lm.path, a.windows);
        Trainer trainer(0);
        means = MeanContexts(trainer, lm.model, s.reference);
      }
      table = lm::KnockOutHeads(lm, pairs, heads, mode, mode == AblationMode::Mean ? &means : nullptr, &r);
    }
    if (a.json) {
      std::cout << ReportJson(a, r, table ? &*table : nullptr, means)
                       .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                << std::endl;
      return 0;
    }
    PrintAttention(a, pairs.size(), r);
    if (table) PrintTable(*table);
    return 0;
  });
}

}  // namespace mha::cli
