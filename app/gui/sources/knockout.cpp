#include "gui/sources/knockout.hpp"

#include <algorithm>

#include "gui/state/app_state.hpp"
#include "lm/ablate_model.hpp"
#include "options/ablate_flags.hpp"
#include "options/run_options.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

std::vector<HeadRef> Fitting(const std::vector<HeadRef>& heads, int num_layers, int num_heads) {
  std::vector<HeadRef> out;
  for (const HeadRef& h : heads)
    if (h.layer < num_layers && h.head < num_heads) out.push_back(h);
  return out;
}

bool MeansFit(const ContextMeans& means, const Model& m) {
  if (static_cast<int>(means.size()) != m.cfg.num_layers) return false;
  for (const Mat& x : means)
    if (x.rows() != m.cfg.layer.num_heads || x.cols() != m.cfg.LayerConfig().head_dim()) return false;
  return true;
}

}  // namespace

KnockoutPlan::KnockoutPlan(const Knockout& k, const Model& m)
    : heads_(Fitting(k.heads, m.cfg.num_layers, m.cfg.layer.num_heads)),
      mode_(k.mode),
      mean_(k.mode == AblationMode::Mean && MeansFit(k.means, m)) {
  if (mean_) means_ = k.means;
  if (!heads_.empty()) layers_ = With({}, m);
}

std::vector<HeadAblation> KnockoutPlan::With(const std::vector<HeadRef>& more, const Model& m) const {
  std::vector<HeadRef> all = heads_;
  for (const HeadRef& h : more)
    if (std::find(all.begin(), all.end(), h) == all.end()) all.push_back(h);
  if (all.empty()) return {};
  return LayerAblations(m.cfg.num_layers, m.cfg.LayerConfig(), mean_ ? AblationMode::Mean : AblationMode::Zero, all,
                        mean_ ? &means_ : nullptr);
}

KnockoutPlan KnockoutPlan::Seeded(const Knockout& k, const Trace& t) {
  KnockoutPlan p;
  p.heads_ = Fitting(k.heads, 1, t.cfg.num_heads);
  p.mode_ = k.mode;
  p.mean_ = k.mode == AblationMode::Mean;
  if (p.heads_.empty()) return p;
  if (p.mean_) p.means_ = MeanContexts(std::vector<const Trace*>{&t});
  p.layers_ = LayerAblations(1, t.cfg, p.mean_ ? AblationMode::Mean : AblationMode::Zero, p.heads_,
                             p.mean_ ? &p.means_ : nullptr);
  return p;
}

void SetKnockedOut(AppState& s, std::vector<HeadRef> heads) {
  std::sort(heads.begin(), heads.end());
  heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
  s.choice.knockout.heads = std::move(heads);
  s.dirty = true;
}

std::string KnockoutText(const AppState& s, bool shown) {
  const Result& r = s.result;
  if (r.knocked_out.empty()) return "";
  std::string names;
  for (const HeadRef& h : r.knocked_out) names += (names.empty() ? "" : ", ") + HeadName(h);
  if (shown) return names + (r.knocked_mean ? _(" (mean)") : _(" (zero)"));
  return names + (r.knocked_mean ? " (mean)" : " (zero)");
}

void AppendKnockout(AppState& s) {
  if (s.result.knocked_out.empty()) return;
  Result& r = s.result;
  r.reuse += ", knocked out: " + KnockoutText(s);
  r.reuse_shown += i18n::Format(_(", knocked out: %s"), KnockoutText(s, true).c_str());
}

void ApplyAblateFlags(const options::RunOptions& o, const std::string& model_path, AppState& s) {
  if (!o.ablate_given) return;
  s.choice.knockout.mode = o.ablate_mode;
  if (UsingTrainedModel(s)) {
    const Model& m = *s.choice.source.model;
    options::CheckHeadsFit("--ablate", o.ablate, m.cfg.num_layers, m.cfg.layer.num_heads, "the model",
                           /*allow_all=*/true);
    if (o.ablate_mode == AblationMode::Mean && !model_path.empty()) {
      // The same reference text as `mhaviz ablate --mode mean`: once, before the window opens.
      const lm::AblationSubject sub = lm::LoadSubject(model_path);
      Trainer trainer(m.cfg.layer.threads);
      s.choice.knockout.means = MeanContexts(trainer, sub.model(), sub.reference);
    }
  } else {
    options::CheckHeadsFit("--ablate", o.ablate, 1, s.choice.cfg.num_heads, "this model", /*allow_all=*/true);
  }
  SetKnockedOut(s, o.ablate);
}

}  // namespace mha::gui
