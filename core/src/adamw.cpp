// AdamW, the learning-rate schedule and gradient clipping, written to round as
// torch.optim.AdamW (single-tensor path) and torch.nn.utils.clip_grad_norm_ do, so a
// run can be checked against torch step by step.
#include <cmath>
#include <string>

#include "mha/train.hpp"

namespace mha {

float LearningRate(const OptimConfig& o, int step) {
  if (o.warmup > 0 && step < o.warmup) return o.lr * static_cast<float>(step + 1) / static_cast<float>(o.warmup);
  if (o.total_steps <= o.warmup) return o.lr;
  const double progress =
      std::min(1.0, static_cast<double>(step - o.warmup) / static_cast<double>(o.total_steps - o.warmup));
  const double min_lr = static_cast<double>(o.lr) * o.min_lr_ratio;
  return static_cast<float>(min_lr + 0.5 * (1.0 + std::cos(3.14159265358979323846 * progress)) * (o.lr - min_lr));
}

bool IsDecayed(const std::string&, const std::vector<std::int64_t>& shape) { return shape.size() >= 2; }

AdamW::AdamW(const Model& m, const OptimConfig& o) : o_(o), m1_(ZerosLike(m)), m2_(ZerosLike(m)) {
  auto bad = [](const std::string& what) { throw Error(what); };
  if (!(o.lr > 0) || !std::isfinite(o.lr)) bad("The learning rate must be a positive number (try 3e-3).");
  if (!(o.beta1 >= 0 && o.beta1 < 1) || !(o.beta2 >= 0 && o.beta2 < 1))
    bad("AdamW's betas must lie in [0, 1) (torch's defaults: 0.9 and 0.999).");
  if (!(o.eps > 0)) bad("AdamW's eps must be positive (torch's default: 1e-8).");
  if (!(o.weight_decay >= 0) || !std::isfinite(o.weight_decay)) bad("Weight decay must be 0 or more (try 0.01).");
  if (!(o.clip >= 0) || !std::isfinite(o.clip)) bad("The clipping norm must be 0 (off) or positive (try 1.0).");
  if (o.warmup < 0 || o.total_steps < 0) bad("Warm-up and total steps must be 0 or more.");
}

double AdamW::Step(Model& m, Model& grads) {
  std::vector<ParamView> p = Parameters(m), g = Parameters(grads), m1 = Parameters(m1_), m2 = Parameters(m2_);
  // Global norm as clip_grad_norm_: each tensor's 2-norm, then the norm of those.
  double sq = 0;
  for (const ParamView& t : g) {
    double n = 0;
    for (std::int64_t i = 0; i < t.size(); ++i) n += static_cast<double>(t.data[i]) * t.data[i];
    sq += n;
  }
  const double norm = std::sqrt(sq);
  if (o_.clip > 0) {
    const float coef = static_cast<float>(o_.clip / (norm + 1e-6));
    if (coef < 1.0f)
      for (ParamView& t : g)
        for (std::int64_t i = 0; i < t.size(); ++i) t.data[i] *= coef;
  }
  const float lr = LearningRate(o_, step_);
  ++step_;
  // Scalars in double, as torch computes them in Python before one cast to float.
  const double bc1 = 1.0 - std::pow(static_cast<double>(o_.beta1), step_);
  const double bc2 = 1.0 - std::pow(static_cast<double>(o_.beta2), step_);
  const float step_size = static_cast<float>(lr / bc1);
  const float bc2_sqrt = static_cast<float>(std::sqrt(bc2));
  for (std::size_t j = 0; j < p.size(); ++j) {
    float* w = p[j].data;
    const float* gr = g[j].data;
    float* a = m1[j].data;
    float* v = m2[j].data;
    const float decay = IsDecayed(p[j].name, p[j].shape) ? 1.0f - lr * o_.weight_decay : 1.0f;
    for (std::int64_t i = 0; i < p[j].size(); ++i) {
      w[i] *= decay;
      a[i] = a[i] * o_.beta1 + (1.0f - o_.beta1) * gr[i];
      v[i] = v[i] * o_.beta2 + (1.0f - o_.beta2) * gr[i] * gr[i];
      const float denom = std::sqrt(v[i]) / bc2_sqrt + o_.eps;
      w[i] -= step_size * (a[i] / denom);
    }
  }
  return norm;
}

}  // namespace mha
