#include "cli/trace_norms.hpp"

#include "io/files.hpp"
#include "mha/influence.hpp"

namespace mha::cli {

TraceNorms NormsFor(const Trace& t, double held) {
  TraceNorms n;
  if (t.cfg.attention != Attention::Standard) return n;  // FlashNote already says no weights were kept
  const double cells = static_cast<double>(t.cfg.num_heads) * t.seq * t.seq_kv;
  if (held + 2 * 4 * cells > static_cast<double>(Limits::kMaxTraceBytes)) {
    n.note = "attn_norms (the value-weighted norms) left out: at " + std::to_string(static_cast<long long>(cells)) +
             " cells they would take the trace's memory past its cap of " +
             std::to_string(Limits::kMaxTraceBytes >> 20) + " MiB. Use fewer tokens or heads to get them.";
    return n;
  }
  n.norms = ValueWeightedNorms(t);
  // The JSON holds the attention weights too: both must fit its cap.
  n.json = 2 * cells <= static_cast<double>(io::kMaxJsonAttention);
  if (!n.json)
    n.note = "attn_norms are in the .npz only: with the attention weights they are over --json's cap of " +
             std::to_string(io::kMaxJsonAttention) + " numbers.";
  return n;
}

void AppendNorms(const Trace& t, const TraceNorms& n, std::vector<TensorView>& tensors) {
  if (n.norms.size() == 0) return;
  tensors.push_back({"attn_norms", {t.batch, t.cfg.num_heads, t.seq, t.seq_kv}, n.norms.data()});
}

}  // namespace mha::cli
