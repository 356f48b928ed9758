// A deliberately naive multi-head attention: plain loops, double precision, no Eigen
// products, written straight from the lesson's formulas. The Eigen path is checked
// against it; sharing no code with core/src is the point.
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "mha/mha.hpp"

namespace oracle {

using Matrix = std::vector<std::vector<double>>;  // [row][col]

inline Matrix FromMat(const mha::Mat& m) {
  Matrix r(m.rows(), std::vector<double>(m.cols()));
  for (int i = 0; i < m.rows(); ++i)
    for (int j = 0; j < m.cols(); ++j) r[i][j] = m(i, j);
  return r;
}
inline std::vector<double> FromVec(const mha::RowVec& v) { return std::vector<double>(v.data(), v.data() + v.size()); }

// y = x W + b, row by row.
inline Matrix Linear(const Matrix& x, const Matrix& W, const std::vector<double>& b) {
  const std::size_t n = x.size(), din = W.size(), dout = W[0].size();
  Matrix y(n, std::vector<double>(dout));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t o = 0; o < dout; ++o) {
      double s = b[o];
      for (std::size_t k = 0; k < din; ++k) s += x[i][k] * W[k][o];
      y[i][o] = s;
    }
  return y;
}

inline Matrix LayerNorm(const Matrix& x, const std::vector<double>& g, const std::vector<double>& b, double eps) {
  Matrix y = x;
  for (auto& row : y) {
    double mean = 0, var = 0;
    for (double v : row) mean += v;
    mean /= row.size();
    for (double v : row) var += (v - mean) * (v - mean);
    var /= row.size();
    for (std::size_t c = 0; c < row.size(); ++c) row[c] = (row[c] - mean) / std::sqrt(var + eps) * g[c] + b[c];
  }
  return y;
}

// The FFN's activation, from its definition: ReLU max(0, x); GELU x * Phi(x) with the
// standard normal CDF Phi(x) = (1 + erf(x / sqrt 2)) / 2.
inline double Activation(mha::Activation a, double x) {
  if (a == mha::Activation::Gelu) return x * 0.5 * (1.0 + std::erf(x / std::sqrt(2.0)));
  return x > 0.0 ? x : 0.0;
}

struct Result {
  // [head][i][j] and [head][i][c]
  std::vector<Matrix> q, k, v, scores, attn, context;
  Matrix concat, attn_out, out;
  // Encoder block only: the FFN sublayer after attention.
  Matrix ffn_ln, ffn_hidden, ffn_out, block_out;
};

// One layer on x given in double (a stack of layers chains them without rounding);
// `memory`: the keys' and values' input for cross-attention, or null.
inline Result Mha(const mha::Config& cfg, const mha::Weights& w, const Matrix& x, const Matrix* memory = nullptr) {
  const int H = cfg.num_heads, G = cfg.kv_heads(), hd = cfg.head_dim();
  Matrix src = x;
  if (cfg.norm == mha::Norm::Pre) src = LayerNorm(x, FromVec(w.ln_gamma), FromVec(w.ln_beta), cfg.ln_eps);
  const Matrix mem = memory ? *memory : src;
  const Matrix Q = Linear(src, FromMat(w.W_q), FromVec(w.b_q));
  const Matrix K = Linear(mem, FromMat(w.W_k), FromVec(w.b_k));
  const Matrix V = Linear(mem, FromMat(w.W_v), FromVec(w.b_v));
  const std::size_t n = x.size(), m = mem.size();
  Result r;
  auto head_of = [&](const Matrix& M, int h) {
    Matrix out(M.size(), std::vector<double>(hd));
    for (std::size_t i = 0; i < M.size(); ++i)
      for (int c = 0; c < hd; ++c) out[i][c] = M[i][h * hd + c];
    return out;
  };
  for (int g = 0; g < G; ++g) {
    r.k.push_back(head_of(K, g));
    r.v.push_back(head_of(V, g));
  }
  r.concat.assign(n, std::vector<double>(cfg.d_model));
  for (int h = 0; h < H; ++h) {
    const int g = h / (H / G);
    r.q.push_back(head_of(Q, h));
    Matrix s(n, std::vector<double>(m)), a(n, std::vector<double>(m)), ctx(n, std::vector<double>(hd, 0.0));
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < m; ++j) {
        double dot = 0;
        for (int c = 0; c < hd; ++c) dot += r.q[h][i][c] * r.k[g][j][c];
        if (cfg.scale) dot /= std::sqrt(static_cast<double>(hd));
        dot /= cfg.temperature;
        if (cfg.mask == mha::Mask::Causal && j > i) dot = -std::numeric_limits<double>::infinity();
        s[i][j] = dot;
      }
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (double v : s[i]) mx = std::max(mx, v);
      for (std::size_t j = 0; j < m; ++j) sum += (a[i][j] = std::exp(s[i][j] - mx));
      for (std::size_t j = 0; j < m; ++j) a[i][j] /= sum;
      for (std::size_t j = 0; j < m; ++j)
        for (int c = 0; c < hd; ++c) ctx[i][c] += a[i][j] * r.v[g][j][c];
      for (int c = 0; c < hd; ++c) r.concat[i][h * hd + c] = ctx[i][c];
    }
    r.scores.push_back(s);
    r.attn.push_back(a);
    r.context.push_back(ctx);
  }
  r.attn_out = Linear(r.concat, FromMat(w.W_o), FromVec(w.b_o));
  Matrix res = x;
  for (std::size_t i = 0; i < n; ++i)
    for (int c = 0; c < cfg.d_model; ++c) res[i][c] += r.attn_out[i][c];
  r.out = cfg.norm == mha::Norm::Post ? LayerNorm(res, FromVec(w.ln_gamma), FromVec(w.ln_beta), cfg.ln_eps) : res;
  if (cfg.block == mha::Block::Encoder) {
    // post: block_out = LN2(out + FFN(out)); pre: block_out = out + FFN(LN2(out)); none: out + FFN(out).
    const auto g2 = FromVec(w.ln2_gamma), b2 = FromVec(w.ln2_beta);
    Matrix in = r.out;
    if (cfg.norm == mha::Norm::Pre) in = r.ffn_ln = LayerNorm(r.out, g2, b2, cfg.ln_eps);
    r.ffn_hidden = Linear(in, FromMat(w.ffn_W1), FromVec(w.ffn_b1));
    for (auto& row : r.ffn_hidden)
      for (double& h : row) h = Activation(cfg.activation, h);
    r.ffn_out = Linear(r.ffn_hidden, FromMat(w.ffn_W2), FromVec(w.ffn_b2));
    Matrix res2 = r.out;
    for (std::size_t i = 0; i < n; ++i)
      for (int c = 0; c < cfg.d_model; ++c) res2[i][c] += r.ffn_out[i][c];
    r.block_out = cfg.norm == mha::Norm::Post ? LayerNorm(res2, g2, b2, cfg.ln_eps) : res2;
  }
  return r;
}

inline Result Mha(const mha::Config& cfg, const mha::Weights& w, const mha::Inputs& in) {
  if (!in.cross()) return Mha(cfg, w, FromMat(in.x));
  const Matrix memory = FromMat(in.memory);
  return Mha(cfg, w, FromMat(in.x), &memory);
}

}  // namespace oracle
