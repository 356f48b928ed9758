// From the picture to PyTorch: what mhaviz shows, as a Jupyter notebook of the lessons'
// own code (lesson 004's per-head loop, lesson 001/003's torch.nn.MultiheadAttention,
// lesson 004's heatmap grid) that recomputes the learner's numbers from the weights and
// input mhaviz saves beside it, and checks them against the tensors mhaviz computed.
//
//   notebook::LayerSpec spec{&trace, "cat.npz"};
//   notebook::Files f = notebook::LayerNotebook(spec);
//   io::WriteOutputsAtomic({{"cat.ipynb", write f.ipynb}, {"cat.npz", io::WriteNpz(sink, f.tensors, f.raw)}});
//
// The markdown and the printed labels are in the interface's language (_(), the
// gettext catalogue), the code in English. The code runs on Debian 12's torch 1.13: the
// matmuls are written out (scaled_dot_product_attention came with torch 2.0).
// Nothing here touches a file or the UI; the GUI and `mhaviz export --notebook` call it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/files.hpp"
#include "lm/language_model.hpp"
#include "mha/ablation.hpp"
#include "mha/model.hpp"
#include "mha/teach.hpp"

namespace mha::notebook {

// A notebook and the .npz it reads (written beside it under the name it was given).
// The tensors are views into the trace or model the spec named: write them while
// those live.
struct Files {
  std::string ipynb;
  std::vector<TensorView> tensors;
  std::vector<io::RawArray> raw;
};

// A notebook recomputes every tensor in float64 beside mhaviz's float32 ones, with its
// checks' temporaries: run as a script (python3 3.11, torch 1.13, matplotlib's Agg) its
// peak was about 0.25 GiB + 13 x the .npz's tensors (86 MiB of them: 1.40 GB; 138 MiB:
// 2.23 GB). 80 MiB keeps a run of the notebook near 1.37 GB, inside the 1.5 GB mhaviz
// keeps itself to (512 tokens x 32 heads at d_model 512 fit).
inline constexpr std::int64_t kMaxNotebookTensorBytes = std::int64_t(80) << 20;
// The bytes of the tensors LayerNotebook puts in the .npz (Tensors(t) of such a layer),
// known before the forward pass.
std::int64_t LayerTensorBytes(const Config& cfg, int seq, int seq_kv, bool cross);
// Those of a Files' tensors and arrays.
std::int64_t TensorBytes(const Files& f);

// One attention layer: seeded weights, a preset (the lesson's example, its hand
// calculation, the positional heads) or weights from a file; self- or
// cross-attention, GQA/MQA, a mask, any norm, the encoder block, knocked-out heads
// (trace->in.ablate, with `ablate_mode` saying what replaced them).
struct LayerSpec {
  const Trace* trace = nullptr;           // what mhaviz computed: its tensors are the .npz (formats.md)
  std::string npz_name;                   // the .npz's file name, beside the notebook
  std::string sentence;                   // as typed; "" for --input or a preset
  std::string memory;                     // cross-attention's keys/values sentence, as typed
  std::string weights_file;               // --weights: the file they were read from; "": seeded (or the preset's)
  std::string preset;                     // "lesson", "hand" or "heads": a hand-built example; "" for none
  const LessonExample* lesson = nullptr;  // the preset's own numbers, asserted as the lesson writes them
  AblationMode ablate_mode = AblationMode::Zero;
};
Files LayerNotebook(const LayerSpec& spec);

// A trained model (mhaviz-small or a checkpoint of `mhaviz train`) on one sequence:
// the notebook rebuilds the model in PyTorch from its checkpoint (saved in the .npz),
// tokenises the sentence with SentencePiece when the model has a tokenizer, and
// reproduces every layer's attention (the Model view) and the next-piece
// probabilities, with the knocked-out heads replaced as mhaviz replaces them.
struct ModelSpec {
  Model* model = nullptr;             // its parameters are written into the .npz
  const ModelTrace* trace = nullptr;  // mhaviz's pass over `ids`
  std::vector<int> ids;               // the sequence (BOS first for a language model)
  std::vector<std::string> pieces;    // their spellings, the heatmaps' labels
  std::string sentence;               // as typed; "" when the ids were given
  std::string tokenizer;              // the SentencePiece model's bytes; "" for none
  int bos = -1;                       // the id put before the sentence (language models)
  int layer = 0;                      // the layer the app shows: `attn` is its weights
  std::string name;                   // "mhaviz-small", or the checkpoint's file name
  std::string npz_name;               // the .npz's file name, beside the notebook
  std::vector<HeadRef> knocked_out;   // heads knocked out (empty: none)
  AblationMode ablate_mode = AblationMode::Zero;
  const std::vector<HeadAblation>* ablation = nullptr;            // per layer, what replaced them
  const std::vector<std::vector<lm::NextPiece>>* next = nullptr;  // a language model's likeliest next pieces
};
Files ModelNotebook(const ModelSpec& spec);

// "Copy as PyTorch": a short snippet for the clipboard that computes what a view shows,
// from the .npz `mhaviz trace --npz` writes of the same layer (`npz_name`). It ends by
// comparing its result with the .npz's.
enum class Snippet {
  OneQuery,  // the Query view: one query's scores, softmax and weighted sum of values
  Heatmaps,  // the Heatmaps view: every head's weights as a grid of heatmaps
  Tensor,    // the Inspector: one tensor of the trace, recomputed from its inputs
};
struct SnippetSpec {
  Snippet kind = Snippet::Heatmaps;
  const Trace* trace = nullptr;
  std::string npz_name = "trace.npz";
  int head = 0;        // OneQuery, Tensor (a per-head tensor)
  int query = 0;       // OneQuery: the query token's row
  std::string tensor;  // Tensor: its .npz key ("scores", "context", ...)
};
// Throws mha::Error for a head, query or tensor the trace does not have.
std::string PyTorchSnippet(const SnippetSpec& spec);
// The .npz keys PyTorchSnippet recomputes for Snippet::Tensor with this trace.
std::vector<std::string> SnippetTensors(const Trace& t);

}  // namespace mha::notebook
