// One core's single-precision FMA peak, the roofline mhaviz bench is compared with.
//
//   g++ -O2 -march=native scripts/fma_peak.cpp -o /tmp/fma_peak && /tmp/fma_peak
//
// 24 independent FMA chains (more than latency x pipes on any current x86 core), in
// inline assembly so the compiler cannot spill or fold them; 512-bit and 256-bit
// forms, since some cores (Zen 4) split 512-bit operations in two. Timed with the
// thread's CPU clock, so other work on the machine does not lower the number.
#include <time.h>

#include <cstdio>

namespace {

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

#define F24(op, r)                                                                          \
  op(r, 0) op(r, 1) op(r, 2) op(r, 3) op(r, 4) op(r, 5) op(r, 6) op(r, 7) op(r, 8) op(r, 9) \
      op(r, 10) op(r, 11) op(r, 12) op(r, 13) op(r, 14) op(r, 15) op(r, 16) op(r, 17)       \
          op(r, 18) op(r, 19) op(r, 20) op(r, 21) op(r, 22) op(r, 23)

#if defined(__AVX512F__)
double Zmm(long iters) {
#define ZFMA(r, i) "vfmadd231ps %%zmm30, %%zmm31, %%zmm" #i "\n"
  const double t0 = CpuSeconds();
  asm volatile("1:\n" F24(ZFMA, 0) "dec %0\n jnz 1b\n"
               : "+r"(iters)::"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                 "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17",
                 "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23");
  return CpuSeconds() - t0;
}
#endif

#if defined(__AVX512F__) || defined(__AVX2__)
double Ymm(long iters) {
#if defined(__AVX512F__)
#define YFMA(r, i) "vfmadd231ps %%ymm30, %%ymm31, %%ymm" #i "\n"
#define YBODY F24(YFMA, 0)
#else  // 16 registers: 14 chains
#define YFMA(i) "vfmadd231ps %%ymm14, %%ymm15, %%ymm" #i "\n"
#define YBODY YFMA(0) YFMA(1) YFMA(2) YFMA(3) YFMA(4) YFMA(5) YFMA(6) YFMA(7) YFMA(8) YFMA(9) \
    YFMA(10) YFMA(11) YFMA(12) YFMA(13)
#endif
  const double t0 = CpuSeconds();
  asm volatile("1:\n" YBODY "dec %0\n jnz 1b\n"
               : "+r"(iters)::"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                 "xmm9", "xmm10", "xmm11", "xmm12", "xmm13");
  return CpuSeconds() - t0;
}
#endif

}  // namespace

int main() {
  const long iters = 50000000;
#if defined(__AVX512F__)
  const int chains = 24;
#else
  const int chains = 14;
#endif
  for (int rep = 0; rep < 3; ++rep) {
#if defined(__AVX512F__)
    std::printf("512-bit FMA: %.1f GFLOP/s per core\n", iters * chains * 32.0 / Zmm(iters) / 1e9);
#endif
#if defined(__AVX512F__) || defined(__AVX2__)
    std::printf("256-bit FMA: %.1f GFLOP/s per core\n", iters * chains * 16.0 / Ymm(iters) / 1e9);
#else
    std::printf("build with -march=native on an x86-64 with AVX2 or AVX-512\n");
    return 1;
#endif
  }
  return 0;
}
