// Post-LN and pre-LN side by side: see mha/teach_norms.hpp.
#include "mha/teach_norms.hpp"

#include <cmath>
#include <utility>

#include "mha/forward.hpp"

namespace mha {

const char* ToString(BlockStage s) {
  switch (s) {
    case BlockStage::Input: return "input";
    case BlockStage::Norm1: return "ln1";
    case BlockStage::Attention: return "attention";
    case BlockStage::Add1: return "add1";
    case BlockStage::Norm2: return "ln2";
    case BlockStage::Ffn: return "ffn";
    case BlockStage::Add2: return "add2";
  }
  return "";
}

RowSpread RowSpreadOf(const Eigen::Ref<const Mat>& m) {
  RowSpread r;
  const Eigen::Index rows = m.rows(), d = m.cols();
  r.mean.resize(static_cast<std::size_t>(rows));
  r.std.resize(r.mean.size());
  r.l2.resize(r.mean.size());
  for (Eigen::Index i = 0; i < rows; ++i) {
    double sum = 0.0, sq = 0.0;
    for (Eigen::Index c = 0; c < d; ++c) sum += m(i, c);
    const double mean = d > 0 ? sum / static_cast<double>(d) : 0.0;
    double var = 0.0;
    for (Eigen::Index c = 0; c < d; ++c) {
      const double v = m(i, c);
      var += (v - mean) * (v - mean);
      sq += v * v;
    }
    const auto k = static_cast<std::size_t>(i);
    r.mean[k] = mean;
    r.std[k] = d > 0 ? std::sqrt(var / static_cast<double>(d)) : 0.0;
    r.l2[k] = std::sqrt(sq);
  }
  return r;
}

namespace {

struct StageOf {
  BlockStage stage;
  const char* tensor;
  int adds;
};

// The steps in each arrangement's order, with the tensor of the plain Forward trace
// that holds each one's output (pre-LN's residual is `out`, its block's end `block_out`).
std::vector<StageOf> Stages(Norm norm, bool encoder) {
  std::vector<StageOf> s;
  if (norm == Norm::Post) {
    s = {{BlockStage::Input, "x", -1},
         {BlockStage::Attention, "attn_out", -1},
         {BlockStage::Add1, "residual", 0},
         {BlockStage::Norm1, "out", -1}};
    if (encoder)
      s.insert(s.end(), {{BlockStage::Ffn, "ffn_out", -1},
                         {BlockStage::Add2, "ffn_residual", 3},
                         {BlockStage::Norm2, "block_out", -1}});
  } else {
    s = {{BlockStage::Input, "x", -1},
         {BlockStage::Norm1, "x_ln", -1},
         {BlockStage::Attention, "attn_out", -1},
         {BlockStage::Add1, "out", 0}};
    if (encoder)
      s.insert(
          s.end(),
          {{BlockStage::Norm2, "ffn_ln", -1}, {BlockStage::Ffn, "ffn_out", -1}, {BlockStage::Add2, "block_out", 3}});
  }
  return s;
}

const Mat& TensorOf(const Trace& t, const std::string& name) {
  if (name == "x") return t.in.x;
  if (name == "x_ln") return t.x_ln;
  if (name == "attn_out") return t.attn_out;
  if (name == "residual") return t.residual;
  if (name == "out") return t.out;
  if (name == "ffn_ln") return t.ffn_ln;
  if (name == "ffn_out") return t.ffn_out;
  if (name == "ffn_residual") return t.ffn_residual;
  return t.block_out;
}

}  // namespace

ArrangementRun RunArrangement(const Config& cfg, std::shared_ptr<const Weights> weights, const Inputs& in, Norm norm) {
  if (norm != Norm::Post && norm != Norm::Pre)
    throw Error("The side-by-side compares post-LN and pre-LN: ask for Norm::Post or Norm::Pre.");
  Config c = cfg;
  c.norm = norm;
  c.attention = Attention::Flash;
  ArrangementRun run;
  run.norm = norm;
  Trace t = Forward(c, std::move(weights), in);
  for (const StageOf& s : Stages(norm, c.block == Block::Encoder))
    run.stages.push_back({s.stage, s.tensor, s.adds, RowSpreadOf(TensorOf(t, s.tensor))});
  run.lean.cfg = c;
  run.lean.seq = t.seq;
  run.lean.seq_kv = t.seq_kv;
  run.lean.q = std::move(t.q);
  run.lean.k = std::move(t.k);
  return run;
}

}  // namespace mha
