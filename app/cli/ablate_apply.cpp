#include "ablate_apply.hpp"

#include "lm/ablate_model.hpp"
#include "io/checkpoint.hpp"
#include "mha/forward.hpp"
#include "options/ablate_flags.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {

using lm::AblationSubject;
using lm::FindProfile;
using lm::LoadSubject;
using lm::ReferenceLoss;
using lm::SubjectLabels;

void AblateOwnLayer(const RunOptions& o, const Config& cfg, const std::shared_ptr<const Weights>& weights, Inputs& in) {
  in.ablate = HeadAblation();
  if (!o.ablate_given) return;
  CheckHeadsFit("--ablate", o.ablate, 1, cfg.num_heads, "this model", /*allow_all=*/true);
  ContextMeans means;
  if (o.ablate_mode == AblationMode::Mean) {
    const Trace plain = Forward(cfg, weights, in);
    means = MeanContexts(std::vector<const Trace*>{&plain});
  }
  in.ablate = LayerAblations(1, cfg, o.ablate_mode, o.ablate, &means)[0];
}

std::vector<HeadAblation> AblateModel(const RunOptions& o, const std::string& path, const Model& m,
                                      const std::vector<int>& tokens) {
  if (!o.ablate_given) return {};
  const int L = m.cfg.num_layers, H = m.cfg.layer.num_heads;
  CheckHeadsFit("--ablate", o.ablate, L, H, "the model", /*allow_all=*/true);
  ContextMeans means;
  if (o.ablate_mode == AblationMode::Mean) {
    if (io::IsTextTask(m.cfg.task) || !m.cfg.task.empty()) {
      const AblationSubject s = LoadSubject(path);
      Trainer trainer(m.cfg.layer.threads);
      means = MeanContexts(trainer, m, s.reference);
    } else {
      ModelTrace plain;
      RunModel(m, tokens, plain);
      std::vector<const Trace*> layers;
      for (const Trace& t : plain.layers) layers.push_back(&t);
      means = MeanContexts(layers);
    }
  }
  return LayerAblations(L, m.cfg.LayerConfig(), o.ablate_mode, o.ablate, &means);
}

std::string AblationBanner(const RunOptions& o, int num_layers, int num_heads) {
  if (!o.ablate_given) return "";
  std::string s = std::string("knocked out (") + ToString(o.ablate_mode) + " ablation): ";
  for (std::size_t i = 0; i < o.ablate.size(); ++i) s += (i ? ", " : "") + HeadName(o.ablate[i]);
  const std::string only = ResidualOnlyNote(o.ablate, num_layers, num_heads);
  return only.empty() ? s : s + "; " + only;
}

lm::TraceHow TraceHowFor(const RunOptions& o, const std::string& path) {
  lm::TraceHow how;
  how.attention = o.cfg.attention;
  how.ablate = [&o, path](const Model& m, const std::vector<int>& tokens) { return AblateModel(o, path, m, tokens); };
  return how;
}

}  // namespace mha::cli
