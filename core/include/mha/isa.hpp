// Which vector instructions this build's kernels use (core/src/simd.hpp). The path is
// chosen when mhaviz is compiled, by the compiler's target: -march=native (the default,
// MHAVIZ_NATIVE), -march=x86-64-v4 (AVX-512), -march=x86-64-v3 (AVX2 + FMA), or no
// -march at all (the portable path). Benchmarks print it beside their numbers.
#pragma once

namespace mha {

struct KernelIsa {
  const char* name;          // "avx512", "avx2", "portable" or "scalar"
  const char* description;   // e.g. "AVX2 + FMA, 8 floats a vector"
  int floats;                // floats per vector: 16, 8 or 4
  int tile_rows, tile_cols;  // the GEMM micro-kernel's block of C held in registers
};

// The path compiled into this build.
KernelIsa BuildKernelIsa();

// Whether the CPU running now could take the AVX-512 path (a build for x86-64-v4 or
// -march=native on this CPU would use it); false off x86.
bool CpuHasAvx512();

}  // namespace mha
