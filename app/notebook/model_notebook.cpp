// The notebook of a trained model: mhaviz-small (or a checkpoint of `mhaviz train`)
// rebuilt in PyTorch from its checkpoint; the Model view's weights and the Next view's
// probabilities recomputed and checked.
#include <cstring>

#include "io/checkpoint.hpp"
#include "notebook/cells.hpp"
#include "notebook/ipynb.hpp"
#include "notebook/model_cells.hpp"
#include "notebook/notebook.hpp"
#include "text/i18n.hpp"

namespace mha::notebook {
namespace {

using i18n::Format;

void Intro(Ipynb& nb, const ModelSpec& s) {
  const ModelConfig& m = s.model->cfg;
  const Config& c = m.layer;
  const std::string title = s.sentence.empty() ? Format(_("%s, rebuilt in PyTorch"), s.name.c_str())
                                               : Format(_("%s on \u201C%s\u201D, rebuilt in PyTorch"), s.name.c_str(),
                                                        MarkdownText(s.sentence, 80).c_str());
  std::string md = "# " + title + "\n\n";
  md += Format(P_("A trained model: %d layer, d_model = %d, num_heads = %d (head_dim = %d), a vocabulary of %d "
                  "tokens, a context of %d.",
                  "A trained model: %d layers, d_model = %d, num_heads = %d (head_dim = %d), a vocabulary of %d "
                  "tokens, a context of %d.",
                  m.num_layers),
               m.num_layers, c.d_model, c.num_heads, c.head_dim(), m.vocab_size(), m.max_seq);
  if (s.name == "mhaviz-small")
    md += " " + std::string(_("mhaviz-small is mhaviz's own bilingual language model, trained on real English and "
                              "Korean text and on a designed teaching corpus (docs/model-card.md says which is "
                              "which)."));
  md += "\n\n" +
        Format(s.tokenizer.empty()
                   ? _("The notebook rebuilds it in PyTorch from its checkpoint (saved in `%s` beside this notebook, "
                       "with what mhaviz computed), runs it on the tokens mhaviz ran it on, and checks every layer's "
                       "attention weights (the Model view) and the logits against mhaviz's, first in the lessons' code "
                       "and then with torch.nn modules.")
                   : _("The notebook rebuilds it in PyTorch from its checkpoint (saved in `%s` beside this notebook, "
                       "with its tokenizer and what mhaviz computed), cuts the sentence into pieces with its own "
                       "SentencePiece tokenizer, and checks every layer's attention weights (the Model view) and the "
                       "next-piece probabilities against mhaviz's, first in the lessons' code and then with torch.nn "
                       "modules."),
               s.npz_name.c_str());
  if (!s.knocked_out.empty()) {
    std::string heads;
    for (const HeadRef& h : s.knocked_out) heads += (heads.empty() ? "" : ", ") + HeadName(h);
    md += "\n\n" + Format(s.ablate_mode == AblationMode::Zero ? _("Heads knocked out (zero ablation): %s.")
                                                              : _("Heads knocked out (mean ablation): %s."),
                          heads.c_str());
  }
  md += "\n\n" + std::string(_("Run the cells from top to bottom (Run → Run All Cells)."));
  nb.Markdown(md);
}

void Outro(Ipynb& nb, const ModelSpec& s) {
  nb.Markdown(std::string("## ") + _("What to try next") + "\n\n" +
              Format(_("`attn` holds layer %d's attention weights, shape (batch, num_heads, seq, seq): the layer "
                       "mhaviz showed, and the same numbers as `attn` in the .npz that `mhaviz trace --model "
                       "--layer %d --npz` writes with the same flags."),
                     s.layer, s.layer) +
              "\n\n- " +
              _("Knock a head out here (add it to `knocked_out`, with a row of zeros in `replacement`) and watch "
                "the next-piece probabilities move; the checks then fail, because the model is no longer mhaviz's.") +
              "\n");
  nb.Code("print(attn.shape)  # (batch, num_heads, seq, seq)\nassert attn.shape == (1, num_heads, seq, seq)");
}

io::RawArray Raw(const std::string& name, const std::string& descr, std::vector<std::int64_t> shape,
                 std::string bytes) {
  return {name, descr, std::move(shape), std::move(bytes)};
}

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  std::string b(v.size() * sizeof(T), '\0');
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());  // little-endian x86-64, as numpy's '<'
  return b;
}

// The checkpoint's parameters and config, the tokenizer, and mhaviz's results under "mhaviz.".
void NpzContents(const ModelSpec& s, Files& f) {
  for (const ParamView& p : Parameters(*s.model)) f.tensors.push_back({p.name, p.shape, p.data});
  const ModelTrace& t = *s.trace;
  const std::int64_t S = static_cast<std::int64_t>(s.ids.size()), d = s.model->cfg.layer.d_model,
                     H = s.model->cfg.layer.num_heads;
  f.tensors.push_back({"mhaviz.x", {1, S, d}, t.x.data()});
  for (std::size_t l = 0; l < t.layers.size(); ++l) {
    const Trace& layer = t.layers[l];
    const std::string key = "mhaviz.layers." + std::to_string(l) + ".";
    f.tensors.push_back({key + "scores", {1, H, S, S}, layer.scores.data()});
    f.tensors.push_back({key + "attn", {1, H, S, S}, layer.attn.data()});
    f.tensors.push_back({key + "out", {1, S, d}, layer.out.data()});
    if (layer.block_out.size() > 0) f.tensors.push_back({key + "block_out", {1, S, d}, layer.block_out.data()});
  }
  f.tensors.push_back({"mhaviz.logits", {t.logits[0].rows(), t.logits[0].cols()}, t.logits[0].data()});
  if (s.ablation && s.ablate_mode == AblationMode::Mean)
    for (std::size_t l = 0; l < s.ablation->size(); ++l) {
      const HeadAblation& a = (*s.ablation)[l];
      if (!a.empty())
        f.tensors.push_back(
            {"mhaviz.ablate." + std::to_string(l), {a.values.rows(), a.values.cols()}, a.values.data()});
    }
  const std::string config = io::ModelConfigJson(s.model->cfg);
  f.raw.push_back(Raw("config", "|u1", {static_cast<std::int64_t>(config.size())}, config));
  if (!s.tokenizer.empty())
    f.raw.push_back(Raw("tokenizer", "|u1", {static_cast<std::int64_t>(s.tokenizer.size())}, s.tokenizer));
  f.raw.push_back(Raw("mhaviz.ids", "<i4", {S}, Bytes(std::vector<std::int32_t>(s.ids.begin(), s.ids.end()))));
  if (s.next && !s.next->empty()) {
    const std::int64_t k = static_cast<std::int64_t>((*s.next)[0].size());
    std::vector<std::int32_t> ids;
    std::vector<double> probs;
    for (const auto& row : *s.next)
      for (const lm::NextPiece& p : row) {
        ids.push_back(p.id);
        probs.push_back(p.probability);
      }
    f.raw.push_back(Raw("mhaviz.next_ids", "<i4", {S, k}, Bytes(ids)));
    f.raw.push_back(Raw("mhaviz.next_probs", "<f8", {S, k}, Bytes(probs)));
  }
}

}  // namespace

void ModelCells::Next() {
  const bool pre = Cfg().layer.norm == Norm::Pre;
  std::string md =
      _("The last layer's output, through the unembedding, gives the logits: one score per piece of the "
        "vocabulary at each position.");
  if (pre) md += " " + std::string(_("Pre-LN models normalise it once more first (the final LayerNorm)."));
  if (s.next && !s.next->empty())
    md += " " + std::string(_("Their softmax is the probability of each piece coming next: the Next view's "
                              "likeliest pieces."));
  nb.Markdown(Section(_("The next piece"), md));
  std::string code =
      std::string(pre ? "h = layer_norm(x, P[\"lnf_gamma\"], P[\"lnf_beta\"])  # the final LayerNorm\n" : "h = x\n") +
      "logits = (h @ P[\"unembed.0\"] + P[\"unembed_b.0\"])[0]  # (seq, vocab)\n"
      "check(\"logits\", logits, app[\"logits\"], n_model)\n";
  if (s.next && !s.next->empty())
    code += Fill(R"py(probs = torch.softmax(logits, dim=-1)  # (seq, vocab): what comes next, after each position
top = probs.topk({{k}}, dim=-1)
for i in range(seq):
    likeliest = "  ".join(f"{piece} {p:.3f}" for piece, p in zip(sp.id_to_piece(top.indices[i].tolist()),
                                                               top.values[i].tolist()))
    print(f"{i:3} {pieces[i]:>12} -> {likeliest}")
check("next probs", probs.gather(1, app["next_ids"].long()), app["next_probs"], n_model,
      size=logits.abs().max().item())
)py",
                 {{"k", std::to_string((*s.next)[0].size())}});
  nb.Code(code);
}

void ModelCells::Heatmaps() {
  const Config& c = Cfg().layer;
  nb.Markdown(Section(_("The Model view"), _("Every layer × head as a small heatmap, as mhaviz's Model view draws "
                                             "them: rows are the pieces as Query, columns as Key.")));
  const int shown = c.num_heads < 16 ? c.num_heads : 16;
  std::string knocked = "set()";
  if (!s.knocked_out.empty()) {
    knocked = "{";
    for (std::size_t i = 0; i < s.knocked_out.size(); ++i)
      knocked += (i ? ", (" : "(") + std::to_string(s.knocked_out[i].layer) + ", " +
                 std::to_string(s.knocked_out[i].head) + ")";
    knocked += "}";
  }
  nb.Code(FontCode() + Fill(R"py(
shown = {{shown}}  # heads per layer drawn
knocked = {{knocked}}  # (layer, head) knocked out
fig, axes = plt.subplots(num_layers, shown, figsize=(3.2 * shown, 3.2 * num_layers), squeeze=False)
for l in range(num_layers):
    for h in range(shown):
        ax = axes[l, h]
        ax.imshow(attn_per_layer[l][0, h].numpy(), cmap="viridis", vmin=0, vmax=1)
        ax.set_title(f"L{l}H{h}" + ({{out}} if (l, h) in knocked else ""))
        if seq <= 24:
            ax.set_xticks(range(seq))
            ax.set_xticklabels(labels(pieces), rotation=90, fontsize=7)
            ax.set_yticks(range(seq))
            ax.set_yticklabels(labels(pieces), fontsize=7)
        else:
            ax.set_xticks([])
            ax.set_yticks([])
plt.tight_layout()
plt.show()
)py",
                            {{"shown", std::to_string(shown)},
                             {"knocked", knocked},
                             {"out", PyStr(std::string(" ") + _("(knocked out)"))}}));
}

Files ModelNotebook(const ModelSpec& s) {
  if (!s.model || !s.trace) throw Error("a model notebook needs the model and its pass over the tokens.");
  if (s.model->cfg.layer.attention != Attention::Standard || s.trace->layers.empty() ||
      s.trace->layers[0].attn.size() == 0)
    throw Error(
        "a notebook compares every head's attention weights, which Flash attention does not keep: "
        "export it with the standard attention.");
  Ipynb nb;
  Intro(nb, s);
  ModelCells cells{s, nb};
  cells.Setup();
  cells.Tokens();
  cells.Embedding();
  cells.Layers();
  cells.Next();
  cells.Torch();
  cells.Heatmaps();
  Outro(nb, s);
  Files f;
  f.ipynb = nb.Json();
  NpzContents(s, f);
  return f;
}

}  // namespace mha::notebook
