#include "notebook/layer_cells.hpp"

#include "notebook/cells.hpp"
#include "text/i18n.hpp"

namespace mha::notebook {
namespace {

using i18n::Format;

std::string ShapeTuple(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

std::string LayerCells::Section(const char* title, const std::string& body) {
  return "## " + std::to_string(++section) + ". " + title + "\n\n" + body;
}

std::string LayerCells::QueryInput() const { return s.trace->cfg.norm == Norm::Pre ? "x_ln" : "x"; }
std::string LayerCells::KvInput() const { return s.trace->in.cross() ? "memory" : QueryInput(); }

void LayerCells::Setup() {
  const Trace& t = *s.trace;
  const Config& c = t.cfg;
  std::string memory;
  if (t.in.cross()) memory = "memory_tokens = " + PyStrList(t.in.memory_tokens) + "\n";
  nb.Code(Fill(R"py(
import math

import numpy as np
import torch

torch.set_printoptions(precision=4, sci_mode=False, linewidth=110)

z = np.load({{npz}})  # every tensor mhaviz computed (float32), saved beside this notebook
app = {name: torch.from_numpy(z[name]) for name in z.files}

tokens = {{tokens}}
{{memory}}seq, seq_kv = {{seq}}, {{seq_kv}}
d_model, num_heads, num_kv_heads = {{d_model}}, {{num_heads}}, {{kv_heads}}
head_dim = d_model // num_heads  # d_k
ln_eps = {{eps}}
print(f"seq = {seq}, d_model = {d_model}, num_heads = {num_heads}, head_dim = {head_dim}")
{{check}})py",
               {{"npz", PyStr(s.npz_name)},
                {"tokens", PyStrList(t.in.tokens)},
                {"memory", memory},
                {"seq", std::to_string(t.seq)},
                {"seq_kv", std::to_string(t.seq_kv)},
                {"d_model", std::to_string(c.d_model)},
                {"num_heads", std::to_string(c.num_heads)},
                {"kv_heads", std::to_string(c.kv_heads())},
                {"eps", PyFloat(c.ln_eps)},
                {"check", CheckHelperCode()}}));
}

void LayerCells::Shapes() {
  const Trace& t = *s.trace;
  nb.Markdown(Section(_("The shapes"),
                      _("The shape-flow table: each step, what it computes and the shape of its result, batch "
                        "first as in the lessons: (batch, num_heads, seq_len, head_dim). Each row's tensor is in the "
                        ".npz under the name in the third column.")));
  std::string rows;
  for (const FlowRow& r : t.flow) {
    if (r.tensor.empty()) continue;
    rows += "    (" + PyStr(_(r.step.c_str())) + ", " + PyStr(r.formula) + ", " + PyStr(r.tensor) + ", " +
            ShapeTuple(r.shape) + "),\n";
  }
  nb.Code(Fill(R"py(
shape_flow = [  # step, what it computes, its .npz key, its shape
{{rows}}]
for step, formula, key, shape in shape_flow:
    print(f"{step:<24} {formula:<32} {key:<10} {shape}")
    assert app[key].numel() == math.prod(shape), f"{key} is {tuple(app[key].shape)} in the .npz"
)py",
               {{"rows", rows}}));
}

void LayerCells::Projections() {
  const Trace& t = *s.trace;
  const bool pre = t.cfg.norm == Norm::Pre;
  std::string md =
      _("Every token's vector x, the layer's input, is multiplied by W_Q, W_K and W_V, in the lessons' "
        "row-vector convention: Q = x W_Q + b_Q. (torch.nn.Linear stores the transpose of W and "
        "computes x Wᵀ + b.) The tensors are turned into float64, so that the checks measure mhaviz's "
        "float32 rounding alone.");
  if (pre) md += "\n\n" + std::string(_("Pre-LN: LayerNorm comes first, and the projections read x_ln = LN(x)."));
  if (t.in.cross())
    md += "\n\n" + std::string(_("Cross-attention: Query comes from the sentence; Key and Value come from the memory "
                                 "sentence (not normalised)."));
  nb.Markdown(Section(_("Q, K and V"), md));
  std::string code = R"py(
x = app["x"].double()  # (batch, seq, d_model)
W_q, b_q = app["W_q"].double(), app["b_q"].double()
W_k, b_k = app["W_k"].double(), app["b_k"].double()
W_v, b_v = app["W_v"].double(), app["b_v"].double()
W_o, b_o = app["W_o"].double(), app["b_o"].double()
gamma, beta = app["ln_gamma"].double(), app["ln_beta"].double()


def layer_norm(t, gamma, beta):
    mean = t.mean(-1, keepdim=True)
    var = t.var(-1, keepdim=True, unbiased=False)  # the biased variance, as torch.nn.LayerNorm
    return (t - mean) / torch.sqrt(var + ln_eps) * gamma + beta

)py";
  if (pre) code += "x_ln = layer_norm(x, gamma, beta)\ncheck(\"x_ln\", x_ln, app[\"x_ln\"], d_model)\n";
  if (t.in.cross()) code += "memory = app[\"memory\"].double()  # (batch, seq_kv, d_model)\n";
  code += Fill(R"py(
Q = {{xq}} @ W_q + b_q  # (batch, seq, d_model)
K = {{xkv}} @ W_k + b_k  # (batch, seq_kv, num_kv_heads * head_dim)
V = {{xkv}} @ W_v + b_v
print("Q", tuple(Q.shape), "=")
print(Q[0, :, :8], "..." if d_model > 8 else "")


def split_heads(t, n):
    """(batch, seq, n * head_dim) -> (batch, n, seq, head_dim), as lesson 003's split_heads"""
    return t.view(t.shape[0], t.shape[1], n, head_dim).transpose(1, 2)


q = split_heads(Q, num_heads)  # (batch, num_heads, seq, head_dim)
k = split_heads(K, num_kv_heads)  # (batch, num_kv_heads, seq_kv, head_dim)
v = split_heads(V, num_kv_heads)
check("q", q, app["q"], d_model)
check("k", k, app["k"], d_model)
check("v", v, app["v"], d_model)
)py",
               {{"xq", QueryInput()}, {"xkv", KvInput()}});
  nb.Code(code);
}

void LayerCells::HeadLoop() {
  const Config& c = s.trace->cfg;
  std::string md =
      _("Lesson 004's loop: each head works on its own head_dim numbers of Q, K and V and computes "
        "softmax(Q Kᵀ / √d_k) V by itself. The weights of a row sum to 1: how much of each Key token's "
        "Value the Query token takes.");
  if (c.kv_heads() != c.num_heads)
    md += "\n\n" + std::string(_("GQA/MQA: query heads share Key/Value heads; query head h reads K/V head "
                                 "h // (num_heads / num_kv_heads)."));
  if (c.mask == Mask::Causal)
    md += "\n\n" + std::string(_("The causal mask sets the scores of later tokens (above the diagonal) to -inf "
                                 "before the softmax, so their weights are exactly 0."));
  nb.Markdown(Section(_("Each head: scores, softmax, weights × V"), md));
  std::string score = c.scale ? "q[0, h] @ k[0, g].T / math.sqrt(head_dim)  # (seq, seq_kv)"
                              : "q[0, h] @ k[0, g].T  # (seq, seq_kv); not divided by sqrt(d_k)";
  std::string extra;
  if (c.temperature != 1.0f) extra += "    scores_h = scores_h / temperature\n";
  if (c.mask == Mask::Causal) extra += "    scores_h = scores_h.masked_fill(hidden, float(\"-inf\"))\n";
  std::string before;
  if (c.temperature != 1.0f) before += "temperature = " + PyFloat(c.temperature) + "\n";
  if (c.mask == Mask::Causal)
    before += "hidden = torch.ones(seq, seq_kv, dtype=torch.bool).triu(diagonal=1)  # the later tokens\n";
  nb.Code(Fill(R"py(
group = num_heads // num_kv_heads  # query heads per K/V head (1 without GQA)
{{before}}scores_per_head, attn_per_head, context_per_head = [], [], []
for h in range(num_heads):
    g = h // group  # the K/V head query head h reads
    scores_h = {{score}}
{{extra}}    attn_h = torch.softmax(scores_h, dim=-1)  # each row sums to 1
    context_h = attn_h @ v[0, g]  # (seq, head_dim)
    scores_per_head.append(scores_h)
    attn_per_head.append(attn_h)
    context_per_head.append(context_h)
# torch >= 2.0 has this in one call, torch.nn.functional.scaled_dot_product_attention(q, k, v),
# which returns the context but not the weights; Debian 12's torch 1.13 has no such function.
scores = torch.stack(scores_per_head).unsqueeze(0)  # (batch, num_heads, seq, seq_kv)
attn = torch.stack(attn_per_head).unsqueeze(0)  # (batch, num_heads, seq, seq_kv)
context = torch.stack(context_per_head).unsqueeze(0)  # (batch, num_heads, seq, head_dim)
print({{label}})
print(attn[0, 0])
largest_score = scores[scores.isfinite()].abs().max().item()
check("scores", scores, app["scores"], d_model)
check("attn", attn, app["attn"], d_model, size=largest_score)
check("context", context, app["context"], d_model, size=largest_score * v.abs().max().item())
)py",
               {{"before", before},
                {"score", score},
                {"extra", extra},
                {"label", PyStr(_("Head 0's attention weights (rows: Query tokens, columns: Key tokens):"))}}));
}

void LayerCells::Output() {
  const Trace& t = *s.trace;
  const HeadAblation& ab = t.in.ablate;
  std::string md = _("The heads' outputs side by side again (concat), then the output projection W_O.");
  std::string knock;
  if (!ab.empty()) {
    md += "\n\n" + std::string(s.ablate_mode == AblationMode::Zero
                                   ? _("Knocked-out heads: W_O reads zeros in place of their context (zero "
                                       "ablation), so they add nothing to attn_out. Their weights above are still "
                                       "their own.")
                                   : _("Knocked-out heads: W_O reads each one's mean context over this sentence's "
                                       "tokens in place of its context (mean ablation), so it adds what it adds on "
                                       "average and nothing that depends on the token. Their weights above are "
                                       "still their own."));
    knock =
        "knocked_out = " + PyIntList(ab.heads) + "\ncontext_used = context.clone()\nfor h in knocked_out:\n" +
        (s.ablate_mode == AblationMode::Zero ? "    context_used[0, h] = 0  # zero ablation\n"
                                             : "    context_used[0, h] = context[0, h].mean(dim=0)  # mean ablation\n");
  } else {
    knock = "context_used = context\n";
  }
  md += "\n\n" + std::string(t.cfg.norm == Norm::Post
                                 ? _("Then the residual connection and LayerNorm (post-LN): out = LN(x + attn_out).")
                                 : _("Then the residual connection: out = x + attn_out."));
  nb.Markdown(Section(_("Concat, W_O and the residual connection"), md));
  std::string res =
      t.cfg.norm == Norm::Post ? "out = layer_norm(residual, gamma, beta)  # post-LN\n" : "out = residual\n";
  nb.Code(knock + Fill(R"py(
concat = torch.cat([context_used[0, h] for h in range(num_heads)], dim=-1).unsqueeze(0)  # (batch, seq, d_model)
attn_out = concat @ W_o + b_o
residual = x + attn_out
{{res}}print("out", tuple(out.shape), "=")
print(out[0, :, :8], "..." if d_model > 8 else "")
check("concat", concat, app["concat"], d_model, size=largest_score * v.abs().max().item())
check("attn_out", attn_out, app["attn_out"], d_model)
check("residual", residual, app["residual"], d_model)
check("out", out, app["out"], d_model)
)py",
                       {{"res", res}}));
}

void LayerCells::Ffn() {
  const Config& c = s.trace->cfg;
  std::string md =
      _("The encoder block goes on with a position-wise feed-forward network, FFN(h) = act(h W1 + b1) "
        "W2 + b2, applied to each token on its own, with its own residual connection and LayerNorm "
        "(lesson 002).");
  if (c.activation == Activation::Gelu)
    md += " " + std::string(_("GELU is the exact erf form, as torch.nn.GELU() computes it."));
  nb.Markdown(Section(_("The FFN"), md));
  const bool pre = c.norm == Norm::Pre;
  nb.Code(Fill(R"py(
W1, b1 = app["ffn_W1"].double(), app["ffn_b1"].double()  # (d_model, d_ff), (d_ff,)
W2, b2 = app["ffn_W2"].double(), app["ffn_b2"].double()  # (d_ff, d_model), (d_model,)
gamma2, beta2 = app["ln2_gamma"].double(), app["ln2_beta"].double()
d_ff = W1.shape[1]
{{ffn_in}}ffn_hidden = {{act}}(ffn_in @ W1 + b1)  # (batch, seq, d_ff)
ffn_out = ffn_hidden @ W2 + b2
ffn_residual = out + ffn_out
{{block_out}}check("ffn_hidden", ffn_hidden, app["ffn_hidden"], d_model)
check("ffn_out", ffn_out, app["ffn_out"], d_ff)
check("block_out", block_out, app["block_out"], d_ff)
)py",
               {{"ffn_in", pre ? "ffn_in = layer_norm(out, gamma2, beta2)  # pre-LN\ncheck(\"ffn_ln\", ffn_in, "
                                 "app[\"ffn_ln\"], d_model)\n"
                               : "ffn_in = out\n"},
                {"act", c.activation == Activation::Gelu ? "torch.nn.functional.gelu" : "torch.relu"},
                {"block_out", c.norm == Norm::Post ? "block_out = layer_norm(ffn_residual, gamma2, beta2)  # post-LN\n"
                                                   : "block_out = ffn_residual\n"}}));
}

void LayerCells::LessonNumbers() {
  nb.Markdown(Section(_("The lesson's own numbers"),
                      _("The lesson works this example out by hand; here are its numbers, each next to the one "
                        "computed above.")));
  std::string code;
  for (const LessonExpectation& e : s.lesson->expected) {
    const std::string at = e.head >= 0 ? "[0, " + std::to_string(e.head) + "]" : "[0]";
    code += "print(" + PyStr(e.what) + ")\n";
    if (!e.shape.empty()) {
      code += "assert tuple(" + e.tensor + at + ".shape) == " + ShapeTuple(e.shape) + "\n";
    } else {
      std::string values;
      for (std::size_t i = 0; i < e.values.size(); ++i) values += (i ? ", " : "") + PyFloat(e.values[i]);
      code += "print(\"   \", " + e.tensor + at + "[" + std::to_string(e.row) + "])\n";
      code += "assert torch.allclose(" + e.tensor + at + "[" + std::to_string(e.row) + "], torch.tensor([" + values +
              "], dtype=torch.float64), atol=1e-5)\n";
    }
  }
  nb.Code(code);
}

void LayerCells::Heatmaps() {
  const Trace& t = *s.trace;
  nb.Markdown(Section(_("The heatmaps"),
                      _("Lesson 004's figure: one heatmap per head, the Query tokens as rows and the Key tokens as "
                        "columns, on the same fixed scale from 0 to 1 as mhaviz's Heatmaps view.")));
  GridSpec g;
  g.num_heads = t.cfg.num_heads;
  g.rows = t.seq;
  g.cols = t.seq_kv;
  g.cols_var = t.in.cross() ? "memory_tokens" : "tokens";
  g.kv_group = t.cfg.num_heads / t.cfg.kv_heads();
  nb.Code(FontCode() + "\n" + HeatmapGridCode(g));
}

}  // namespace mha::notebook
