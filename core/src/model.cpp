#include "mha/model.hpp"

#include <cmath>
#include <string>

#include "check.hpp"
#include "init.hpp"
#include "mha/embed.hpp"
#include "mha/forward.hpp"
#include "gemm.hpp"
#include "rng.hpp"
#include "row_gemm.hpp"
#include "workspace.hpp"

namespace mha {

const char* ToString(Positional p) {
  switch (p) {
    case Positional::Sinusoidal: return "sinusoidal";
    case Positional::Learned: return "learned";
    case Positional::None: return "none";
  }
  return "?";
}

Config ModelConfig::LayerConfig() const {
  Config c = layer;
  c.positional_encoding = false;
  return c;
}

std::int64_t ParameterCount(const ModelConfig& cfg) {
  const Config c = cfg.LayerConfig();
  const std::int64_t d = c.d_model, V = cfg.vocab_size(), kvd = std::int64_t(c.kv_heads()) * c.head_dim();
  std::int64_t layer = 2 * d * d + 2 * d * kvd + 2 * d + 2 * kvd + 2 * d;
  if (c.block == Block::Encoder) layer += 2 * d * c.ffn_dim() + c.ffn_dim() + d + 2 * d;
  std::int64_t n = V * d + cfg.num_layers * layer + cfg.num_targets * (d * V + V);
  if (cfg.positional == Positional::Learned) n += std::int64_t(cfg.max_seq) * d;
  if (c.norm == Norm::Pre) n += 2 * d;
  return n;
}

namespace {
std::string Mib(double bytes) { return std::to_string(static_cast<long long>(bytes / (1 << 20))); }
}  // namespace

std::string MemoryEstimate::Text() const {
  return "about " + Mib(total()) + " MiB: " + Mib(activations) + " MiB of activations, " + Mib(logits) +
         " MiB of logits, " + Mib(params) + " MiB of parameters";
}

const char* MemoryEstimate::Largest() const {
  if (logits >= activations && logits >= params) return "logits";
  return activations >= params ? "activations" : "parameters";
}

MemoryEstimate EstimateModelRun(const ModelConfig& cfg, int seq) {
  MemoryEstimate e;
  e.activations = static_cast<double>(EstimateTraceBytes(cfg.LayerConfig(), seq, seq)) * cfg.num_layers;
  e.logits = 4.0 * seq * cfg.num_targets * cfg.vocab_size();
  e.params = 4.0 * static_cast<double>(ParameterCount(cfg));
  return e;
}

MemoryEstimate EstimateEvaluation(const ModelConfig& cfg, int batch, int seq) {
  MemoryEstimate e = EstimateModelRun(cfg, seq);
  e.activations *= batch;
  e.logits *= batch;
  e.params = 0;  // the model's own weights, counted once by the training pass
  return e;
}

MemoryEstimate EstimateTrainingStep(const ModelConfig& cfg, int batch, int seq) {
  MemoryEstimate e = EstimateEvaluation(cfg, batch, seq);
  e.activations *= 1.25;
  e.params = 24.0 * static_cast<double>(ParameterCount(cfg));
  return e;
}

void Validate(const ModelConfig& cfg) {
  auto fail = [](const std::string& m) { throw Error(m); };
  if (cfg.num_layers < 1 || cfg.num_layers > ModelLimits::kMaxLayers)
    fail("The model has " + std::to_string(cfg.num_layers) + " layers; choose 1 to " +
         std::to_string(ModelLimits::kMaxLayers) + " (each layer is one attention block).");
  if (cfg.vocab_size() < 2 || cfg.vocab_size() > ModelLimits::kMaxVocab)
    fail("The vocabulary has " + std::to_string(cfg.vocab_size()) + " tokens; a model needs 2 to " +
         std::to_string(ModelLimits::kMaxVocab) + ".");
  if (cfg.max_seq < 1 || cfg.max_seq > ModelLimits::kMaxSeq)
    fail("max_seq = " + std::to_string(cfg.max_seq) + " is outside 1.." + std::to_string(ModelLimits::kMaxSeq) + ".");
  if (cfg.num_targets < 1 || cfg.num_targets > ModelLimits::kMaxTargets)
    fail("A model predicts 1 to " + std::to_string(ModelLimits::kMaxTargets) + " targets per position; got " +
         std::to_string(cfg.num_targets) + ".");
  if (cfg.layer.d_model > ModelLimits::kMaxDModel)
    fail("d_model = " + std::to_string(cfg.layer.d_model) + " is over the training limit of " +
         std::to_string(ModelLimits::kMaxDModel) + "; a model this wide would not train in minutes here.");
  Validate(cfg.LayerConfig(), cfg.max_seq, cfg.max_seq);  // the layer's own teaching checks
  const std::int64_t params = ParameterCount(cfg);
  if (params > ModelLimits::kMaxParams)
    fail("The model would have " + std::to_string(params) + " parameters, over the limit of " +
         std::to_string(ModelLimits::kMaxParams) + ". Use a smaller d_model, d_ff, vocabulary or fewer layers.");
}

namespace {

void Normal(std::uint64_t seed, const char* name, Mat& m) {
  detail::SplitMix64 rng(detail::StreamSeed(seed, name));
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.Normal();
}

std::uint64_t LayerSeed(std::uint64_t seed, int i) { return detail::StreamSeed(seed, "layers." + std::to_string(i)); }

}  // namespace

Model InitModel(const ModelConfig& cfg) {
  Validate(cfg);
  Model m;
  m.cfg = cfg;
  const int d = cfg.layer.d_model, V = cfg.vocab_size();
  const std::uint64_t seed = cfg.layer.seed;
  m.tok_embed.resize(V, d);
  Normal(seed, "tok_embed", m.tok_embed);
  if (cfg.positional == Positional::Learned) {
    m.pos_embed.resize(cfg.max_seq, d);
    Normal(seed, "pos_embed", m.pos_embed);
  }
  for (int i = 0; i < cfg.num_layers; ++i) {
    Config lc = cfg.LayerConfig();
    lc.seed = LayerSeed(seed, i);
    m.layers.push_back(std::make_shared<Weights>(InitWeights(lc)));
  }
  if (cfg.layer.norm == Norm::Pre) {
    m.lnf_gamma = RowVec::Ones(d);
    m.lnf_beta = RowVec::Zero(d);
  }
  const double a = 1.0 / std::sqrt(static_cast<double>(d));
  for (int k = 0; k < cfg.num_targets; ++k) {
    const std::string u = "unembed." + std::to_string(k), b = "unembed_b." + std::to_string(k);
    Mat w(d, V);
    detail::FillSymmetric(detail::StreamSeed(seed, u), a, w.data(), static_cast<std::size_t>(w.size()));
    RowVec bias(V);
    detail::FillSymmetric(detail::StreamSeed(seed, b), a, bias.data(), static_cast<std::size_t>(V));
    m.unembed.push_back(std::move(w));
    m.unembed_b.push_back(std::move(bias));
  }
  return m;
}

Model ZerosLike(const Model& src) {
  Model m;
  m.cfg = src.cfg;
  m.tok_embed = Mat::Zero(src.tok_embed.rows(), src.tok_embed.cols());
  m.pos_embed = Mat::Zero(src.pos_embed.rows(), src.pos_embed.cols());
  for (const auto& l : src.layers) {
    auto w = std::make_shared<Weights>(*l);
    ForEachWeight(*w, src.cfg.LayerConfig(), [](const WeightSpec&, auto& t) { t.setZero(); });
    // Tensors the configuration does not use (none today) keep their shape at zero too.
    m.layers.push_back(std::move(w));
  }
  m.lnf_gamma = RowVec::Zero(src.lnf_gamma.size());
  m.lnf_beta = RowVec::Zero(src.lnf_beta.size());
  for (const auto& u : src.unembed) m.unembed.push_back(Mat::Zero(u.rows(), u.cols()));
  for (const auto& b : src.unembed_b) m.unembed_b.push_back(RowVec::Zero(b.size()));
  return m;
}

Model Clone(const Model& src) {
  Model m = src;
  for (auto& l : m.layers) l = std::make_shared<Weights>(*l);
  return m;
}

std::int64_t ParamView::size() const {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

std::vector<ParamView> Parameters(Model& m) {
  std::vector<ParamView> v;
  ForEachTensor(m, [&](const char* name, int index, auto& t) {
    using T = std::decay_t<decltype(t)>;
    std::string key = ParamKey(name, index);
    std::vector<std::int64_t> shape;
    if constexpr (T::RowsAtCompileTime == 1)
      shape = {t.size()};
    else
      shape = {t.rows(), t.cols()};
    v.push_back({std::move(key), std::move(shape), t.data()});
  });
  return v;
}

std::string ParamKey(const char* name, int index) {
  if (index < 0) return name;
  const std::string n = name;
  if (n == "unembed" || n == "unembed_b") return n + "." + std::to_string(index);
  return "layers." + std::to_string(index) + "." + n;
}

void SetZero(Model& m) {
  ForEachTensor(m, [](const char*, int, auto& t) { t.setZero(); });
}

void CheckModel(const Model& m) {
  Validate(m.cfg);
  const ModelConfig& c = m.cfg;
  const std::int64_t d = c.layer.d_model, V = c.vocab_size();
  auto shape = [](const std::string& name, Eigen::Index r, Eigen::Index cols, std::int64_t er, std::int64_t ec) {
    if (r != er || cols != ec)
      throw Error("Model tensor '" + name + "' has shape (" + std::to_string(r) + ", " + std::to_string(cols) +
                  ") but the model's configuration needs (" + std::to_string(er) + ", " + std::to_string(ec) + ").");
  };
  shape("tok_embed", m.tok_embed.rows(), m.tok_embed.cols(), V, d);
  if (c.positional == Positional::Learned) shape("pos_embed", m.pos_embed.rows(), m.pos_embed.cols(), c.max_seq, d);
  if (static_cast<int>(m.layers.size()) != c.num_layers)
    throw Error("The model has weights for " + std::to_string(m.layers.size()) + " layers but its configuration says " +
                std::to_string(c.num_layers) + ".");
  const Config lc = c.LayerConfig();
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    if (!m.layers[i]) throw Error("Layer " + std::to_string(i) + " has no weights.");
    try {
      CheckWeights(*m.layers[i], lc);
    } catch (const Error& e) {
      throw Error("Layer " + std::to_string(i) + ": " + e.what());
    }
  }
  if (c.layer.norm == Norm::Pre) {
    shape("lnf_gamma", 1, m.lnf_gamma.size(), 1, d);
    shape("lnf_beta", 1, m.lnf_beta.size(), 1, d);
  }
  if (static_cast<int>(m.unembed.size()) != c.num_targets || static_cast<int>(m.unembed_b.size()) != c.num_targets)
    throw Error("The model has " + std::to_string(m.unembed.size()) +
                " unembedding heads but its configuration "
                "says num_targets = " +
                std::to_string(c.num_targets) + ".");
  for (int k = 0; k < c.num_targets; ++k) {
    shape("unembed." + std::to_string(k), m.unembed[k].rows(), m.unembed[k].cols(), d, V);
    shape("unembed_b." + std::to_string(k), 1, m.unembed_b[k].size(), 1, V);
  }
  const std::string bad = OutOfRangeParameter(m);
  if (!bad.empty())
    throw Error("Model tensor '" + bad + "' holds NaN, Inf or a value beyond |" +
                std::to_string(static_cast<int>(Limits::kMaxAbsValue)) +
                "|; every weight must be a finite number of moderate size.");
}

std::string OutOfRangeParameter(const Model& m) {
  Model& mm = const_cast<Model&>(m);  // Parameters() only hands out pointers; nothing is written
  for (const ParamView& p : Parameters(mm))
    if (!detail::AllInRange(p.data, static_cast<std::size_t>(p.size()))) return p.name;
  return "";
}

void EmbedTokens(const Model& m, const int* tokens, int seq, float* out) {
  const int d = m.cfg.layer.d_model;
  Eigen::Map<Mat> x(out, seq, d);
  for (int i = 0; i < seq; ++i) x.row(i) = m.tok_embed.row(tokens[i]);
  if (m.cfg.positional == Positional::Learned) {
    x += m.pos_embed.topRows(seq);
  } else if (m.cfg.positional == Positional::Sinusoidal) {
    x += PositionalEncoding(seq, d);
  }
}

std::vector<std::string> TokenLabels(const ModelConfig& cfg, const std::vector<int>& tokens) {
  std::vector<std::string> v;
  v.reserve(tokens.size());
  for (int t : tokens) v.push_back(t >= 0 && t < cfg.vocab_size() ? cfg.vocab[t] : "?");
  return v;
}

const Mat& ModelTrace::Output() const {
  const Trace& t = layers.back();
  return t.cfg.block == Block::Encoder ? t.block_out : t.out;
}

const Mat& ModelTrace::Head() const { return final_ln.size() > 0 ? final_ln : Output(); }

void RunModel(const Model& m, const std::vector<int>& tokens, ModelTrace& out,
              const std::vector<HeadAblation>* ablate) {
  const ModelConfig& c = m.cfg;
  const int seq = static_cast<int>(tokens.size());
  if (ablate && static_cast<int>(ablate->size()) != c.num_layers)
    throw Error("The ablation names " + std::to_string(ablate->size()) + " layers but the model has " +
                std::to_string(c.num_layers) + ".");
  if (seq < 1 || seq > c.max_seq)
    throw Error("The model takes 1 to " + std::to_string(c.max_seq) + " tokens (its max_seq); got " +
                std::to_string(seq) + ".");
  for (int i = 0; i < seq; ++i)
    if (tokens[i] < 0 || tokens[i] >= c.vocab_size())
      throw Error("Token id " + std::to_string(tokens[i]) + " at position " + std::to_string(i) +
                  " is outside the model's vocabulary of " + std::to_string(c.vocab_size()) + " tokens (ids 0 to " +
                  std::to_string(c.vocab_size() - 1) + ").");
  // Every layer's trace is kept, and the logits beside them: the cap applies to all of
  // them together (each layer's own Validate sees only one; 16 targets of a 65,536-piece
  // vocabulary over 1,024 tokens are 4 GiB of logits alone).
  const MemoryEstimate need = EstimateModelRun(c, seq);
  if (need.activations + need.logits > static_cast<double>(Limits::kMaxTraceBytes)) {
    const bool logits = need.logits > need.activations;
    throw Error(
        "Tracing all " + std::to_string(c.num_layers) + " layers of this model on " + std::to_string(seq) +
        " tokens would need about " + Mib(need.activations + need.logits) + " MiB (" + Mib(need.activations) +
        " MiB of traces, " + Mib(need.logits) + " MiB of logits: " + std::to_string(seq) + " tokens x " +
        std::to_string(c.num_targets) + " target(s) x " + std::to_string(c.vocab_size()) +
        " vocabulary), over the cap of " + std::to_string(Limits::kMaxTraceBytes >> 20) + " MiB. Give fewer tokens" +
        (logits
             ? " (the " + std::to_string(c.num_targets * c.vocab_size()) + " logits of every token are what is large)."
             : "."));
  }
  out.tokens = tokens;
  out.x.resize(seq, c.layer.d_model);
  EmbedTokens(m, tokens.data(), seq, out.x.data());
  out.layers.resize(c.num_layers);
  const Config lc = c.LayerConfig();
  Inputs in;
  in.tokens = TokenLabels(c, tokens);
  in.x = out.x;
  for (int l = 0; l < c.num_layers; ++l) {
    // The model's weights may have been trained in place since the last call.
    out.layers[l].workspace.get().ForgetWeights();
    in.ablate = ablate ? (*ablate)[l] : HeadAblation();
    Forward(lc, m.layers[l], in, out.layers[l]);
    const Trace& t = out.layers[l];
    in.x = t.cfg.block == Block::Encoder ? t.block_out : t.out;
  }
  if (c.layer.norm == Norm::Pre)
    LayerNormRows(out.Output(), m.lnf_gamma, m.lnf_beta, c.layer.ln_eps, out.final_ln);
  else
    out.final_ln.resize(0, 0);
  // The unembedding on the forward pass's kernel: a decode step's one row gets these
  // very bits (mha/decode.hpp).
  out.logits.resize(c.num_targets);
  std::vector<float> pack(detail::PanelFloats(c.layer.d_model));
  for (int k = 0; k < c.num_targets; ++k) {
    out.logits[k].resize(seq, c.vocab_size());
    detail::RowsTimes(out.Head().data(), seq, c.layer.d_model, m.unembed[k], m.unembed_b[k], out.logits[k].data(),
                      pack.data());
  }
}

}  // namespace mha
