// `mhaviz ablate`: knock heads out of a trained model and measure what it loses.
//
//   no --heads     the importance table: every head alone, and every layer's heads at
//                  once, by the loss increase on the reference text, with each head's label
//   --heads H,...  the loss change of that set
//   --sentence S   (language model) each next piece's probability before -> after
//   --icl          the loss on the second copy of a repeated random span vs the first,
//                  with and without the induction head (or --heads)
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "lm/ablate_model.hpp"
#include "commands.hpp"
#include "options/ablate_flags.hpp"
#include "options/terminal.hpp"
#include "options/shared_flags.hpp"
#include "options/table.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {

using lm::AblationSubject;
using lm::FindProfile;
using lm::LoadSubject;
using lm::ReferenceLoss;
using lm::SubjectLabels;

namespace {

struct AblateArgs {
  std::string model;
  std::string mode = "zero";
  std::string heads_text;
  std::vector<HeadRef> heads;
  std::string sentence;
  bool sentence_given = false;
  bool icl = false, json = false;
  int windows = -1, examples = -1;  // -1: not given
  int threads = 0;
  int sequences = lm::kIclSequences, span = 0;
  bool sequences_given = false, span_given = false;
  bool help = false;
  std::string help_text;
};

void DeclareAblateFlags(CLI::App& app, AblateArgs& a) {
  const std::string g = kComputeGroup;
  ModelPathFlag(app, a.model,
                "the trained model: a checkpoint from mhaviz train (a task model or a language\n"
                "model), or mhaviz-small, the shipped language model")
      ->group(g);
  app.add_option("--mode", a.mode,
                 "zero (default): the head's context becomes 0 before W_O | mean: its mean over\n"
                 "the reference text (validation windows, or a task model's held-out examples)")
      ->type_name("zero|mean")
      ->group(g)
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
  app.add_option("--heads", a.heads_text,
                 "the heads to knock out: LAYER.HEAD or L1H3, comma-separated (e.g. 0.1,1.3);\n"
                 "without it, every head is measured alone (the importance table)")
      ->type_name("HEADS")
      ->group(g)
      ->check(CLI::Validator([](std::string& v) { return HeadListError("--heads", v); }, ""));
  app.add_option_function<std::string>(
         "-s,--sentence",
         [&a](const std::string& v) {
           a.sentence = v;
           a.sentence_given = true;
         },
         "(language model, with --heads) each next piece's probability on S, before -> after")
      ->type_name("S")
      ->group(g);
  app.add_flag("--icl", a.icl,
               "in-context learning: loss on the second copy of a repeated random span vs the\n"
               "first, with and without the induction head (the highest induction score) or --heads")
      ->group(g);
  IntFlag(
      app, "--windows", 0, 1 << 20, [&a](int v) { a.windows = v; },
      "validation windows the loss is measured on (language model; default 256, 0 = all)")
      ->group(g);
  IntFlag(
      app, "--examples", 1, 1 << 16, [&a](int v) { a.examples = v; },
      "held-out examples the loss is measured on (task model; default 512)")
      ->group(g);
  IntFlag(
      app, "--sequences", 1, 4096,
      [&a](int v) {
        a.sequences = v;
        a.sequences_given = true;
      },
      "--icl: repeated-span sequences (default 64)")
      ->group(g);
  IntFlag(
      app, "--span", 2, ModelLimits::kMaxSeq,
      [&a](int v) {
        a.span = v;
        a.span_given = true;
      },
      "--icl: length of the repeated span (default: as long as fits the context twice)")
      ->group(g);
  ThreadsFlag(
      app, [&a](int v) { a.threads = v; }, "threads (default 0 = one per core); the numbers are the same on any count",
      /*every_core_at_zero=*/true)
      ->group(g);
  app.add_flag("--json", a.json, "print the result as one JSON object instead of a table")->group(kOutputGroup);
}

const char* const kAbout =
    "Knock heads out of a trained model and measure what it loses: the causal test of what a head does.";
const char* const kFooter =
    "\nExamples:\n"
    "  mhaviz ablate --model mhaviz-small                      every head, by the loss it is worth\n"
    "  mhaviz ablate --model mhaviz-small --heads 1.3 --sentence \"고양이가 쥐를 잡았다. 고양이가 쥐를\"\n"
    "  mhaviz ablate --model mhaviz-small --icl                 the induction head's repeat signature\n"
    "  mhaviz ablate --model offsets.npz --mode mean            a task model: accuracy per target too\n";

std::string Signed(double v, int digits = 4) {
  char b[48];
  std::snprintf(b, sizeof b, "%+.*f", digits, v);
  return b;
}
std::string Piece(const nlohmann::json& p) { return "[" + TerminalToken(p.get<std::string>()) + "]"; }

std::string Accuracies(const StepStats& st) {
  std::string s;
  for (std::size_t k = 0; k < st.accuracy.size(); ++k) s += (k ? "/" : "") + Fixed(st.accuracy[k], 3);
  return s;
}

nlohmann::json StatsJson(const StepStats& st) { return {{"loss", st.loss}, {"accuracy", st.accuracy}}; }

nlohmann::json HeadJson(const HeadRef& h, const std::vector<HeadProfile>& labels) {
  nlohmann::json j = {{"layer", h.layer}, {"head", h.head}, {"name", HeadName(h)}};
  if (const HeadProfile* p = FindProfile(labels, h)) {
    j["label"] = p->label;
    j["score"] = p->score;
    j["induction"] = p->induction;
    j["previous"] = p->back.empty() ? 0.0 : p->back[0];
  }
  return j;
}

std::string LabelOf(const std::vector<HeadProfile>& labels, const HeadRef& h) {
  const HeadProfile* p = FindProfile(labels, h);
  return p ? p->label + " " + Fixed(p->score, 2) : "";
}

std::string TargetNote(const AblationSubject& s) {
  if (!s.task || s.model().cfg.num_targets < 2) return "";
  std::string n = "accuracy per target:";
  for (int k = 0; k < s.model().cfg.num_targets; ++k)
    n += s.task->kind == TaskKind::Offsets ? " " + std::to_string(k + 1) + "-back" : " target " + std::to_string(k);
  return n + " (separated by /)";
}

// Every head alone, then each layer's heads at once.
int ImportanceTableCommand(const AblateArgs& a, const AblationSubject& s, AblationMode mode, Trainer& trainer,
                           const ContextMeans* means, const std::vector<HeadProfile>& labels) {
  const ImportanceTable t =
      MeasureImportance(s.layers(), s.model().cfg.LayerConfig(), mode, means,
                        [&](const std::vector<HeadAblation>* ab) { return ReferenceLoss(trainer, s, ab); });
  const int H = s.heads(), L = s.layers();
  const std::string only = L * H == 1 ? ResidualOnlyNote({{0, 0}}, 1, 1) : "";
  if (a.json) {
    nlohmann::json j = {{"model", s.name}, {"mode", ToString(mode)}, {"reference", s.reference_text},
                        {"layers", L},     {"num_heads", H},         {"base", StatsJson(t.base)}};
    nlohmann::json heads = nlohmann::json::array(), layers = nlohmann::json::array();
    for (std::size_t r = 0; r < t.heads.size(); ++r) {
      nlohmann::json h = HeadJson(t.heads[r].head, labels);
      h["rank"] = r + 1;
      h["loss"] = t.heads[r].stats.loss;
      h["increase"] = t.heads[r].increase;
      h["accuracy"] = t.heads[r].stats.accuracy;
      heads.push_back(h);
    }
    for (const HeadImportance& l : t.layers)
      layers.push_back(
          {{"layer", l.head.layer}, {"loss", l.stats.loss}, {"increase", l.increase}, {"accuracy", l.stats.accuracy}});
    j["heads"] = heads;
    j["all_heads_of_layer"] = layers;
    if (!only.empty()) j["note"] = only;
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << s.name << ": " << L << " layer" << (L == 1 ? "" : "s") << " x " << H << " head" << (H == 1 ? "" : "s")
            << ", " << ToString(mode) << " ablation, measured on " << s.reference_text << ".\n";
  std::cout << "plain model: loss " << Fixed(t.base.loss) << ", accuracy " << Accuracies(t.base) << "\n";
  const std::string note = TargetNote(s);
  if (!note.empty()) std::cout << note << "\n";
  std::cout << "\neach head knocked out alone, largest loss increase first:\n"
            << "rank  head    " << Pad("label (score)", 22) << Pad("loss", 9) << Pad("increase", 10) << "accuracy\n";
  for (std::size_t r = 0; r < t.heads.size(); ++r) {
    const HeadImportance& h = t.heads[r];
    char rank[32];
    std::snprintf(rank, sizeof rank, "%4zu  ", r + 1);
    std::cout << rank << Pad(HeadName(h.head), 8) << Pad(LabelOf(labels, h.head), 22) << Pad(Fixed(h.stats.loss), 9)
              << Pad(Signed(h.increase), 10) << Accuracies(h.stats) << "\n";
  }
  std::cout << "\nevery head of one layer knocked out at once:\n";
  for (const HeadImportance& l : t.layers)
    std::cout << "      " << Pad("L" + std::to_string(l.head.layer), 8)
              << Pad("all " + std::to_string(H) + " heads", 22) << Pad(Fixed(l.stats.loss), 9)
              << Pad(Signed(l.increase), 10) << Accuracies(l.stats) << "\n";
  if (!only.empty()) std::cout << "\nnote: the model has one head: knocking it out, " << only << "\n";
  return 0;
}

// One set of heads: the loss change, and with --sentence each next piece before -> after.
int HeadSetCommand(const AblateArgs& a, const AblationSubject& s, AblationMode mode, Trainer& trainer,
                   const std::vector<HeadAblation>& ablate, const std::vector<HeadProfile>& labels) {
  const StepStats base = ReferenceLoss(trainer, s, nullptr), after = ReferenceLoss(trainer, s, &ablate);
  const std::string only = ResidualOnlyNote(a.heads, s.layers(), s.heads());
  nlohmann::json j = {{"model", s.name},         {"mode", ToString(mode)},      {"reference", s.reference_text},
                      {"base", StatsJson(base)}, {"ablated", StatsJson(after)}, {"increase", after.loss - base.loss}};
  nlohmann::json heads = nlohmann::json::array();
  for (const HeadRef& h : a.heads) heads.push_back(HeadJson(h, labels));
  j["heads"] = heads;
  if (!only.empty()) j["note"] = only;
  std::string names;
  for (const HeadRef& h : a.heads) {
    names += (names.empty() ? "" : ", ") + HeadName(h);
    const std::string l = LabelOf(labels, h);
    if (!l.empty()) names += " (" + l + ")";
  }
  lm::SentenceRun before_run, after_run;
  if (a.sentence_given) {
    before_run = lm::RunOnSentence(*s.lm, a.sentence, 1);
    after_run = lm::RunOnSentence(*s.lm, a.sentence, 1, &ablate);
    if (!before_run.notice.empty()) std::cerr << "mhaviz ablate: note: " << before_run.notice << "\n";
  }
  // P(the piece that comes next in the sentence) at position i, and the likeliest piece.
  auto prob = [](const lm::SentenceRun& r, int i, int id) {
    const Mat& z = r.trace.logits[0];
    const double mx = z.row(i).maxCoeff();
    double sum = 0;
    for (Eigen::Index c = 0; c < z.cols(); ++c) sum += std::exp(static_cast<double>(z(i, c)) - mx);
    return std::exp(static_cast<double>(z(i, id)) - mx) / sum;
  };
  nlohmann::json positions = nlohmann::json::array();
  const int n = static_cast<int>(before_run.ids.size());
  for (int i = 0; i + 1 < n; ++i) {
    const int next = before_run.ids[i + 1];
    positions.push_back({{"position", i},
                         {"piece", before_run.pieces[i]},
                         {"next", before_run.pieces[i + 1]},
                         {"before", prob(before_run, i, next)},
                         {"after", prob(after_run, i, next)},
                         {"top_before", before_run.next[i][0].piece},
                         {"top_before_p", before_run.next[i][0].probability},
                         {"top_after", after_run.next[i][0].piece},
                         {"top_after_p", after_run.next[i][0].probability}});
  }
  if (a.sentence_given) {
    j["pieces"] = before_run.pieces;
    j["positions"] = positions;
  }
  if (a.json) {
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << s.name << ", " << ToString(mode) << " ablation of " << names << "\n"
            << "loss on " << s.reference_text << ": " << Fixed(base.loss) << " -> " << Fixed(after.loss) << " ("
            << Signed(after.loss - base.loss) << ")\n"
            << "accuracy: " << Accuracies(base) << " -> " << Accuracies(after) << "\n";
  const std::string note = TargetNote(s);
  if (!note.empty()) std::cout << note << "\n";
  if (!only.empty()) std::cout << "note: " << only << "\n";
  if (!a.sentence_given) return 0;
  std::cout << "\nP(the next piece of the sentence), before -> after; and the likeliest piece before -> after:\n";
  for (const auto& p : positions) {
    char pos[16];
    std::snprintf(pos, sizeof pos, "%3d ", p["position"].get<int>());
    std::cout << pos << Pad(Piece(p["piece"]), 10) << "-> " << Pad(Piece(p["next"]), 10)
              << Fixed(p["before"].get<double>(), 3) << " -> " << Pad(Fixed(p["after"].get<double>(), 3), 8)
              << "   top " << Pad(Piece(p["top_before"]), 9) << "-> " << Piece(p["top_after"]) << "\n";
  }
  return 0;
}

// The span --icl repeats; throws if it does not fit the model's context twice.
int IclSpan(const AblateArgs& a, const AblationSubject& s, const lm::IclShape& shape) {
  const int context = s.model().cfg.max_seq, prefix = shape.prefix >= 0 ? 1 : 0;
  if (shape.room < 2)
    throw Error("--icl repeats a span of at least 2 " + std::string(s.lm ? "pieces" : "tokens") + " twice" +
                (prefix ? " after <s>" : "") + ", which needs a context of " + std::to_string(4 + prefix) +
                "; the model's context (max_seq) is " + std::to_string(context) +
                ". Measure it without --icl (the loss on its reference text), or give a model with a longer context.");
  const int span = a.span_given ? a.span : shape.span;
  if (span > shape.room)
    throw UsageError("--span " + std::to_string(span) + " does not fit twice in the model's context of " +
                     std::to_string(context) + (prefix ? " (after <s>)" : "") + ": use at most " +
                     std::to_string(shape.room) + ".");
  if (span < 2)
    throw Error("--icl draws the span from the model's " + std::to_string(shape.candidates.size()) +
                " number tokens, too few for a span of 2: give --span 2 (tokens may then repeat).");
  return span;
}

int IclCommand(const AblateArgs& a, const AblationSubject& s, AblationMode mode, const ContextMeans* means,
               const std::vector<HeadProfile>& labels) {
  const Model& m = s.model();
  const lm::IclShape shape = lm::IclShapeOf(s);
  const int prefix = shape.prefix, span = IclSpan(a, s, shape);
  const RepeatedSpans spans = MakeRepeatedSpans(shape.candidates, prefix, span, a.sequences, m.cfg.layer.seed);
  std::vector<HeadRef> heads = a.heads;
  if (heads.empty()) heads.push_back(lm::InductionHead(labels));
  const std::vector<HeadAblation> ab = LayerAblations(s.layers(), m.cfg.LayerConfig(), mode, heads, means);
  const RepeatLoss plain = MeasureRepeatLoss(m, spans, nullptr), knocked = MeasureRepeatLoss(m, spans, &ab);
  std::string names;
  for (const HeadRef& h : heads) {
    names += (names.empty() ? "" : ", ") + HeadName(h);
    if (const HeadProfile* p = FindProfile(labels, h)) names += " (induction score " + Fixed(p->induction, 2) + ")";
  }
  const std::string what = std::to_string(a.sequences) + " sequences of " + (prefix >= 0 ? "<s> " : "") +
                           "A A, A = " + std::to_string(span) + " random " + (s.lm ? "pieces" : "tokens");
  if (a.json) {
    nlohmann::json hj = nlohmann::json::array();
    for (const HeadRef& h : heads) hj.push_back(HeadJson(h, labels));
    nlohmann::json j = {{"model", s.name},
                        {"mode", ToString(mode)},
                        {"sequences", a.sequences},
                        {"span", span},
                        {"heads", hj},
                        {"plain",
                         {{"first", plain.first_mean},
                          {"second", plain.second_mean},
                          {"first_curve", plain.first},
                          {"second_curve", plain.second}}},
                        {"ablated",
                         {{"first", knocked.first_mean},
                          {"second", knocked.second_mean},
                          {"first_curve", knocked.first},
                          {"second_curve", knocked.second}}}};
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << s.name << ": in-context learning on " << what << ".\n"
            << "loss (nats) of each next token of A, in its first copy and in its second:\n"
            << Pad("", 34) << Pad("first copy", 12) << Pad("second copy", 13) << "first - second\n"
            << Pad("plain model", 34) << Pad(Fixed(plain.first_mean, 3), 12) << Pad(Fixed(plain.second_mean, 3), 13)
            << Signed(plain.first_mean - plain.second_mean, 3) << "\n"
            << Pad(std::string("without ") + (a.heads.empty() ? "the induction head" : "the heads") + " (" +
                       ToString(mode) + ")",
                   34)
            << Pad(Fixed(knocked.first_mean, 3), 12) << Pad(Fixed(knocked.second_mean, 3), 13)
            << Signed(knocked.first_mean - knocked.second_mean, 3) << "\n"
            << "knocked out: " << names << "\n\nper token k of A (plain first/second | knocked out first/second):\n";
  for (int k = 0; k + 1 < span; ++k) {
    char row[128];
    std::snprintf(row, sizeof row, "  k=%2d  %6.3f %6.3f | %6.3f %6.3f\n", k + 1, plain.first[k], plain.second[k],
                  knocked.first[k], knocked.second[k]);
    std::cout << row;
  }
  return 0;
}

int Ablate(const AblateArgs& a) {
  if (a.model.empty())
    throw UsageError("give the model to knock heads out of: --model mhaviz-small, or --model M.npz from mhaviz train.");
  const AblationMode mode = ParseAblationMode("--mode", a.mode);
  AblationSubject s = LoadSubject(a.model, a.windows, a.examples);
  if (s.lm && a.examples >= 0)
    throw UsageError("--examples counts a task model's held-out examples; " + s.name +
                     " is a language model: use --windows N (validation windows).");
  if (!s.lm && a.windows >= 0)
    throw UsageError("--windows counts a language model's validation windows; " + s.name +
                     " is a task model: use --examples N (held-out examples).");
  if (a.sentence_given && !s.lm)
    throw UsageError("--sentence needs a language model; " + s.name + " was trained on the " + ToString(s.task->kind) +
                     " task and reads token ids, not text.");
  if (a.sentence_given && a.icl)
    throw UsageError("--icl measures on repeated random spans, not on a sentence: give one of --icl and --sentence.");
  if (a.sentence_given && a.heads.empty())
    throw UsageError(
        "--sentence shows what knocking heads out changes on it: name them with --heads, e.g. --heads 1.3.");
  if (!a.icl && (a.sequences_given || a.span_given))
    throw UsageError("--sequences and --span shape the repeated spans of --icl; add --icl.");
  if (!a.heads.empty()) CheckHeadsFit("--heads", a.heads, s.layers(), s.heads(), s.name, s.layers() * s.heads() == 1);
  if (a.icl) IclSpan(a, s, lm::IclShapeOf(s));  // before the reference passes
  Model& m = s.lm ? s.lm->model : s.task_model;
  m.cfg.layer.threads = a.threads;
  Trainer trainer(a.threads);
  ContextMeans means;
  if (mode == AblationMode::Mean) means = MeanContexts(trainer, s.model(), s.reference);
  const ContextMeans* mp = mode == AblationMode::Mean ? &means : nullptr;
  const std::vector<HeadProfile> labels = SubjectLabels(trainer, s);
  if (a.icl) return IclCommand(a, s, mode, mp, labels);
  if (a.heads.empty()) return ImportanceTableCommand(a, s, mode, trainer, mp, labels);
  const std::vector<HeadAblation> ab = LayerAblations(s.layers(), s.model().cfg.LayerConfig(), mode, a.heads, mp);
  return HeadSetCommand(a, s, mode, trainer, ab, labels);
}

}  // namespace

int AblateCommand(const std::vector<std::string>& argv) {
  return Guard("ablate", [&] {
    AblateArgs a = ParseCommandArgs("ablate", kAbout, kFooter, DeclareAblateFlags, argv);
    if (a.help) return std::cout << a.help_text, 0;
    if (!a.heads_text.empty()) a.heads = ParseHeadList("--heads", a.heads_text);
    return Ablate(a);
  });
}

}  // namespace mha::cli
