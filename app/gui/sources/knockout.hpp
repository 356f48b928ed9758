// The one knock-out: which heads are out is a Choice (choice.knockout: gui --ablate,
// the Model view's out / only switches, a lesson step); this is the one place that
// turns it into what the core applies (mha/ablation.hpp). The recompute's jobs and the
// Importance view's measurements all take a KnockoutPlan from here, so every view
// shows, and measures, the model as chosen; the result says what was applied.
#pragma once

#include <string>
#include <vector>

#include "mha/ablation.hpp"
#include "mha/model.hpp"

namespace mha::options {
struct RunOptions;
}

namespace mha::gui {

struct AppState;
struct Knockout;

// The chosen heads a model has, and how their context is replaced.
class KnockoutPlan {
 public:
  KnockoutPlan() = default;
  // For a trained model: the heads it has; mean ablation only with means measured for
  // it (Knockout::means), else the heads are zeroed.
  KnockoutPlan(const Knockout& k, const Model& m);
  bool Any() const { return !heads_.empty(); }
  const std::vector<HeadRef>& heads() const { return heads_; }
  bool mean() const { return mean_; }
  // One HeadAblation per layer of the model, or empty when no head is out.
  const std::vector<HeadAblation>& layers() const { return layers_; }
  // The same heads with `more` knocked out as well (the Importance view measures each
  // head on the model as chosen), or null when none is out at all.
  std::vector<HeadAblation> With(const std::vector<HeadRef>& more, const Model& m) const;
  // For the seeded layer once `t` is computed: the chosen heads of layer 0 it has (mean
  // ablation: each head's mean context over this sentence, the only text a seeded layer
  // has); empty when none.
  static KnockoutPlan Seeded(const Knockout& k, const Trace& t);

 private:
  std::vector<HeadRef> heads_;
  AblationMode mode_ = AblationMode::Zero;
  bool mean_ = false;
  ContextMeans means_;
  std::vector<HeadAblation> layers_;
};

// Sets the knocked-out heads (sorted, each once) and asks for a recompute.
void SetKnockedOut(AppState& s, std::vector<HeadRef> heads);
// "L1H3, L0H2 (zero)": the heads and the ablation the result applied; "" when none.
// shown: in the interface's language (the banner); else English (--dump-state).
std::string KnockoutText(const AppState& s, bool shown = false);
// ", knocked out: L0H1" after the result's reuse text when heads are knocked out.
void AppendKnockout(AppState& s);
// gui --ablate / --ablate-mode, once the source is chosen: exit 2 (options::UsageError)
// for a head the model does not have; mean ablation of a trained model measures each
// head's mean context on its reference text once, before the window opens.
void ApplyAblateFlags(const options::RunOptions& o, const std::string& model_path, AppState& s);

}  // namespace mha::gui
