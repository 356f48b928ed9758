// The value-weighted attention norms (mha/influence.hpp) a trace's files carry beside
// the attention weights: `attn_norms` in the .npz, (1, num_heads, seq, seq_kv), and in
// the JSON, [head][query][key].
#pragma once

#include <string>
#include <vector>

#include "mha/trace.hpp"

namespace mha::cli {

struct TraceNorms {
  Mat norms;         // as Trace::attn; 0 x 0 when left out
  bool json = true;  // whether the JSON has room for them too
  std::string note;  // why they were left out (of a file, or of the JSON), or ""
};
// The norms of layer `t`, unless Flash kept no weights or they would take the trace's
// memory (`held` bytes already in use) past the cap: they are as large as attn, and the
// .npz of a language model's layer is encoded in memory once more.
TraceNorms NormsFor(const Trace& t, double held);
// Appends `attn_norms` to a trace's tensors when there are norms.
void AppendNorms(const Trace& t, const TraceNorms& n, std::vector<TensorView>& tensors);

}  // namespace mha::cli
