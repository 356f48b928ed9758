// The Importance view's measurements (measure.hpp).
#include "gui/views/importance/measure.hpp"

#include <algorithm>
#include <utility>

#include "gui/sources/knockout.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

std::vector<std::string> TargetNames(const lm::AblationSubject& sub) {
  std::vector<std::string> out;
  const int K = sub.model().cfg.num_targets;
  if (!sub.task || K < 2) return out;
  for (int k = 0; k < K; ++k)
    out.push_back(sub.task->kind == TaskKind::Offsets ? std::to_string(k + 1) + "-back"
                                                      : "target " + std::to_string(k));
  return out;
}

// The heads an ablation knocks out (what MeasureImportance asks for).
std::vector<HeadRef> HeadsOf(const std::vector<HeadAblation>& ab) {
  std::vector<HeadRef> out;
  for (std::size_t l = 0; l < ab.size(); ++l)
    for (const int h : ab[l].heads) out.push_back({static_cast<int>(l), h});
  return out;
}

// The in-context learning curve, as `mhaviz ablate --icl` measures it by default, on
// the model as chosen (`plan`) and without the induction head as well.
void MeasureIcl(const lm::AblationSubject& sub, const KnockoutPlan& plan, ImportanceResult& m,
                TaskContext<ImportanceResult>& ctx) {
  ctx.Stage(N_("in-context learning"));
  const lm::IclShape shape = lm::IclShapeOf(sub);
  m.icl_heads = {lm::InductionHead(m.labels)};
  if (const HeadProfile* p = lm::FindProfile(m.labels, m.icl_heads[0])) m.icl_induction = p->induction;
  m.icl_span = shape.span;
  m.icl_sequences = lm::kIclSequences;
  if (shape.span >= 2) {
    const RepeatedSpans spans =
        MakeRepeatedSpans(shape.candidates, shape.prefix, shape.span, lm::kIclSequences, sub.model().cfg.layer.seed);
    const std::vector<HeadAblation> without = plan.With(m.icl_heads, sub.model());
    m.plain = MeasureRepeatLoss(sub.model(), spans, plan.Any() ? &plan.layers() : nullptr);
    ctx.Advance();
    ctx.Stage(N_("in-context learning without %s"), HeadName(m.icl_heads[0]));
    m.knocked_curve = MeasureRepeatLoss(sub.model(), spans, &without);
  } else {
    ctx.Advance();
  }
  ctx.Advance();
}

// The reference loss with the heads MeasureImportance asks for (`ab`, null for none)
// knocked out on top of the chosen ones.
StepStats LossOnTop(const lm::AblationSubject& sub, const KnockoutPlan& plan, const std::vector<HeadAblation>* ab,
                    Trainer& trainer, TaskContext<ImportanceResult>& ctx) {
  // What this call knocks out, for the stage: the first ablated head, or a whole layer
  // (MeasureImportance's order).
  const char* what = plan.Any() ? N_("the model as chosen") : N_("the intact model");
  std::string arg;
  std::vector<HeadAblation> with = plan.Any() ? plan.layers() : std::vector<HeadAblation>();
  if (ab) {
    for (std::size_t l = 0; l < ab->size(); ++l) {
      const std::vector<int>& heads = (*ab)[l].heads;
      if (heads.empty()) continue;
      const bool all = static_cast<int>(heads.size()) == sub.heads() && sub.heads() > 1;
      what = all ? N_("every head of layer %s knocked out") : N_("%s knocked out");
      arg = all ? std::to_string(l) : HeadName({static_cast<int>(l), heads[0]});
    }
    with = plan.With(HeadsOf(*ab), sub.model());
  }
  ctx.Stage(what, arg);
  // Cancelled between batches of 64 windows (a fraction of a second).
  const StepStats st = lm::ReferenceLoss(trainer, sub, with.empty() ? nullptr : &with, [&] { ctx.Check(); });
  ctx.Advance();
  return st;
}

// What is known so far, for the view to draw while the rest is measured.
void PublishSoFar(const ImportanceResult& m, TaskContext<ImportanceResult>& ctx) {
  ImportanceResult p = m;
  p.partial = true;
  ctx.Publish(std::move(p));
}

// One reference loss of MeasureImportance's, in its order (the intact model, every head
// alone in (layer, head) order, then every layer's heads), kept in `m`'s table as it
// comes and published.
void KeepSoFar(ImportanceResult& m, const StepStats& st, TaskContext<ImportanceResult>& ctx) {
  const int H = std::max(1, m.num_heads), heads = m.layers * H;
  if (!m.base_measured) {
    m.table.base = st;
    m.base_measured = true;
  } else {
    const int i = m.heads_measured + static_cast<int>(m.table.layers.size());
    const HeadRef ref = i < heads ? HeadRef{i / H, i % H} : HeadRef{i - heads, -1};
    (i < heads ? m.table.heads : m.table.layers).push_back({ref, st, st.loss - m.table.base.loss});
    if (i < heads) ++m.heads_measured;
  }
  PublishSoFar(m, ctx);
}

}  // namespace

ImportanceResult MeasureImportance(const ImportanceInput& in, TaskContext<ImportanceResult>& ctx) {
  ImportanceResult m;
  ctx.Stage(N_("loading the reference text"));
  // The model in memory: a language model's copy (its windows are read beside its
  // checkpoint), or the task model itself.
  lm::AblationSubject sub = in.lm ? lm::LanguageSubject(std::make_shared<lm::LanguageModel>(*in.lm), in.key.windows)
                                  : lm::TaskSubject(*in.key.model, in.name);
  const int L = sub.layers(), H = sub.heads();
  ctx.SetTotal(3 + L * H + L + 1);  // labels, the two repeat losses, each head, each layer, the intact model
  m.model = sub.name;
  m.reference = sub.reference_text;
  m.reference_windows = sub.reference_windows;
  m.reference_pieces = sub.reference_pieces;
  m.layers = L;
  m.num_heads = H;
  m.targets = TargetNames(sub);
  PublishSoFar(m, ctx);
  Trainer trainer(0);  // one thread per core: the numbers are the same on any count
  Knockout chosen = in.knockout;
  chosen.heads = in.key.knocked;
  chosen.mode = in.key.mode;
  if (in.key.mode == AblationMode::Mean) {
    // The chosen means when they were measured for this model (gui --ablate-mode mean),
    // else measured here; they go back to the choice with the result.
    if (!KnockoutPlan(chosen, sub.model()).mean()) {
      ctx.Stage(N_("each head's mean context"));
      chosen.means = MeanContexts(trainer, sub.model(), sub.reference);
    }
    m.means = chosen.means;
  }
  const KnockoutPlan plan(chosen, sub.model());
  m.knocked = plan.heads();
  ctx.Stage(N_("the heads' labels"));
  m.labels = lm::SubjectLabels(trainer, sub);
  ctx.Advance();
  PublishSoFar(m, ctx);
  MeasureIcl(sub, plan, m, ctx);
  PublishSoFar(m, ctx);
  ctx.Stage(plan.Any() ? N_("the model as chosen") : N_("the intact model"));
  const ContextMeans* means = m.means.empty() ? nullptr : &m.means;
  const ImportanceTable table = ::mha::MeasureImportance(L, sub.model().cfg.LayerConfig(), in.key.mode, means,
                                                         [&](const std::vector<HeadAblation>* ab) {
                                                           const StepStats st = LossOnTop(sub, plan, ab, trainer, ctx);
                                                           KeepSoFar(m, st, ctx);
                                                           return st;
                                                         });
  m.table = table;
  m.heads_measured = L * H;
  return m;
}

}  // namespace mha::gui
