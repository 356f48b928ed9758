// The notebook of one attention layer: what the Heatmaps, Query and Block views show,
// recomputed step by step in the lessons' code and with torch.nn.MultiheadAttention.
#include <cmath>

#include "notebook/cells.hpp"
#include "notebook/ipynb.hpp"
#include "notebook/layer_cells.hpp"
#include "notebook/notebook.hpp"
#include "text/i18n.hpp"

namespace mha::notebook {
namespace {

using i18n::Format;

std::string Title(const LayerSpec& s) {
  if (s.preset == "hand") return _("Lesson 004's hand calculation, step by step");
  if (s.preset == "lesson") return _("Lesson 004's 2-head example, step by step");
  if (s.preset == "heads")
    return Format(_("Four positional heads on \u201C%s\u201D, step by step"), MarkdownText(s.sentence, 80).c_str());
  if (s.sentence.empty()) return _("Multi-head attention, step by step");
  return Format(_("Multi-head attention on \u201C%s\u201D, step by step"), MarkdownText(s.sentence, 80).c_str());
}

std::string PresetText(const std::string& preset) {
  if (preset == "hand")
    return _(
        "Lesson 004's hand calculation: one word X = [1, 2], d_model = 2, two heads with d_k = 1. Head 1's "
        "W^Q = W^K = W^V = [0.5, 0.5]ᵀ, head 2's [0.3, 0.3]ᵀ; W^O = I (the lesson leaves it open), biases 0, "
        "no positional encoding, mask or LayerNorm. With one key, each head's weight is 1, so its output is its "
        "V: concat = [1.5, 0.9].");
  if (preset == "lesson")
    return _(
        "Lesson 004's 2-head example: X = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], three words, "
        "d_model = 4, two heads with head_dim = 2. W_Q = W_K = W_V = W_O = I and the biases are 0, so head 1 "
        "works on the first two numbers of each word and head 2 on the last two; no positional encoding, mask "
        "or LayerNorm.");
  return _(
      "Four positional heads built by hand: x is only each token's position (its sinusoidal encoding, no word "
      "embedding), d_model = 64, four heads of head_dim 16. Head 0 attends to the previous token, head 1 to "
      "the token itself, head 2 to the first token and head 3 to the next one. W_V = W_O = I.");
}

// One bullet per fact of the configuration, in the lessons' words.
std::string ConfigBullets(const LayerSpec& s) {
  const Trace& t = *s.trace;
  const Config& c = t.cfg;
  std::string md;
  const auto add = [&md](const std::string& line) { md += "- " + line + "\n"; };
  add(Format(P_("%d token, d_model = %d, num_heads = %d, head_dim = d_k = d_model / num_heads = %d",
                "%d tokens, d_model = %d, num_heads = %d, head_dim = d_k = d_model / num_heads = %d", t.seq),
             t.seq, c.d_model, c.num_heads, c.head_dim()));
  if (c.kv_heads() == 1)
    add(_("MQA: all query heads share one Key/Value head (num_kv_heads = 1)"));
  else if (c.kv_heads() != c.num_heads)
    add(Format(_("GQA: num_kv_heads = %d, so every %d query heads share one Key/Value head"), c.kv_heads(),
               c.num_heads / c.kv_heads()));
  if (t.in.cross())
    add(Format(_("cross-attention: Query from the sentence, Key and Value from the memory sentence \u201C%s\u201D "
                 "(%d tokens)"),
               MarkdownText(s.memory.empty() ? std::string("memory") : s.memory, 80).c_str(), t.seq_kv));
  if (c.mask == Mask::Causal) add(_("causal mask: each token sees itself and the tokens before it"));
  switch (c.norm) {
    case Norm::Post: add(_("post-LN: out = LN(x + MHA(x)), as in the Transformer and BERT")); break;
    case Norm::Pre: add(_("pre-LN: out = x + MHA(LN(x)), as in GPT")); break;
    case Norm::None: add(_("no LayerNorm: out = x + MHA(x)")); break;
  }
  if (c.block == Block::Encoder)
    add(Format(_("encoder block: then the FFN, d_ff = %d, %s, with its own residual connection"), c.ffn_dim(),
               c.activation == Activation::Gelu ? "GELU" : "ReLU"));
  if (!c.scale) add(_("the scores are not divided by √d_k"));
  if (c.temperature != 1.0f)
    add(Format(_("softmax temperature T = %s: the scores are divided by T"), PyFloat(c.temperature).c_str()));
  if (!t.in.ablate.empty()) {
    std::string heads;
    for (const int h : t.in.ablate.heads) heads += (heads.empty() ? "" : ", ") + std::to_string(h);
    add(Format(s.ablate_mode == AblationMode::Zero ? _("heads knocked out (zero ablation): %s")
                                                   : _("heads knocked out (mean ablation): %s"),
               heads.c_str()));
  }
  if (!s.preset.empty())
    add(PresetText(s.preset));
  else if (!s.weights_file.empty())
    add(Format(_("the weights were read from %s"), MarkdownText(s.weights_file, 80).c_str()));
  else
    add(Format(_("the weights are random (seed %llu) and untrained: the patterns show what the numbers do, not "
                 "anything learned"),
               static_cast<unsigned long long>(c.seed)));
  return md;
}

void Intro(Ipynb& nb, const LayerSpec& s) {
  nb.Markdown("# " + Title(s) + "\n\n" + _("mhaviz wrote this notebook for what it showed:") + "\n\n" +
              ConfigBullets(s) + "\n" +
              Format(_("Every tensor mhaviz computed is in `%s`, beside this notebook. The cells below compute them "
                       "again, first step by step with plain PyTorch tensor operations as the lessons do (lesson "
                       "004's loop over the heads), then with `torch.nn.MultiheadAttention` (lessons 001 and 003), "
                       "and check each result against mhaviz's. Run the cells from top to bottom (Run → Run All "
                       "Cells)."),
                     s.npz_name.c_str()));
}

void Outro(Ipynb& nb, const Trace& t) {
  nb.Markdown(std::string("## ") + _("What to try next") + "\n\n" +
              Format(_("`attn` holds the attention weights, shape (batch, num_heads, seq, seq_kv) = (1, %d, %d, %d): "
                       "the same numbers as `attn` in the .npz that `mhaviz trace --npz` writes with the same "
                       "flags."),
                     t.cfg.num_heads, t.seq, t.seq_kv) +
              "\n\n- " +
              _("Change a weight (for example `W_q[0, 0] += 0.01` after the cell that loads it) and run the cells "
                "again: the checks fail, because the numbers no longer are mhaviz's.") +
              "\n- " + _("Knock a head out in mhaviz, export again, and compare the two notebooks' `attn_out`.") +
              "\n");
  nb.Code(
      "print(attn.shape)  # (batch, num_heads, seq, seq_kv)\n"
      "assert attn.shape == (1, num_heads, seq, seq_kv)");
}

}  // namespace

std::int64_t LayerTensorBytes(const Config& c, int seq, int seq_kv, bool cross) {
  const std::int64_t s = seq, skv = seq_kv, d = c.d_model, H = c.num_heads, G = c.kv_heads(), hd = c.head_dim(),
                     kvd = G * hd, f = c.ffn_dim();
  const bool pre = c.norm == Norm::Pre;
  std::int64_t n = s * d + (cross ? skv * d : 0);              // x, memory
  n += 2 * (d * d + d) + 2 * (d * kvd + kvd) + 2 * d + 1;      // W_q, W_o, W_k, W_v, LayerNorm, ln_eps
  n += (pre ? s * d : 0) + 2 * H * s * hd + 2 * G * skv * hd;  // x_ln, q, context, k, v
  n += 2 * H * s * skv + 4 * s * d;                            // scores, attn, concat, attn_out, residual, out
  if (c.block == Block::Encoder)                               // the FFN's weights and tensors
    n += 2 * d * f + f + 3 * d + (pre ? s * d : 0) + s * f + 3 * s * d;
  return 4 * n;
}

std::int64_t TensorBytes(const Files& f) {
  std::int64_t n = 0;
  for (const TensorView& t : f.tensors) n += 4 * t.size();
  for (const io::RawArray& r : f.raw) n += static_cast<std::int64_t>(r.data.size());
  return n;
}

Files LayerNotebook(const LayerSpec& s) {
  if (!s.trace) throw Error("a notebook needs a computed layer.");
  const Trace& t = *s.trace;
  if (t.cfg.attention != Attention::Standard || t.attn.size() == 0)
    throw Error(
        "a notebook compares every head's attention weights, which Flash attention does not keep: "
        "export it with the standard attention.");
  Ipynb nb;
  Intro(nb, s);
  LayerCells cells{s, nb};
  cells.Setup();
  cells.Shapes();
  cells.Projections();
  cells.HeadLoop();
  cells.Output();
  if (t.cfg.block == Block::Encoder) cells.Ffn();
  if (s.lesson && !s.lesson->expected.empty()) cells.LessonNumbers();
  cells.Torch();
  cells.Heatmaps();
  Outro(nb, t);
  Files f;
  f.ipynb = nb.Json();
  f.tensors = Tensors(t);
  return f;
}

}  // namespace mha::notebook
