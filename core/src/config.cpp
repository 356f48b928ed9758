#include "mha/config.hpp"

#include <cmath>
#include <sstream>

namespace mha {

const char* ToString(Mask m) { return m == Mask::Causal ? "causal" : "none"; }
const char* ToString(Norm n) {
  switch (n) {
    case Norm::Post: return "post";
    case Norm::Pre: return "pre";
    default: return "none";
  }
}
const char* ToString(Block b) { return b == Block::Encoder ? "encoder" : "attention"; }
const char* ToString(Activation a) { return a == Activation::Gelu ? "gelu" : "relu"; }
const char* ToString(Attention a) { return a == Attention::Flash ? "flash" : "standard"; }

std::vector<int> ValidHeadCounts(int d_model) {
  std::vector<int> out;
  for (int h = 1; h <= d_model && h <= Limits::kMaxHeads; ++h)
    if (d_model % h == 0) out.push_back(h);
  return out;
}

std::vector<int> CommonHeadCounts(int d_model) {
  // Powers of two and three times them: the head counts of published models.
  static constexpr int kCommon[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256};
  std::vector<int> out;
  for (int h : kCommon)
    if (h <= d_model && h <= Limits::kMaxHeads && d_model % h == 0) out.push_back(h);
  return out;
}

std::pair<int, int> NearestValidDModel(int d_model, int num_heads) {
  if (num_heads <= 0) return {d_model, d_model};
  int below = d_model - d_model % num_heads;
  if (below < num_heads) below = num_heads;
  int above = below < d_model ? below + num_heads : below;
  return {below, above};
}

std::size_t EstimateTraceBytes(const Config& cfg, int seq, int seq_kv) {
  const std::size_t s = seq, skv = seq_kv, d = cfg.d_model, h = cfg.num_heads;
  const std::size_t g = cfg.kv_heads(), hd = cfg.head_dim();
  std::size_t floats = 0;
  if (cfg.attention == Attention::Standard) floats += 2 * h * s * skv;  // scores, attn (Flash keeps none)
  floats += 2 * h * s * hd;                                             // q, context
  floats += 2 * g * skv * hd;                                           // k, v
  floats += 7 * s * d + skv * d;  // x, x_ln, concat, attn_out, residual, out, memory
  floats += 4 * d * d + 8 * d;    // weights
  if (cfg.block == Block::Encoder) {
    const std::size_t f = cfg.ffn_dim();
    floats += s * f + 4 * s * d;      // ffn_hidden; ffn_ln, ffn_out, ffn_residual, block_out
    floats += 2 * d * f + f + 3 * d;  // ffn_W1, ffn_W2, biases, ln2
  }
  return floats * sizeof(float);
}

std::size_t EstimateStepTraceBytes(const Config& cfg, int seq) {
  // ForwardBatch's for_backward pass keeps less than a whole trace: no scores, context,
  // attn_out or ffn_out, nor (but for post-LN) the residual sums; it adds per row the
  // LayerNorms' statistics (2 doubles each) and, for a GELU encoder block, GELU' (seq,
  // d_ff). The larger of that and the whole trace, on which the step's memory factor
  // was measured.
  const std::size_t s = seq, d = cfg.d_model, h = cfg.num_heads;
  const bool enc = cfg.block == Block::Encoder, post = cfg.norm == Norm::Post;
  const std::size_t dropped = h * s * s + 2 * s * d + (enc ? s * d : 0) + (post ? 0 : (enc ? 2 : 1) * s * d);
  const std::size_t stats = cfg.norm == Norm::None ? 0 : (enc ? 8 : 4) * s;
  const std::size_t act_grad = enc && cfg.activation == Activation::Gelu ? s * cfg.ffn_dim() : 0;
  const std::size_t whole = EstimateTraceBytes(cfg, seq, seq);
  const std::size_t lean = whole + (stats + act_grad) * sizeof(float);
  return std::max(whole, lean > dropped * sizeof(float) ? lean - dropped * sizeof(float) : 0);
}

namespace {
std::string Join(const std::vector<int>& v, std::size_t max_items) {
  std::ostringstream os;
  for (std::size_t i = 0; i < v.size() && i < max_items; ++i) os << (i ? ", " : "") << v[i];
  if (v.size() > max_items) os << ", ...";
  return os.str();
}

// "= 1", "= 1 or 2", "in {1, 2, 4, 8}": the common head counts d_model takes.
std::string HeadChoices(int d_model) {
  const std::vector<int> h = CommonHeadCounts(d_model);
  if (h.size() == 1) return "= 1";
  if (h.size() == 2) return "= " + std::to_string(h[0]) + " or " + std::to_string(h[1]);
  return "in {" + Join(h, 12) + "}";
}
}  // namespace

void Validate(const Config& cfg, int seq, int seq_kv) {
  std::ostringstream e;
  if (cfg.d_model <= 0) {
    e << "d_model = " << cfg.d_model << " must be greater than 0: it is the length of every token vector. Try 512.";
    throw Error(e.str());
  }
  if (cfg.d_model > Limits::kMaxDModel) {
    e << "d_model = " << cfg.d_model << " is over the cap of " << Limits::kMaxDModel
      << ", which keeps memory bounded. Try 512 or 1024.";
    throw Error(e.str());
  }
  if (cfg.num_heads <= 0) {
    e << "num_heads = " << cfg.num_heads << " must be at least 1. Try 8.";
    throw Error(e.str());
  }
  if (cfg.num_heads > Limits::kMaxHeads) {
    e << "num_heads = " << cfg.num_heads << " is over the cap of " << Limits::kMaxHeads << ". Try 8 or 16.";
    throw Error(e.str());
  }
  if (cfg.num_heads > cfg.d_model) {
    e << "num_heads = " << cfg.num_heads << " is more than d_model = " << cfg.d_model
      << ": each head needs at least one of the d_model dimensions. Try num_heads " << HeadChoices(cfg.d_model) << ".";
    throw Error(e.str());
  }
  if (cfg.d_model % cfg.num_heads != 0) {
    auto [lo, hi] = NearestValidDModel(cfg.d_model, cfg.num_heads);
    e << "d_model = " << cfg.d_model << " is not divisible by num_heads = " << cfg.num_heads
      << ": each head gets d_model / num_heads dimensions, which must be a whole number. Try d_model = " << lo;
    if (hi != lo) e << " or " << hi;
    e << ", or num_heads " << HeadChoices(cfg.d_model) << ".";
    throw Error(e.str());
  }
  if (cfg.num_kv_heads < 0) {
    e << "num_kv_heads = " << cfg.num_kv_heads << " must be at least 1 (or 0 for 'same as num_heads').";
    throw Error(e.str());
  }
  const int g = cfg.kv_heads();
  if (g > cfg.num_heads || cfg.num_heads % g != 0) {
    std::vector<int> ok;
    for (int i = 1; i <= cfg.num_heads; ++i)
      if (cfg.num_heads % i == 0) ok.push_back(i);
    e << "num_heads = " << cfg.num_heads << " is not divisible by num_kv_heads = " << g
      << ": in grouped-query attention each key/value head serves num_heads / num_kv_heads query heads,"
      << " which must be a whole number. Try num_kv_heads in {" << Join(ok, 12) << "} (1 is multi-query attention, "
      << cfg.num_heads << " is plain multi-head attention).";
    throw Error(e.str());
  }
  if (!(cfg.temperature > 0.0f) || !std::isfinite(cfg.temperature)) {
    e << "temperature = " << cfg.temperature
      << " must be a finite number greater than 0: scores are divided by it before the softmax. Try 1.";
    throw Error(e.str());
  }
  if (cfg.temperature < Limits::kMinTemperature) {
    e << "temperature = " << cfg.temperature << " is below the minimum of " << Limits::kMinTemperature
      << ": dividing the scores by so small a number overflows float32. Already at " << Limits::kMinTemperature
      << " the softmax is practically one-hot (argmax). Try 0.1 for sharp, 1 for normal.";
    throw Error(e.str());
  }
  if (!(cfg.ln_eps > 0.0f) || !std::isfinite(cfg.ln_eps)) {
    e << "ln_eps = " << cfg.ln_eps
      << " must be a small positive number: LayerNorm divides by sqrt(variance + eps). Try 1e-5.";
    throw Error(e.str());
  }
  if (cfg.threads < 0 || cfg.threads > Limits::kMaxThreads) {
    e << "threads = " << cfg.threads << " must be between 0 (use every core) and " << Limits::kMaxThreads
      << ". Try 1 or 2.";
    throw Error(e.str());
  }
  if (cfg.block == Block::Encoder && (cfg.d_ff < 0 || cfg.ffn_dim() > Limits::kMaxDFf)) {
    // The value given (a negative one is not the default 4 x d_model it would compute).
    e << "d_ff = " << (cfg.d_ff < 0 ? cfg.d_ff : cfg.ffn_dim())
      << " is not a usable feed-forward width: it must be at least 1 and at most " << Limits::kMaxDFf
      << " (the cap keeps memory bounded). The usual choice is 4 x d_model = " << 4 * cfg.d_model << ", the default.";
    throw Error(e.str());
  }
  if (seq <= 0) {
    throw Error("The sentence has no tokens: type at least one word, e.g. \"the cat sat\".");
  }
  if (seq_kv <= 0) {
    throw Error("The memory sentence has no tokens: cross-attention needs at least one key.");
  }
  const bool flash = cfg.attention == Attention::Flash;
  if (flash) {
    for (const auto& [name, v] : {std::pair<const char*, int>{"flash_br", cfg.flash_br}, {"flash_bc", cfg.flash_bc}})
      if (v < 0 || v > Limits::kMaxFlashTile) {
        e << name << " = " << v << " is not a usable tile size: a tile of Flash attention has 1 to "
          << Limits::kMaxFlashTile << " rows (Br) and columns (Bc), or 0 for the default. Try 64.";
        throw Error(e.str());
      }
  }
  const int cap = flash ? Limits::kMaxFlashTokens : Limits::kMaxTokens;
  if (seq > cap || seq_kv > cap) {
    e << "The sequence has " << std::max(seq, seq_kv) << " tokens, over the cap of " << cap;
    if (flash)
      e << " for Flash attention, which keeps memory linear in the tokens but still holds q, k, v and context.";
    else
      e << " that keeps the attention maps (seq x seq per head) in memory. Flash attention computes the same "
           "context tile by tile without them, up to "
        << Limits::kMaxFlashTokens << " tokens.";
    throw Error(e.str());
  }
  const std::size_t bytes = EstimateTraceBytes(cfg, seq, seq_kv);
  if (bytes > Limits::kMaxTraceBytes) {
    e << "This configuration would need about " << (bytes >> 20) << " MiB for its trace ("
      << (flash ? "q, k, v, context and the layer's other tensors" : "num_heads x seq x seq attention weights and more")
      << "), over the cap of " << (Limits::kMaxTraceBytes >> 20)
      << " MiB. Use fewer tokens, fewer heads or a smaller d_model.";
    if (!flash)
      e << " (Flash attention keeps no seq x seq matrix: it needs about "
        << (EstimateTraceBytes(
                [&] {
                  Config f = cfg;
                  f.attention = Attention::Flash;
                  return f;
                }(),
                seq, seq_kv) >>
            20)
        << " MiB here.)";
    throw Error(e.str());
  }
}

}  // namespace mha
