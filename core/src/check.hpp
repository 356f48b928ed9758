// Value checks shared by the forward pass (inputs, check.cpp) and the weight checks.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>

#include "mha/config.hpp"
#include "mha/trace.hpp"
#include "mha/weights.hpp"

namespace mha::detail {

// True if every |value| <= Limits::kMaxAbsValue (so no NaN or Inf either): one pass
// over the bits, which the compiler vectorises; |x| as an integer orders like |x| as
// a float, and NaN and Inf lie above every finite value (an Eigen expression for the
// same test was 1% of a 512-token pass; a scalar loop with a branch, 8% of a
// num_heads change in the app).
inline bool AllInRange(const float* p, std::size_t n) {
  std::uint32_t limit;
  const float max_abs = Limits::kMaxAbsValue;
  std::memcpy(&limit, &max_abs, sizeof limit);
  std::uint32_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, p + i, sizeof bits);
    bad |= static_cast<std::uint32_t>((bits & 0x7FFFFFFFu) > limit);
  }
  return bad == 0;
}

// True if no value is NaN or Inf: the same one vectorised pass over the bits (an
// exponent of all ones). Eigen's allFinite ran one element at a time, 2% of a
// training step at teaching size.
inline bool AllFinite(const float* p, std::size_t n) {
  std::uint32_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, p + i, sizeof bits);
    bad |= static_cast<std::uint32_t>((bits & 0x7F800000u) == 0x7F800000u);
  }
  return bad == 0;
}

// Throws mha::Error naming the weight and the first value that is NaN, Inf or larger
// than Limits::kMaxAbsValue in magnitude.
template <typename M>
void CheckValues(const char* name, const M& m) {
  if (AllInRange(m.data(), static_cast<std::size_t>(m.size()))) return;
  for (Eigen::Index i = 0; i < m.size(); ++i) {
    const float v = m.data()[i];
    if (std::abs(v) <= Limits::kMaxAbsValue) continue;
    std::ostringstream e;
    std::ostringstream where;
    if (M::RowsAtCompileTime == 1)
      where << "index " << i;
    else
      where << "row " << i / m.cols() << ", column " << i % m.cols();
    if (!std::isfinite(v))
      e << "Weight " << name << " contains NaN or Inf values (" << v << " at " << where.str()
        << "); every weight must be a finite number. Replace them (numpy.nan_to_num) or re-export the weights.";
    else
      e << "Weight " << name << " holds " << v << " at " << where.str()
        << ", over the limit of |value| <= " << Limits::kMaxAbsValue
        << " that keeps every product of the layer inside float32 (max 3.4e38). Scale the weights down.";
    throw Error(e.str());
  }
}

// Throws mha::Error with a teaching message if the inputs do not fit cfg (columns,
// causal mask with a memory) or hold NaN, Inf or values beyond Limits::kMaxAbsValue.
void CheckInputs(const Config& cfg, const Inputs& in);
// The knocked-out (or patched) heads of in.ablate fit the layer and its `rows` input
// rows (ablation.cpp).
void CheckAblation(const Config& cfg, const HeadAblation& a, int rows);

// CheckWeights without the values: for weights already checked once (Forward checks
// the values once per Weights object, and the shapes whenever the sizes change).
void CheckWeightShapes(const Weights& w, const Config& cfg);

}  // namespace mha::detail
