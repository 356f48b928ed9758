#include "row_gemm.hpp"

#include <algorithm>

#include "gemm.hpp"

namespace mha::detail {

void RowsTimes(const float* a, int m, int k, const Mat& B, const RowVec& bias, float* out, float* pack) {
  const int n = static_cast<int>(B.cols());
  for (int j0 = 0; j0 < n; j0 += kNR) {
    const int nc = std::min(kNR, n - j0);
    const float* b = B.data() + j0;
    std::ptrdiff_t ldb = n;
    if (m > 64 || nc < kNR) {
      PackB(b, n, k, nc, pack);
      b = pack, ldb = kNR;
    }
    Panel(m, k, a, k, b, ldb, out + j0, n, nc, bias.data() + j0, 1.0f);
  }
}

}  // namespace mha::detail
