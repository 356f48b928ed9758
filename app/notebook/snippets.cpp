// "Copy as PyTorch": a few lines for the clipboard that compute what a view shows from
// the .npz mhaviz writes of the same layer, and check the result against it.
#include <map>

#include "notebook/ipynb.hpp"
#include "notebook/notebook.hpp"
#include "text/i18n.hpp"

namespace mha::notebook {
namespace {

using i18n::Format;

std::string Header(const std::string& what, const SnippetSpec& s) {
  return "# " + what + "\n# " +
         Format(_("It reads the .npz of this layer that mhaviz trace writes with the same settings (mhaviz trace ... "
                  "--npz %s)."),
                s.npz_name.c_str()) +
         "\nimport math\n\nimport numpy as np\nimport torch\n\nz = np.load(" + PyStr(s.npz_name) +
         ")\nt = {name: torch.from_numpy(z[name]).double() for name in z.files}\n";
}

// Scores from q and k: the scaling, the temperature, GQA's shared K heads, the mask.
std::string ScoresLines(const Trace& tr) {
  const Config& c = tr.cfg;
  std::string k = "t[\"k\"]";
  if (c.kv_heads() != c.num_heads)
    k += ".repeat_interleave(" + std::to_string(c.num_heads / c.kv_heads()) + ", dim=1)  # GQA: shared K heads";
  std::string code = "k = " + k + "\nscores = t[\"q\"] @ k.transpose(-2, -1)";
  if (c.scale) code += " / math.sqrt(" + std::to_string(c.head_dim()) + ")  # sqrt(d_k)";
  code += "\n";
  if (c.temperature != 1.0f) code += "scores = scores / " + PyFloat(c.temperature) + "  # the temperature\n";
  if (c.mask == Mask::Causal)
    code += "scores = scores.masked_fill(torch.ones(" + std::to_string(tr.seq) + ", " + std::to_string(tr.seq_kv) +
            ", dtype=torch.bool).triu(1), float(\"-inf\"))  # causal\n";
  return code;
}

std::string LayerNormLine(const std::string& out, const std::string& in, const std::string& g, const std::string& b,
                          const Trace& tr) {
  return out + " = torch.nn.functional.layer_norm(" + in + ", (" + std::to_string(tr.cfg.d_model) + ",), t[\"" + g +
         "\"], t[\"" + b + "\"], eps=" + PyFloat(tr.cfg.ln_eps) + ")\n";
}

std::string ConcatLines(const Trace& tr) {
  std::string code = "context = t[\"context\"].clone()\n";
  const HeadAblation& a = tr.in.ablate;
  for (std::size_t n = 0; n < a.heads.size(); ++n) {
    std::string row;
    for (Eigen::Index j = 0; j < a.values.cols(); ++j) row += (j ? ", " : "") + PyFloat(a.values(n, j));
    code += "context[0, " + std::to_string(a.heads[n]) + "] = torch.tensor([" + row +
            "], dtype=torch.float64)  # knocked out: W_O reads this instead\n";
  }
  return code + "concat = context.transpose(1, 2).reshape(1, " + std::to_string(tr.seq) + ", " +
         std::to_string(tr.cfg.d_model) + ")\n";
}

// How each tensor of the trace follows from the ones before it (formats.md), as code
// that leaves it in a variable of its own name.
std::map<std::string, std::string> Recipes(const Trace& tr) {
  const Config& c = tr.cfg;
  const std::string H = std::to_string(c.num_heads), G = std::to_string(c.kv_heads()),
                    hd = std::to_string(c.head_dim());
  const std::string xin = c.norm == Norm::Pre ? "t[\"x_ln\"]" : "t[\"x\"]";
  const std::string kvin = tr.in.cross() ? "t[\"memory\"]" : xin;
  const auto split = [&](const std::string& name, const std::string& in, const std::string& W, const std::string& n) {
    return name + " = (" + in + " @ t[\"" + W + "\"] + t[\"b" + W.substr(1) + "\"]).view(1, -1, " + n + ", " + hd +
           ").transpose(1, 2)  # split into heads\n";
  };
  std::map<std::string, std::string> r;
  r["x_ln"] = LayerNormLine("x_ln", "t[\"x\"]", "ln_gamma", "ln_beta", tr);
  r["q"] = split("q", xin, "W_q", H);
  r["k"] = split("k", kvin, "W_k", G);
  r["v"] = split("v", kvin, "W_v", G);
  r["scores"] = ScoresLines(tr);
  r["attn"] = "attn = torch.softmax(t[\"scores\"], dim=-1)  # each row sums to 1\n";
  std::string v = "t[\"v\"]";
  if (c.kv_heads() != c.num_heads) v += ".repeat_interleave(" + std::to_string(c.num_heads / c.kv_heads()) + ", dim=1)";
  r["context"] = "context = t[\"attn\"] @ " + v + "\n";
  r["concat"] = ConcatLines(tr);
  r["attn_out"] = "attn_out = t[\"concat\"] @ t[\"W_o\"] + t[\"b_o\"]\n";
  r["residual"] = "residual = t[\"x\"] + t[\"attn_out\"]\n";
  r["out"] = c.norm == Norm::Post ? LayerNormLine("out", "t[\"residual\"]", "ln_gamma", "ln_beta", tr)
                                  : "out = t[\"residual\"]\n";
  if (c.block == Block::Encoder) {
    const std::string act = c.activation == Activation::Gelu ? "torch.nn.functional.gelu" : "torch.relu";
    r["ffn_ln"] = LayerNormLine("ffn_ln", "t[\"out\"]", "ln2_gamma", "ln2_beta", tr);
    r["ffn_hidden"] = "ffn_hidden = " + act + "(" + (c.norm == Norm::Pre ? "t[\"ffn_ln\"]" : "t[\"out\"]") +
                      " @ t[\"ffn_W1\"] + t[\"ffn_b1\"])\n";
    r["ffn_out"] = "ffn_out = t[\"ffn_hidden\"] @ t[\"ffn_W2\"] + t[\"ffn_b2\"]\n";
    r["ffn_residual"] = "ffn_residual = t[\"out\"] + t[\"ffn_out\"]\n";
    r["block_out"] = c.norm == Norm::Post
                         ? LayerNormLine("block_out", "t[\"ffn_residual\"]", "ln2_gamma", "ln2_beta", tr)
                         : "block_out = t[\"ffn_residual\"]\n";
  }
  if (c.norm != Norm::Pre) r.erase("x_ln");
  if (c.block == Block::Encoder && c.norm != Norm::Pre) r.erase("ffn_ln");
  return r;
}

// The comparison every snippet ends with: the masked entries alike, the rest within
// 1e-5 of the size of what went in (float32 sums of up to a few thousand products).
std::string CompareLines(const std::string& mine, const std::string& theirs, const std::string& size) {
  return "shown = " + theirs + ".isfinite()\nassert torch.equal(shown, " + mine + ".isfinite())\nerr = (" + mine +
         "[shown] - " + theirs + "[shown]).abs().max().item()\nassert err <= 1e-5 * " + size + ", err\nprint(" +
         PyStr(_("largest difference from mhaviz's:")) + ", err)\n";
}

std::string OneQuery(const SnippetSpec& s) {
  const Trace& tr = *s.trace;
  const Config& c = tr.cfg;
  const int g = tr.KvHeadOf(s.head);
  const std::string h = std::to_string(s.head), i = std::to_string(s.query), gs = std::to_string(g);
  std::string code = Header(Format(_("mhaviz's Query view in PyTorch: head %d, query token %d (%s)."), s.head, s.query,
                                   tr.in.tokens[static_cast<std::size_t>(s.query)].c_str()),
                            s);
  code += "q = t[\"q\"][0, " + h + ", " + i + "]  # the query token's vector in this head: (head_dim,)\n";
  code += "k = t[\"k\"][0, " + gs + "]  # every Key: (seq_kv, head_dim)" +
          (g != s.head ? "; K/V head " + gs + " (GQA)" : std::string()) + "\nv = t[\"v\"][0, " + gs + "]\n";
  code += "scores = k @ q" + (c.scale ? " / math.sqrt(" + std::to_string(c.head_dim()) + ")" : std::string()) +
          "  # one score per Key token\n";
  if (c.temperature != 1.0f) code += "scores = scores / " + PyFloat(c.temperature) + "  # the temperature\n";
  if (c.mask == Mask::Causal) code += "scores[" + std::to_string(s.query + 1) + ":] = float(\"-inf\")  # causal\n";
  code +=
      "weights = torch.softmax(scores, dim=-1)  # they sum to 1\n"
      "context = weights @ v  # the weighted sum of the Values: (head_dim,)\n"
      "print(weights)\nprint(context)\n";
  code += "size = max(1.0, scores[scores.isfinite()].abs().max().item())\n";
  code += CompareLines("weights", "t[\"attn\"][0, " + h + ", " + i + "]", "size");
  return code + CompareLines("context", "t[\"context\"][0, " + h + ", " + i + "]", "size * v.abs().max().item()");
}

std::string Heatmaps(const SnippetSpec& s) {
  const Trace& tr = *s.trace;
  std::string code = Header(_("mhaviz's Heatmaps view in PyTorch: every head's attention weights."), s);
  code += ScoresLines(tr);
  code += "attn = torch.softmax(scores, dim=-1)  # (batch, num_heads, seq, seq_kv)\n";
  code += CompareLines("attn", "t[\"attn\"]", "max(1.0, scores[scores.isfinite()].abs().max().item())");
  const int H = tr.cfg.num_heads, shown = H < 16 ? H : 16, cols = shown < 4 ? shown : 4;
  code += Fill(R"py(
import matplotlib.pyplot as plt

plt.rcParams["font.family"] = ["NanumGothic", "DejaVu Sans"]  # Hangul: fonts-nanum
tokens = {{tokens}}
keys = {{keys}}
fig, axes = plt.subplots({{rows}}, {{cols}}, figsize=(4.2 * {{cols}}, 3.8 * {{rows}}), squeeze=False)
for h, ax in enumerate(axes.flat[:{{shown}}]):
    im = ax.imshow(attn[0, h].numpy(), cmap="viridis", vmin=0, vmax=1)
    ax.set_title(f"head {h}")
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(keys, rotation=90)
    ax.set_yticks(range(len(tokens)))
    ax.set_yticklabels(tokens)
    plt.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
plt.tight_layout()
plt.show()
)py",
               {{"tokens", PyStrList(tr.in.tokens)},
                {"keys", tr.in.cross() ? PyStrList(tr.in.memory_tokens) : "tokens"},
                {"rows", std::to_string((shown + cols - 1) / cols)},
                {"cols", std::to_string(cols)},
                {"shown", std::to_string(shown)}});
  return code;
}

std::string TensorSnippet(const SnippetSpec& s) {
  const Trace& tr = *s.trace;
  const std::map<std::string, std::string> recipes = Recipes(tr);
  const auto it = recipes.find(s.tensor);
  std::string code =
      Header(Format(_("mhaviz's Inspector in PyTorch: %s, computed from the tensors before it."), s.tensor.c_str()), s);
  if (it == recipes.end()) {
    return code + "print(t[" + PyStr(s.tensor) + "])  # " +
           _("an input or a weight: mhaviz reads it, it does not compute it") + "\n";
  }
  code += it->second;
  const bool per_head = s.tensor == "q" || s.tensor == "k" || s.tensor == "v" || s.tensor == "scores" ||
                        s.tensor == "attn" || s.tensor == "context";
  code += per_head
              ? "print(" + s.tensor + "[0, " + std::to_string(s.head) + "])  # head " + std::to_string(s.head) + "\n"
              : "print(" + s.tensor + "[0])\n";
  std::string size = "max(v.abs().max().item() for v in t.values() if v.numel() and v.isfinite().all())";
  return code + CompareLines(s.tensor, "t[" + PyStr(s.tensor) + "]", size);
}

}  // namespace

std::vector<std::string> SnippetTensors(const Trace& t) {
  std::vector<std::string> names;
  for (const auto& [name, code] : Recipes(t)) names.push_back(name);
  return names;
}

std::string PyTorchSnippet(const SnippetSpec& s) {
  if (!s.trace) throw Error("a snippet needs a computed layer.");
  const Trace& tr = *s.trace;
  if (tr.attn.size() == 0) throw Error("Flash attention keeps no weights for a snippet to compare with.");
  const bool heads = s.kind != Snippet::Heatmaps;
  if (heads && (s.head < 0 || s.head >= tr.cfg.num_heads))
    throw Error("head " + std::to_string(s.head) + " does not exist: the heads are 0 to " +
                std::to_string(tr.cfg.num_heads - 1) + ".");
  switch (s.kind) {
    case Snippet::OneQuery:
      if (s.query < 0 || s.query >= tr.seq)
        throw Error("query token " + std::to_string(s.query) + " does not exist: the tokens are 0 to " +
                    std::to_string(tr.seq - 1) + ".");
      return OneQuery(s);
    case Snippet::Heatmaps: return Heatmaps(s);
    case Snippet::Tensor: break;
  }
  bool known = false;
  for (const TensorView& v : Tensors(tr)) known = known || v.name == s.tensor;
  if (!known) throw Error("the trace has no tensor named '" + s.tensor + "'.");
  return TensorSnippet(s);
}

}  // namespace mha::notebook
