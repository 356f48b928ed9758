#include "gui/recompute.hpp"

#include <chrono>
#include <new>

namespace mha::gui {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

const Inputs& CurrentInputs(AppState& s, const Config& cfg) {
  if (!s.files.input_path.empty()) return s.files.input;
  Caches& c = s.caches;
  Caches::InputsKey key{s.choice.sentence, s.choice.cross ? s.choice.memory : std::string(), cfg.d_model,
                        cfg.seed, cfg.positional_encoding};
  if (!c.inputs_valid || !(key == c.inputs_key)) {
    c.inputs_valid = false;
    c.inputs_notice.clear();
    c.inputs = MakeInputs(key.sentence, key.memory, cfg, &c.inputs_notice);
    c.inputs_key = std::move(key);
    c.inputs_valid = true;
  }
  return c.inputs;
}

// Weights from a file, the lesson or the editor usually have no FFN weights (or
// ones for another d_ff): the encoder block then uses seeded W1, W2 with them.
std::shared_ptr<const Weights> WithFfn(Caches& c, const std::shared_ptr<const Weights>& w, const Config& cfg) {
  if (cfg.block != Block::Encoder) return w;
  if (w->ffn_W1.rows() == cfg.d_model && w->ffn_W1.cols() == cfg.ffn_dim() && w->ffn_W2.rows() == cfg.ffn_dim())
    return w;
  const Caches::WeightsKey key{cfg.d_model, 0, 0, cfg.seed, cfg.ffn_dim()};
  if (c.ffn_base != w || !(c.ffn_key == key)) {
    auto full = std::make_shared<Weights>(*w);
    InitFfnWeights(cfg, *full);
    c.ffn_base = w;
    c.with_ffn = std::move(full);
    c.ffn_key = key;
  }
  return c.with_ffn;
}

std::shared_ptr<const Weights> CurrentWeights(AppState& s, const Config& cfg) {
  if (s.files.weights) return WithFfn(s.caches, s.files.weights, cfg);
  Caches& c = s.caches;
  const Caches::WeightsKey key{cfg.d_model, cfg.num_heads, cfg.kv_heads(), cfg.seed,
                               cfg.block == Block::Encoder ? cfg.ffn_dim() : 0};
  if (!c.weights || !(key == c.weights_key)) {
    c.weights.reset();  // free the old matrices before allocating the new ones
    c.weights = std::make_shared<const Weights>(InitWeights(cfg));
    c.weights_key = key;
  }
  return c.weights;
}

void MeanOverHeads(const Trace& t, Mat& mean) {
  mean.setZero(t.seq, t.seq_kv);
  for (int h = 0; h < t.cfg.num_heads; ++h) mean += t.AttnHead(h);
  mean /= static_cast<float>(t.cfg.num_heads);
}

}  // namespace

void Recompute(AppState& s) {
  s.dirty = false;
  const auto t0 = Clock::now();
  Result& r = s.result;
  // The chips show the tokenization even when the configuration cannot run.
  auto texts = [](const std::string& sentence) {
    std::vector<std::string> out;
    for (auto& t : Tokenize(sentence, Limits::kMaxTokens).tokens) out.push_back(std::move(t.text));
    return out;
  };
  if (s.files.input_path.empty()) {
    r.tokens = texts(s.choice.sentence);
    r.memory_tokens = s.choice.cross ? texts(s.choice.memory) : std::vector<std::string>();
  } else {
    r.tokens = s.files.input.tokens;
    r.memory_tokens = s.files.input.memory_tokens;
  }
  try {
    const Config& cfg = s.choice.cfg;
    // Sizes first: never embed or initialise weights for a configuration that
    // cannot run (d_model % num_heads != 0, absurd sizes).
    Validate(cfg, 1, 1);
    const Inputs& in = CurrentInputs(s, cfg);
    const int seq = static_cast<int>(in.x.rows());
    Validate(cfg, seq, in.cross() ? static_cast<int>(in.memory.rows()) : seq);
    Forward(cfg, CurrentWeights(s, cfg), in, r.trace);
    MeanOverHeads(r.trace, r.mean_attn);
    r.ok = true;
    r.error.clear();
    r.notice = s.files.input_path.empty() ? s.caches.inputs_notice : std::string();
    ++r.generation;
  } catch (const Error& e) {
    r.ok = false;
    r.error = e.what();
  } catch (const std::bad_alloc&) {
    r.ok = false;
    r.error = "Out of memory for this configuration. Use fewer tokens, fewer heads or a smaller d_model.";
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = std::string("Unexpected error: ") + e.what();
  }
  s.timing.last_recompute_ms = MsSince(t0);
  s.timing.recompute_ms.push_back(s.timing.last_recompute_ms);
}

}  // namespace mha::gui
