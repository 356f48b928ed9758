#include "notebook/model_cells.hpp"

#include "notebook/cells.hpp"
#include "text/i18n.hpp"

namespace mha::notebook {
namespace {

std::string Knockouts(const ModelSpec& s, int num_layers) {
  std::string heads = "knocked_out = {", repl = "replacement = {";
  bool first = true;
  for (int l = 0; l < num_layers; ++l) {
    std::vector<int> hs;
    for (const HeadRef& h : s.knocked_out)
      if (h.layer == l) hs.push_back(h.head);
    if (hs.empty()) continue;
    const std::string sep = first ? "" : ", ";
    first = false;
    heads += sep + std::to_string(l) + ": " + PyIntList(hs);
    repl += sep + std::to_string(l) + ": " +
            (s.ablate_mode == AblationMode::Mean
                 ? "app[\"ablate." + std::to_string(l) + "\"].double()"
                 : "torch.zeros(" + std::to_string(hs.size()) + ", head_dim, dtype=torch.float64)");
  }
  return heads + "}  # layer: its heads knocked out\n" + repl +
         (s.ablate_mode == AblationMode::Mean
              ? "}  # what W_O reads instead: each head's mean context, measured by mhaviz on the model's text\n"
              : "}  # what W_O reads instead: zeros\n");
}

}  // namespace

std::string ModelCells::Section(const char* title, const std::string& body) {
  return "## " + std::to_string(++section) + ". " + title + "\n\n" + body;
}

void ModelCells::Setup() {
  const Config& c = Cfg().layer;
  nb.Code(
      Fill(R"py(
import json
import math
import unicodedata

import numpy as np
{{spm}}import torch

torch.set_printoptions(precision=4, sci_mode=False, linewidth=110)

z = np.load({{npz}})  # the checkpoint{{and_tokenizer}} and what mhaviz computed, beside this notebook
P = {name: torch.from_numpy(z[name]).double() for name in z.files
     if name not in ("config", "tokenizer") and not name.startswith("mhaviz.")}
app = {name[len("mhaviz."):]: torch.from_numpy(z[name]) for name in z.files if name.startswith("mhaviz.")}
config = json.loads(z["config"].tobytes().decode("utf-8"))
print({key: value for key, value in config.items() if key not in ("vocab", "task")})

num_layers, d_model, num_heads, num_kv_heads = {{layers}}, {{d_model}}, {{heads}}, {{kv_heads}}
head_dim = d_model // num_heads  # d_k
ln_eps = {{eps}}
widest = {{widest}}  # the longest sum of products in a layer: the checks' n grows by it with each layer
n_model = num_layers * widest
{{check}})py",
           {{"spm", Language() ? "import sentencepiece as spm\n" : ""},
            {"npz", PyStr(s.npz_name)},
            {"and_tokenizer", Language() ? ", its tokenizer" : ""},
            {"layers", std::to_string(Cfg().num_layers)},
            {"d_model", std::to_string(c.d_model)},
            {"heads", std::to_string(c.num_heads)},
            {"kv_heads", std::to_string(c.kv_heads())},
            {"eps", PyFloat(c.ln_eps)},
            {"widest", std::to_string(c.block == Block::Encoder && c.ffn_dim() > c.d_model ? c.ffn_dim() : c.d_model)},
            {"check", CheckHelperCode()}}));
}

void ModelCells::Tokens() {
  if (!Language()) {
    nb.Markdown(Section(_("The tokens"), _("This model was trained on a task, not on text: it reads token ids, "
                                           "the ones mhaviz ran it on.")));
    nb.Code("ids = app[\"ids\"].tolist()\npieces = " + PyStrList(s.pieces) + "\nprint(ids)");
    return;
  }
  nb.Markdown(Section(_("The pieces"),
                      _("The model reads the sentence as SentencePiece pieces, with <s> (BOS) first as in training; "
                        "the tokenizer is the model's own, saved in the .npz. ▁ marks a piece that starts a word.")));
  std::string code = "sp = spm.SentencePieceProcessor(model_proto=z[\"tokenizer\"].tobytes())\n";
  if (s.sentence.empty()) {
    code += "ids = app[\"ids\"].tolist()  # the ids mhaviz was given\n";
  } else {
    code += Fill(
        R"py(sentence = {{sentence}}
ids = [{{bos}}] + sp.encode(unicodedata.normalize("NFC", sentence))  # NFC: the form the corpus was written in
ids = ids[:{{max_seq}}]  # the model reads at most max_seq pieces (its context)
assert ids == app["ids"].tolist(), "mhaviz cut the sentence into other pieces"
)py",
        {{"sentence", PyStr(s.sentence)}, {"bos", std::to_string(s.bos)}, {"max_seq", std::to_string(Cfg().max_seq)}});
  }
  code += "pieces = sp.id_to_piece(ids)\nprint(len(ids), " + PyStr(_("pieces:")) + ", pieces)";
  nb.Code(code);
}

std::string ModelCells::PositionalCode() const {
  switch (Cfg().positional) {
    case Positional::Learned: return "x = x + P[\"pos_embed\"][:seq]  # learned positional embeddings\n";
    case Positional::Sinusoidal:
      return R"py(# the sinusoidal positional encoding, Vaswani et al. (2017), section 3.5
angle = torch.arange(seq, dtype=torch.float64)[:, None] / 10000 ** (torch.arange(0, d_model, 2) / d_model)
pe = torch.zeros(seq, d_model, dtype=torch.float64)
pe[:, 0::2] = torch.sin(angle)
pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
x = x + pe
)py";
    case Positional::None: break;
  }
  return "";
}

void ModelCells::Embedding() {
  nb.Markdown(Section(_("Embedding"), _("Each piece's learned vector (a row of tok_embed), plus where it stands: "
                                        "the layers' input x.")));
  nb.Code(R"py(seq = len(ids)
tokens = torch.tensor(ids)
x = P["tok_embed"][tokens]  # (seq, d_model)
)py" + PositionalCode() +
          "x = x.unsqueeze(0)  # (batch, seq, d_model)\ncheck(\"x\", x, app[\"x\"], 1)");
}

void ModelCells::Layers() {
  const Config& c = Cfg().layer;
  std::string md = c.block == Block::Encoder
                       ? _("Every layer is the layer of the other notebooks: Q, K and V, lesson 004's loop over the "
                           "heads, concat and W_O, the residual connection and LayerNorm, then the FFN with its own.")
                       : _("Every layer is the layer of the other notebooks: Q, K and V, lesson 004's loop over the "
                           "heads, concat and W_O, the residual connection and LayerNorm.");
  if (c.norm == Norm::Pre) md += " " + std::string(_("Pre-LN: each sublayer reads LN(x), and adds its output to x."));
  if (!s.knocked_out.empty())
    md += "\n\n" + std::string(s.ablate_mode == AblationMode::Zero
                                   ? _("Knocked-out heads: W_O reads zeros in place of their context, at every "
                                       "position (zero ablation), as mhaviz does.")
                                   : _("Knocked-out heads: W_O reads each one's mean context in place of its "
                                       "context, at every position (mean ablation); mhaviz measured the means on the "
                                       "model's validation text, and saved them in the .npz."));
  nb.Markdown(Section(_("Every layer"), md));
  std::string score = c.scale ? "q_h @ k_h.T / math.sqrt(head_dim)" : "q_h @ k_h.T  # not divided by sqrt(d_k)";
  if (c.temperature != 1.0f) score = "(" + score + ") / " + PyFloat(c.temperature) + "  # the temperature";
  std::string loop = Fill(
      R"py(
group = num_heads // num_kv_heads  # query heads per K/V head (1 without GQA)
{{hidden}}{{knock}}

def layer_norm(t, gamma, beta):
    mean = t.mean(-1, keepdim=True)
    var = t.var(-1, keepdim=True, unbiased=False)  # the biased variance, as torch.nn.LayerNorm
    return (t - mean) / torch.sqrt(var + ln_eps) * gamma + beta


def attention(l, x):
    """Layer l's multi-head attention, lesson 004's loop over the heads: the output, the
    weights and the scores, both (batch, num_heads, seq, seq)."""
    W = lambda name: P[f"layers.{l}.{name}"]
    Q = x[0] @ W("W_q") + W("b_q")  # (seq, d_model)
    K = x[0] @ W("W_k") + W("b_k")  # (seq, num_kv_heads * head_dim)
    V = x[0] @ W("W_v") + W("b_v")
    heads, weights, scores = [], [], []
    for h in range(num_heads):
        g = h // group  # the K/V head query head h reads
        q_h = Q[:, h * head_dim:(h + 1) * head_dim]
        k_h = K[:, g * head_dim:(g + 1) * head_dim]
        v_h = V[:, g * head_dim:(g + 1) * head_dim]
        scores_h = {{score}}
{{mask}}        attn_h = torch.softmax(scores_h, dim=-1)
        context_h = attn_h @ v_h  # (seq, head_dim)
        if h in knocked_out.get(l, []):  # W_O reads the replacement instead, at every position
            context_h = replacement[l][knocked_out[l].index(h)].expand(seq, head_dim)
        heads.append(context_h)
        weights.append(attn_h)
        scores.append(scores_h)
    concat = torch.cat(heads, dim=-1)  # (seq, d_model)
    out = (concat @ W("W_o") + W("b_o")).unsqueeze(0)
    return out, torch.stack(weights).unsqueeze(0), torch.stack(scores).unsqueeze(0)

)py",
      {{"hidden", c.mask == Mask::Causal ? "hidden = torch.ones(seq, seq, dtype=torch.bool).triu(diagonal=1)  # the "
                                           "later pieces\n"
                                         : ""},
       {"knock", Knockouts(s, Cfg().num_layers)},
       {"score", score},
       {"mask", c.mask == Mask::Causal ? "        scores_h = scores_h.masked_fill(hidden, float(\"-inf\"))\n" : ""}});
  if (c.block == Block::Encoder)
    loop += Fill(R"py(
def ffn(l, x):
    W = lambda name: P[f"layers.{l}.{name}"]
    return {{act}}(x @ W("ffn_W1") + W("ffn_b1")) @ W("ffn_W2") + W("ffn_b2")

)py",
                 {{"act", c.activation == Activation::Gelu ? "torch.nn.functional.gelu" : "torch.relu"}});
  std::string body =
      "    a, weights, scores = attention(l, " +
      std::string(c.norm == Norm::Pre ? "layer_norm(x, W(\"ln_gamma\"), W(\"ln_beta\"))" : "x") + ")\n" +
      (c.norm == Norm::Post ? "    x = layer_norm(x + a, W(\"ln_gamma\"), W(\"ln_beta\"))\n" : "    x = x + a\n") +
      "    largest = scores[scores.isfinite()].abs().max().item()\n"
      "    check(f\"L{l} scores\", scores, app[f\"layers.{l}.scores\"], (l + 1) * widest)\n"
      "    check(f\"L{l} attn\", weights, app[f\"layers.{l}.attn\"], (l + 1) * widest, size=largest)\n"
      "    check(f\"L{l} out\", x, app[f\"layers.{l}.out\"], (l + 1) * widest)\n";
  if (c.block == Block::Encoder)
    body +=
        std::string(c.norm == Norm::Pre    ? "    x = x + ffn(l, layer_norm(x, W(\"ln2_gamma\"), W(\"ln2_beta\")))\n"
                    : c.norm == Norm::Post ? "    x = layer_norm(x + ffn(l, x), W(\"ln2_gamma\"), W(\"ln2_beta\"))\n"
                                           : "    x = x + ffn(l, x)\n") +
        "    check(f\"L{l} block_out\", x, app[f\"layers.{l}.block_out\"], (l + 1) * widest)\n";
  loop +=
      "\nattn_per_layer, largest_per_layer = [], []\nfor l in range(num_layers):\n    W = lambda name: "
      "P[f\"layers.{l}.{name}\"]\n" +
      body + "    attn_per_layer.append(weights)\n    largest_per_layer.append(largest)\nattn = attn_per_layer[" +
      std::to_string(s.layer) + "]  # the layer mhaviz shows: (batch, num_heads, seq, seq)\n";
  nb.Code(loop);
}

}  // namespace mha::notebook
