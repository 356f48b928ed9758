#include "mha/cost.hpp"

namespace mha {

FlopGroups GroupFlops(const std::vector<FlowRow>& flow) {
  FlopGroups f;
  for (const FlowRow& r : flow) {
    switch (r.id) {
      case StepId::Scores:
      case StepId::Softmax:
      case StepId::Context: f.core += r.flops; break;
      case StepId::QProj:
      case StepId::KProj:
      case StepId::VProj:
      case StepId::OutProj: f.projections += r.flops; break;
      case StepId::FfnUp:
      case StepId::FfnDown: f.ffn += r.flops; break;
      default: break;
    }
  }
  return f;
}

int CoreOvertakesProjectionsAt(const Config& cfg) {
  auto core_wins = [&](int n) {
    const FlopGroups f = GroupFlops(ShapeFlow(cfg, n, n));
    return f.core >= f.projections;
  };
  // Doubling to a bracket, then bisection: the counts are exact, so the answer is too.
  int lo = 1, hi = 1;
  while (!core_wins(hi)) {
    lo = hi;
    if (hi > (1 << 28)) return -1;
    hi *= 2;
  }
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (core_wins(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace mha
