// Inputs and weights from .npz files, checked against the configuration.
#include <cmath>
#include <optional>
#include <sstream>

#include "files.hpp"

namespace mha::io {
namespace {

Mat SeqMatrix(const Array& a, const std::string& key, const std::string& path) {
  const auto& s = a.shape;
  std::int64_t seq = 0, d = 0;
  if (s.size() == 2) {
    seq = s[0];
    d = s[1];
  } else if (s.size() == 3 && s[0] == 1) {
    seq = s[1];
    d = s[2];
  } else {
    throw Error("'" + path + "': array '" + key + "' has shape " + ShapeString(s) +
                "; it must be (seq, d_model) or (1, seq, d_model) (batch 1: mhaviz shows one sentence).");
  }
  if (seq <= 0 || d <= 0)
    throw Error("'" + path + "': array '" + key + "' has shape " + ShapeString(s) + ", which holds no tokens.");
  Mat m(seq, d);
  std::copy(a.data.begin(), a.data.end(), m.data());
  return m;
}

// "W_q, W_k, W_v and W_o": the names of one sublayer's required (or optional) tensors.
std::string Names(const Config& cfg, bool ffn, bool required) {
  std::vector<std::string> names;
  const Weights none;
  ForEachWeight(none, cfg, [&](const WeightSpec& s, const auto&) {
    if (s.ffn == ffn && s.required == required) names.push_back(s.name);
  });
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() && required ? " and " : ", ") + names[i];
  return text;
}

// One tensor from the file, in the shape the spec gives it; an optional tensor the
// file leaves out takes its default (LayerNorm's gamma 1, everything else 0).
// `consume`, if set, is `npz` itself: each array is freed once copied, so the file's
// arrays and the weights are not both held whole (1.5 GB for the largest encoder).
using NpzArrays = std::map<std::string, Array>;
template <typename M>
void Take(const NpzArrays& npz, NpzArrays* consume, const WeightSpec& s, const std::string& path, const Config& cfg,
          M& out) {
  const auto it = npz.find(s.name);
  if (it == npz.end()) {
    if (s.required)
      throw Error("'" + path + "' has no array '" + s.name + "'. A weights file needs " + Names(cfg, false, true) +
                  " (" + Names(cfg, false, false) + " are optional).");
    out.setConstant(s.rows, s.cols, s.fill);
    return;
  }
  const Array& a = it->second;
  const bool fits = s.vector ? (a.shape.size() == 1 && a.shape[0] == s.cols)
                             : (a.shape.size() == 2 && a.shape[0] == s.rows && a.shape[1] == s.cols);
  if (!fits) {
    std::ostringstream e;
    e << "'" << path << "': weight '" << s.name << "' has shape " << ShapeString(a.shape)
      << " but the configuration needs " << (s.vector ? ShapeString({s.cols}) : ShapeString({s.rows, s.cols}))
      << ". Check d_model, num_heads and num_kv_heads (--d-model, --heads, --kv-heads) against the file.";
    throw Error(e.str());
  }
  out.resize(s.rows, s.cols);
  std::copy(a.data.begin(), a.data.end(), out.data());
  if (consume) consume->erase(s.name);
}

// One sublayer's tensors (attention, or the encoder block's FFN): the required ones
// first, so a file missing W_k says so before any bias's shape is questioned.
void TakeSublayer(const NpzArrays& npz, NpzArrays* consume, const std::string& path, const Config& cfg, bool ffn,
                  Weights& w) {
  for (const bool required : {true, false})
    ForEachWeight(w, cfg, [&](const WeightSpec& s, auto& m) {
      if (s.ffn == ffn && s.required == required) Take(npz, consume, s, path, cfg, m);
    });
}

// The encoder block's FFN weights. d_ff is read from ffn_W1 unless --d-ff gave it.
void TakeFfn(const NpzArrays& npz, NpzArrays* consume, const std::string& path, Config* cfg, Weights& w) {
  const Eigen::Index d = cfg->d_model;
  const Weights none;
  ForEachWeight(none, *cfg, [&](const WeightSpec& s, const auto&) {
    if (s.ffn && s.required && npz.find(s.name) == npz.end())
      throw Error("'" + path + "' has no array '" + s.name +
                  "'. For the encoder block (--block encoder) a weights file "
                  "also needs ffn_W1 (d_model, d_ff) and ffn_W2 (d_ff, d_model); ffn_b1, ffn_b2, ln2_gamma and "
                  "ln2_beta are optional. Leave out --block encoder to run attention only.");
  });
  const Array& w1 = npz.at("ffn_W1");
  if (w1.shape.size() == 2 && w1.shape[0] == d && cfg->d_ff == 0 && w1.shape[1] > 0 && w1.shape[1] <= Limits::kMaxDFf)
    cfg->d_ff = static_cast<int>(w1.shape[1]);
  const Eigen::Index f = cfg->ffn_dim();
  if (w1.shape.size() != 2 || w1.shape[0] != d || w1.shape[1] != f)
    throw Error("'" + path + "': weight 'ffn_W1' has shape " + ShapeString(w1.shape) + " but d_model = " +
                std::to_string(d) + " and d_ff = " + std::to_string(f) + " need " + ShapeString({d, f}) +
                ". Check d_model and d_ff (--d-model, --d-ff) against the file (d_ff left at 0 reads it from "
                "the file).");
  TakeSublayer(npz, consume, path, *cfg, /*ffn=*/true, w);
}

}  // namespace

Inputs InputsFromNpz(const std::map<std::string, Array>& npz, const std::string& path) {
  const auto it = npz.find("x");
  if (it == npz.end())
    throw Error("'" + path + "' has no array 'x'. An input file needs x of shape (seq, d_model) or (1, seq, d_model).");
  Inputs in;
  in.x = SeqMatrix(it->second, "x", path);
  for (Eigen::Index i = 0; i < in.x.rows(); ++i) in.tokens.push_back("#" + std::to_string(i));
  const auto m = npz.find("memory");
  if (m != npz.end()) {
    in.memory = SeqMatrix(m->second, "memory", path);
    for (Eigen::Index i = 0; i < in.memory.rows(); ++i) in.memory_tokens.push_back("m" + std::to_string(i));
  }
  return in;
}

NpzFilter InputsFilter(const std::string& path) {
  NpzFilter f;
  f.wanted = [](const std::string& key) { return key == "x" || key == "memory"; };
  f.check = [path](const std::string& key, const NpyInfo& info) {
    const auto& s = info.shape;
    const bool batch1 = s.size() == 3 && s[0] == 1;
    if (s.size() != 2 && !batch1) return;  // SeqMatrix explains the shape
    const std::int64_t seq = s[s.size() - 2], d = s.back();
    // The token cap is explained by the configuration check; this only keeps a file that
    // claims far more from being inflated first.
    if (seq > 4 * Limits::kMaxTokens || d > Limits::kMaxDModel)
      throw Error("'" + path + "': array '" + key + "' has shape " + ShapeString(s) + "; mhaviz takes at most " +
                  std::to_string(Limits::kMaxTokens) + " tokens of d_model at most " +
                  std::to_string(Limits::kMaxDModel) + ".");
  };
  return f;
}

NpzFilter WeightsFilter(const std::string& path, const Config* cfg) {
  Config all;
  all.block = Block::Encoder;
  std::map<std::string, WeightSpec> specs;
  const Weights none;
  ForEachWeight(none, all, [&](const WeightSpec& s, const auto&) { specs.emplace(s.name, s); });
  NpzFilter f;
  f.wanted = [specs](const std::string& key) { return key == "ln_eps" || specs.count(key) > 0; };
  std::optional<Config> c;
  if (cfg) c = *cfg;
  f.check = [path, specs, c](const std::string& key, const NpyInfo& info) {
    if (key == "ln_eps") {
      if (info.count() != 1) throw Error("'" + path + "': ln_eps must be a single number, e.g. numpy.float32(1e-5).");
      return;
    }
    // The most numbers this tensor can hold: its exact shape is checked after reading.
    const WeightSpec& s = specs.at(key);
    const std::int64_t d = c ? c->d_model : Limits::kMaxDModel;
    const std::int64_t ff = c && c->d_ff > 0 ? c->ffn_dim() : Limits::kMaxDFf;
    const std::int64_t wide = s.ffn ? std::max<std::int64_t>(d, ff) : d;
    const std::int64_t most = s.vector ? wide : d * wide;
    if (info.count() > most)
      throw Error("'" + path + "': weight '" + key + "' has shape " + ShapeString(info.shape) + ", more than the " +
                  std::to_string(most) + " numbers the configuration can use (d_model " + std::to_string(d) +
                  (s.ffn ? ", d_ff up to " + std::to_string(ff) : std::string()) +
                  "). Check d_model, num_heads and d_ff (--d-model, --heads, --d-ff) against the file.");
  };
  return f;
}

Inputs LoadInputs(const std::string& path) { return InputsFromNpz(LoadNpz(path, InputsFilter(path)), path); }

namespace {

Weights WeightsFrom(const NpzArrays& npz, NpzArrays* consume, const std::string& path, Config* cfg) {
  const Eigen::Index d = cfg->d_model;
  const auto wq = npz.find("W_q");
  if (wq != npz.end() && wq->second.shape.size() == 2 && wq->second.shape[0] != d) {
    throw Error("'" + path + "': W_q has shape " + ShapeString(wq->second.shape) +
                " but d_model = " + std::to_string(d) + " needs (" + std::to_string(d) + ", " + std::to_string(d) +
                "). The weights and the input must share d_model.");
  }
  // A GQA trace stores W_k as (d_model, kv_heads * head_dim): infer kv_heads unless given.
  const auto wk = npz.find("W_k");
  const int hd = cfg->head_dim();
  if (cfg->num_kv_heads == 0 && wk != npz.end() && wk->second.shape.size() == 2 && hd > 0) {
    const auto cols = wk->second.shape[1];
    if (cols != d && cols % hd == 0 && cols / hd > 0 && cfg->num_heads % (cols / hd) == 0)
      cfg->num_kv_heads = static_cast<int>(cols / hd);
  }
  Weights w;
  TakeSublayer(npz, consume, path, *cfg, /*ffn=*/false, w);
  if (cfg->block == Block::Encoder) TakeFfn(npz, consume, path, cfg, w);
  const auto eps = npz.find("ln_eps");
  if (eps != npz.end()) {
    if (eps->second.data.size() != 1)
      throw Error("'" + path + "': ln_eps must be a single number, e.g. numpy.float32(1e-5).");
    // A file's value is the file's fault (exit 1), not a flag's: say so by name.
    const float e = eps->second.data[0];
    if (!(e > 0) || !std::isfinite(e)) {
      std::ostringstream m;
      m << "'" << path << "': ln_eps is " << e
        << "; LayerNorm's epsilon must be a small positive number, e.g. numpy.float32(1e-5).";
      throw Error(m.str());
    }
    cfg->ln_eps = e;
  }
  try {
    CheckWeights(w, *cfg);
  } catch (const Error& e) {
    throw Error("'" + path + "': " + e.what());
  }
  return w;
}

}  // namespace

Weights WeightsFromNpz(const std::map<std::string, Array>& npz, const std::string& path, Config* cfg) {
  return WeightsFrom(npz, nullptr, path, cfg);
}

Weights WeightsFromNpz(std::map<std::string, Array>&& npz, const std::string& path, Config* cfg) {
  return WeightsFrom(npz, &npz, path, cfg);
}

}  // namespace mha::io
