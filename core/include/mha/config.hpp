// Configuration of one multi-head attention layer, its limits, and validation
// whose messages teach what went wrong and what would work.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace mha {

// Row-major so the bytes match numpy's C order and a head is one contiguous block.
using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVec = Eigen::Matrix<float, 1, Eigen::Dynamic>;
using LnStats = Eigen::Matrix<double, Eigen::Dynamic, 2, Eigen::RowMajor>;  // per row: mean, 1/std

enum class Mask { None, Causal };
enum class Norm { Post, Pre, None };
// Attention only, or the full Transformer encoder block: attention, then a
// position-wise feed-forward network with its own residual + LayerNorm.
enum class Block { Attention, Encoder };
// The FFN's nonlinearity. Gelu is the exact erf form, x * Phi(x), which is what
// torch.nn.GELU() computes by default (not the tanh approximation).
enum class Activation { Relu, Gelu };
// How the attention core is computed. Standard keeps every head's seq x seq_kv scores
// and weights (what the views draw); Flash computes the same context tile by tile
// with an online softmax (Dao et al. 2022) and keeps nothing seq x seq_kv (mha/flash.hpp).
enum class Attention { Standard, Flash };

const char* ToString(Mask m);
const char* ToString(Norm n);
const char* ToString(Block b);
const char* ToString(Activation a);
const char* ToString(Attention a);

// Thrown for input the user can fix. `what()` is a full sentence that says what is
// wrong and what would work; it is meant to be shown to a learner as is.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Caps that keep memory and time bounded whatever is typed or pasted.
struct Limits {
  static constexpr int kMaxTokens = 1024;  // per sentence; longer input is truncated
  // Attention::Flash keeps no seq x seq matrix, so its sequences may be far longer: at
  // d_model 512 its trace grows by about 11 d_model floats a token (22 MiB per 1024).
  static constexpr int kMaxFlashTokens = 32768;
  static constexpr int kMaxFlashTile = 4096;  // Br, Bc: rows and columns of one tile of scores
  static constexpr int kMaxDModel = 4096;
  static constexpr int kMaxHeads = 256;
  static constexpr int kMaxThreads = 256;
  static constexpr int kMaxDFf = 16384;                      // FFN hidden width (4 x the largest d_model)
  static constexpr std::size_t kMaxSentenceBytes = 1 << 20;  // bytes read of one sentence
  // Estimated bytes of one Trace; refused before allocating anything. 896 MiB, so that
  // with what each command holds beside it (the GUI's fonts, textures and views,
  // export's image) every accepted input peaks under 1.5 GB (scripts/budget_table.py;
  // at 2 GiB the GUI peaked at 4.6 GB).
  static constexpr std::size_t kMaxTraceBytes = std::size_t(896) << 20;
  // Dividing scores by a tinier temperature overflows float32 (1e-40 made scores +-inf
  // and attn NaN); 1e-3 already makes the softmax practically one-hot.
  static constexpr float kMinTemperature = 1e-3f;
  // Largest |value| accepted in weights and loaded inputs. With every value within it,
  // d_model <= kMaxDModel and temperature >= kMinTemperature, no product in the layer
  // can exceed float32's 3.4e38 (worst case ~3e37, pre-LN scores), so nothing
  // overflows to Inf or NaN. Trained weights and embeddings are far below it.
  static constexpr float kMaxAbsValue = 1e5f;
};

struct Config {
  int d_model = 512;
  int num_heads = 8;
  int num_kv_heads = 0;  // 0 means "same as num_heads" (plain MHA)
  std::uint64_t seed = 42;
  Mask mask = Mask::None;
  Norm norm = Norm::Post;
  bool scale = true;         // divide scores by sqrt(d_k)
  float temperature = 1.0f;  // softmax temperature: scores are divided by it too
  bool positional_encoding = true;
  float ln_eps = 1e-5f;
  // How to run, not what to compute: CPU threads for Forward (0 = one per core).
  // Results are bit-identical for every value.
  int threads = 0;
  Block block = Block::Attention;
  int d_ff = 0;  // FFN hidden width; 0 means 4 * d_model (Vaswani et al.)
  Activation activation = Activation::Relu;
  // How to compute, not what: Flash gives the standard path's context and attn_out
  // (within float rounding) without its scores and attn. flash_br x flash_bc is the
  // tile of scores one worker holds (0: the default, kFlashBr x kFlashBc).
  Attention attention = Attention::Standard;
  int flash_br = 0, flash_bc = 0;

  int ffn_dim() const { return d_ff > 0 ? d_ff : 4 * d_model; }
  int kv_heads() const { return num_kv_heads > 0 ? num_kv_heads : num_heads; }
  int head_dim() const { return num_heads > 0 ? d_model / num_heads : 0; }
};

// Throws mha::Error with a teaching message if `cfg` cannot run on sequences of
// seq query tokens and seq_kv key tokens. Checks happen before any allocation.
void Validate(const Config& cfg, int seq, int seq_kv);

// Estimated bytes the Trace of this configuration holds.
std::size_t EstimateTraceBytes(const Config& cfg, int seq, int seq_kv);
// Estimated bytes a training step keeps per sequence and layer (self-attention over
// seq tokens): its lean trace, which for a GELU encoder block holds GELU's derivative
// (seq, d_ff) for the backward pass, or the whole trace, whichever is larger.
std::size_t EstimateStepTraceBytes(const Config& cfg, int seq);

// The divisors of d_model that are valid head counts, ascending.
std::vector<int> ValidHeadCounts(int d_model);
// The head counts models use (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, ..., 256) that divide
// d_model, ascending: what a suggestion offers (d_model = 524 has 131 among its
// divisors, which no one would pick).
std::vector<int> CommonHeadCounts(int d_model);
// The nearest d_model values below and above `d_model` that num_heads divides
// (equal if d_model already works).
std::pair<int, int> NearestValidDModel(int d_model, int num_heads);

}  // namespace mha
