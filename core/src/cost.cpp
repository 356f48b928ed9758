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

ByteGroups GroupBytes(const std::vector<FlowRow>& flow) {
  ByteGroups b;
  for (const FlowRow& r : flow) {
    b.parameters += r.param_count * 4;
    std::int64_t numbers = 1;
    for (std::int64_t e : r.shape) numbers *= e;
    switch (r.id) {
      case StepId::Scores:
      case StepId::Softmax: b.weights += numbers * 4; break;
      case StepId::Input:          // the layer's input, not something it makes
      case StepId::SplitHeads:     // Q, K, V seen as heads
      case StepId::Concat: break;  // the heads' context side by side
      default: b.activations += numbers * 4; break;
    }
  }
  return b;
}

namespace {

// The smallest n >= 1 at which `wins` turns true, for a condition that stays true once
// it is: doubling to a bracket, then bisection (the counts are exact, so the answer is
// too); -1 past 2^28.
template <typename Wins>
int FirstN(Wins wins) {
  int lo = 1, hi = 1;
  while (!wins(hi)) {
    lo = hi;
    if (hi > (1 << 28)) return -1;
    hi *= 2;
  }
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (wins(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

int CoreOvertakesProjectionsAt(const Config& cfg) {
  return FirstN([&](int n) {
    const FlopGroups f = GroupFlops(ShapeFlow(cfg, n, n));
    return f.core >= f.projections;
  });
}

int WeightsOvertakeTheRestAt(const Config& cfg) {
  return FirstN([&](int n) {
    const ByteGroups b = GroupBytes(ShapeFlow(cfg, n, n));
    return b.weights >= b.activations + b.parameters;
  });
}

}  // namespace mha
