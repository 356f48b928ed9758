// Input checks of the forward pass (weights: weights.cpp; shared value test: check.hpp).
#include <string>

#include "check.hpp"

namespace mha::detail {
namespace {

bool MatInRange(const Mat& m) { return AllInRange(m.data(), static_cast<std::size_t>(m.size())); }

}  // namespace

void CheckInputs(const Config& cfg, const Inputs& in) {
  if (in.x.cols() != cfg.d_model) {
    throw Error("The input x has " + std::to_string(in.x.cols()) + " columns but d_model = " +
                std::to_string(cfg.d_model) + ": every token vector must have d_model numbers.");
  }
  if (in.cross() && in.memory.cols() != cfg.d_model) {
    throw Error("The memory has " + std::to_string(in.memory.cols()) + " columns but d_model = " +
                std::to_string(cfg.d_model) + ": queries and keys must live in the same d_model-dimensional space.");
  }
  if (in.cross() && cfg.mask == Mask::Causal) {
    throw Error(
        "A causal mask hides later positions of the same sequence, but in cross-attention the "
        "keys come from another sentence (the memory), so there is no 'later' to hide. Use mask "
        "none with a memory sentence, or drop the memory for causal self-attention.");
  }
  // |value| <= kMaxAbsValue (false for NaN too) is what guarantees no overflow later.
  if (!MatInRange(in.x) || (in.cross() && !MatInRange(in.memory))) {
    const bool finite = in.x.allFinite() && (!in.cross() || in.memory.allFinite());
    throw Error(finite ? "The input holds values larger than " + std::to_string(int(Limits::kMaxAbsValue)) +
                             " in magnitude; such values overflow float32 inside attention. Scale the input down."
                       : std::string("The input contains NaN or Inf values; every input number must be finite."));
  }
  CheckAblation(cfg, in.ablate, static_cast<int>(in.x.rows()));
}

}  // namespace mha::detail
