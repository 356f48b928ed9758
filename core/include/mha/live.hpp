// Live recompute: the learner's choice in, a full Trace out, fast enough to follow a
// dragged slider.
//
// An interactive view recomputes on every change, but most changes touch a small part
// of the work. Live keeps what each stage produced and redoes only the stages whose
// inputs changed:
//
//   stage                 depends on                          on a change of only ...
//   token embeddings      token text, seed (a prefix per      one word: that word is embedded
//                         d_model)
//   positional encoding   position, d_model                   (a table, grown as needed)
//   weights               d_model, K/V width, seed, d_ff      num_heads: the same weights
//   Q, K, V projections   input rows, weights                 num_heads: re-split, not recomputed;
//                                                             one word: that row re-projected
//   attention, W_O, norm  everything                          (always recomputed)
//
// The result is bit-identical to the plain pipeline
//     Forward(cfg, InitWeights(cfg), MakeInputs(sentence, memory, cfg))
// (tests/core/test_live.cpp checks it after every kind of change). `mhaviz bench --live`
// times each kind of change; the desktop app recomputes through this class.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mha/config.hpp"
#include "mha/trace.hpp"
#include "mha/weights.hpp"

namespace mha {

// What the learner chose.
struct LiveChoice {
  Config cfg;
  std::string_view sentence;               // the query sentence
  std::string_view memory;                 // "" for self-attention; else the keys' sentence
  const Inputs* inputs = nullptr;          // if set: these instead of embedding the sentences
  std::shared_ptr<const Weights> weights;  // if set: these (a file, the lesson, an edit) instead
                                           // of seeded ones; missing FFN weights are seeded
};

// What the last Live::Recompute redid before the forward pass (Trace::reuse says what
// the pass itself redid of Q, K and V).
struct LiveReport {
  int embedded = 0;  // tokens whose embedding was drawn anew (the rest came from the cache)
  enum class Weights { Kept, KvOnly, New, Given };
  Weights weights = Weights::Kept;  // seeded weights kept, K/V part rewritten, all new; or given
};

class Live {
 public:
  // Recomputes `t` (reusing its buffers and projections) and, if `mean_attn` is not
  // null, the mean over heads of t.attn. `notice` (if not null) receives the
  // tokenizer's notice (truncation, replaced bytes) or "". Throws mha::Error with a
  // teaching message, or std::bad_alloc; `t` is then stale.
  void Recompute(const LiveChoice& c, Trace& t, Mat* mean_attn = nullptr, std::string* notice = nullptr);

  // Forget every cached stage (the next Recompute starts from scratch).
  void Clear();

  const LiveReport& report() const { return report_; }

 private:
  const Inputs& CurrentInputs(const LiveChoice& c, std::string* notice);
  const float* Embedding(const std::string& token, int d_model, std::uint64_t seed);
  void EmbedInto(const std::vector<std::string>& tokens, const Config& cfg, Mat& x);
  std::shared_ptr<const Weights> CurrentWeights(const LiveChoice& c);

  // Inputs built from the last sentences.
  std::string sentence_, memory_;
  int inputs_d_ = 0;
  std::uint64_t inputs_seed_ = 0;
  bool inputs_pe_ = false, inputs_valid_ = false;
  Inputs inputs_;
  std::string notice_;

  // Token embeddings for embed_seed_ (each at least as long as the last d_model it
  // served), and the positional-encoding rows for pe_d_.
  std::unordered_map<std::string, RowVec> embeddings_;
  std::uint64_t embed_seed_ = 0;
  Mat pe_;
  int pe_d_ = 0;

  // Seeded weights, and given weights completed with seeded FFN weights.
  struct WeightsKey {
    int d_model = 0, kv_width = 0;
    std::uint64_t seed = 0;
    int d_ff = 0;  // 0: attention only
    bool operator==(const WeightsKey& o) const {
      return d_model == o.d_model && kv_width == o.kv_width && seed == o.seed && d_ff == o.d_ff;
    }
  };
  WeightsKey weights_key_;
  std::shared_ptr<const Weights> weights_;
  std::shared_ptr<Weights> spare_;  // the set before, rewritten in place by the next change
  WeightsKey spare_key_;
  WeightsKey ffn_key_;
  std::shared_ptr<const Weights> ffn_base_, with_ffn_;

  LiveReport report_;
};

// The mean over heads of t.attn, (seq, seq_kv), into `mean` (no allocation when the
// shape is unchanged).
void MeanAttention(const Trace& t, Mat& mean);

}  // namespace mha
