// Inputs and weights from .npz files, checked against the configuration.
#include <sstream>

#include "files.hpp"

namespace mha::io {
namespace {

Mat SeqMatrix(const Array& a, const std::string& key, const std::string& path) {
  const auto& s = a.shape;
  std::int64_t seq = 0, d = 0;
  if (s.size() == 2) { seq = s[0]; d = s[1]; }
  else if (s.size() == 3 && s[0] == 1) { seq = s[1]; d = s[2]; }
  else {
    throw Error("'" + path + "': array '" + key + "' has shape " + ShapeString(s) +
                "; it must be (seq, d_model) or (1, seq, d_model) (batch 1: mhaviz shows one sentence).");
  }
  if (seq <= 0 || d <= 0)
    throw Error("'" + path + "': array '" + key + "' has shape " + ShapeString(s) + ", which holds no tokens.");
  Mat m(seq, d);
  std::copy(a.data.begin(), a.data.end(), m.data());
  return m;
}

template <typename M>
void Take(const std::map<std::string, Array>& npz, const std::string& key, const std::string& path,
          bool required, Eigen::Index rows, Eigen::Index cols, bool is_vector, M& out) {
  const auto it = npz.find(key);
  if (it == npz.end()) {
    if (required)
      throw Error("'" + path + "' has no array '" + key + "'. A weights file needs W_q, W_k, W_v and W_o "
                  "(b_q, b_k, b_v, b_o, ln_gamma, ln_beta are optional).");
    return;
  }
  const Array& a = it->second;
  const bool fits = is_vector ? (a.shape.size() == 1 && a.shape[0] == cols)
                              : (a.shape.size() == 2 && a.shape[0] == rows && a.shape[1] == cols);
  if (!fits) {
    std::ostringstream e;
    e << "'" << path << "': weight '" << key << "' has shape " << ShapeString(a.shape) << " but the configuration needs "
      << (is_vector ? ShapeString({cols}) : ShapeString({rows, cols}))
      << ". Check --d-model, --heads and --kv-heads against the file.";
    throw Error(e.str());
  }
  out.resize(rows, cols);
  std::copy(a.data.begin(), a.data.end(), out.data());
}

// The encoder block's FFN weights. d_ff is read from ffn_W1 unless --d-ff gave it.
void TakeFfn(const std::map<std::string, Array>& npz, const std::string& path, Config* cfg, Weights& w) {
  const Eigen::Index d = cfg->d_model;
  for (const char* key : {"ffn_W1", "ffn_W2"})
    if (npz.find(key) == npz.end())
      throw Error("'" + path + "' has no array '" + key + "'. For the encoder block (--block encoder) a weights file "
                  "also needs ffn_W1 (d_model, d_ff) and ffn_W2 (d_ff, d_model); ffn_b1, ffn_b2, ln2_gamma and "
                  "ln2_beta are optional. Leave out --block encoder to run attention only.");
  const Array& w1 = npz.at("ffn_W1");
  if (w1.shape.size() == 2 && w1.shape[0] == d && cfg->d_ff == 0 && w1.shape[1] > 0 &&
      w1.shape[1] <= Limits::kMaxDFf)
    cfg->d_ff = static_cast<int>(w1.shape[1]);
  const Eigen::Index f = cfg->ffn_dim();
  if (w1.shape.size() != 2 || w1.shape[0] != d || w1.shape[1] != f)
    throw Error("'" + path + "': weight 'ffn_W1' has shape " + ShapeString(w1.shape) + " but d_model = " +
                std::to_string(d) + " and d_ff = " + std::to_string(f) + " need " + ShapeString({d, f}) +
                ". Check --d-model and --d-ff against the file (leave out --d-ff to read it from the file).");
  w.ffn_b1 = RowVec::Zero(f);
  w.ffn_b2 = RowVec::Zero(d);
  w.ln2_gamma = RowVec::Ones(d);
  w.ln2_beta = RowVec::Zero(d);
  Take(npz, "ffn_W1", path, true, d, f, false, w.ffn_W1);
  Take(npz, "ffn_W2", path, true, f, d, false, w.ffn_W2);
  Take(npz, "ffn_b1", path, false, 1, f, true, w.ffn_b1);
  Take(npz, "ffn_b2", path, false, 1, d, true, w.ffn_b2);
  Take(npz, "ln2_gamma", path, false, 1, d, true, w.ln2_gamma);
  Take(npz, "ln2_beta", path, false, 1, d, true, w.ln2_beta);
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

Weights WeightsFromNpz(const std::map<std::string, Array>& npz, const std::string& path, Config* cfg) {
  const Eigen::Index d = cfg->d_model;
  const auto wq = npz.find("W_q");
  if (wq != npz.end() && wq->second.shape.size() == 2 && wq->second.shape[0] != d) {
    throw Error("'" + path + "': W_q has shape " + ShapeString(wq->second.shape) + " but d_model = " +
                std::to_string(d) + " needs (" + std::to_string(d) + ", " + std::to_string(d) +
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
  const Eigen::Index kvd = static_cast<Eigen::Index>(cfg->kv_heads()) * hd;
  Weights w;
  w.b_q = RowVec::Zero(d);
  w.b_k = RowVec::Zero(kvd);
  w.b_v = RowVec::Zero(kvd);
  w.b_o = RowVec::Zero(d);
  w.ln_gamma = RowVec::Ones(d);
  w.ln_beta = RowVec::Zero(d);
  Take(npz, "W_q", path, true, d, d, false, w.W_q);
  Take(npz, "W_k", path, true, d, kvd, false, w.W_k);
  Take(npz, "W_v", path, true, d, kvd, false, w.W_v);
  Take(npz, "W_o", path, true, d, d, false, w.W_o);
  Take(npz, "b_q", path, false, 1, d, true, w.b_q);
  Take(npz, "b_k", path, false, 1, kvd, true, w.b_k);
  Take(npz, "b_v", path, false, 1, kvd, true, w.b_v);
  Take(npz, "b_o", path, false, 1, d, true, w.b_o);
  Take(npz, "ln_gamma", path, false, 1, d, true, w.ln_gamma);
  Take(npz, "ln_beta", path, false, 1, d, true, w.ln_beta);
  if (cfg->block == Block::Encoder) TakeFfn(npz, path, cfg, w);
  const auto eps = npz.find("ln_eps");
  if (eps != npz.end()) {
    if (eps->second.data.size() != 1)
      throw Error("'" + path + "': ln_eps must be a single number, e.g. numpy.float32(1e-5).");
    cfg->ln_eps = eps->second.data[0];
  }
  try {
    CheckWeights(w, *cfg);
  } catch (const Error& e) {
    throw Error("'" + path + "': " + e.what());
  }
  return w;
}

}  // namespace mha::io
