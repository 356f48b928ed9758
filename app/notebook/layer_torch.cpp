// The layer notebook's torch.nn cell: the same layer with torch.nn.MultiheadAttention
// (lessons 001 and 003), nn.LayerNorm and nn.Linear, loaded with mhaviz's weights.
#include "notebook/cells.hpp"
#include "notebook/layer_cells.hpp"
#include "text/i18n.hpp"

namespace mha::notebook {
namespace {

// GQA: nn.MultiheadAttention has a K/V head per query head.
const char* kPerQueryHead = R"py(

def per_query_head(w):
    """GQA's K/V weights (last axis num_kv_heads * head_dim) repeated for the query heads of
    each group: nn.MultiheadAttention has one K/V head per query head, and this computes
    the same weights (it costs what GQA saves)."""
    return w.unflatten(-1, (num_kv_heads, head_dim)).repeat_interleave(group, dim=-2).flatten(-2)

)py";

std::string FoldLine(const Config& c) {
  // nn.MultiheadAttention always divides by sqrt(head_dim).
  std::string f;
  if (!c.scale) f = "math.sqrt(head_dim)";
  if (c.temperature != 1.0f) f += (f.empty() ? "1 / temperature" : " / temperature");
  if (f.empty()) return "fold = 1.0\n";
  return "fold = " + f +
         "  # nn.MultiheadAttention always divides the scores by sqrt(head_dim): what differs goes into W_Q, b_Q\n";
}

std::string KnockoutLines(const Trace& t, AblationMode mode) {
  if (t.in.ablate.empty()) return "";
  std::string code =
      "    for h in knocked_out:  # W_O no longer reads the head: its columns of out_proj.weight (W_O "
      "transposed) are zeroed\n"
      "        cols = slice(h * head_dim, (h + 1) * head_dim)\n";
  if (mode == AblationMode::Mean)
    code += "        mha.out_proj.bias += context[0, h].mean(dim=0) @ W_o[cols]  # what it adds on average\n";
  return code + "        mha.out_proj.weight[:, cols] = 0\n";
}

std::string FfnLines(const Config& c) {
  if (c.block != Block::Encoder) return "";
  std::string combine;
  switch (c.norm) {
    case Norm::Post: combine = "ln2(torch_out + ffn(torch_out))"; break;
    case Norm::Pre: combine = "torch_out + ffn(ln2(torch_out))"; break;
    case Norm::None: combine = "torch_out + ffn(torch_out)"; break;
  }
  return Fill(R"py(
ffn = torch.nn.Sequential(torch.nn.Linear(d_model, d_ff), torch.nn.{{act}}(), torch.nn.Linear(d_ff, d_model)).double()
ln2 = torch.nn.LayerNorm(d_model, eps=ln_eps).double()
with torch.no_grad():
    ffn[0].weight.copy_(W1.T)
    ffn[0].bias.copy_(b1)
    ffn[2].weight.copy_(W2.T)
    ffn[2].bias.copy_(b2)
    ln2.weight.copy_(gamma2)
    ln2.bias.copy_(beta2)
    torch_block_out = {{combine}}
check("nn block_out", torch_block_out, app["block_out"], d_ff)
)py",
              {{"act", c.activation == Activation::Gelu ? "GELU" : "ReLU"}, {"combine", combine}});
}

}  // namespace

void LayerCells::Torch() {
  const Trace& t = *s.trace;
  const Config& c = t.cfg;
  const bool gqa = c.kv_heads() != c.num_heads;
  std::string md =
      _("Lessons 001 and 003 use PyTorch's own layer, torch.nn.MultiheadAttention. Loaded with the same "
        "weights it gives the same attention weights and output: it keeps W_Q, W_K and W_V in one "
        "matrix, in_proj_weight, transposed.");
  if (gqa)
    md += " " + std::string(_("It has no GQA: the shared Key/Value weights are repeated for every query head of "
                              "their group."));
  if (!c.scale || c.temperature != 1.0f)
    md += " " + std::string(_("It always divides the scores by √d_k, so the scaling that differs is folded into "
                              "W_Q and b_Q."));
  if (!t.in.ablate.empty())
    md += " " + std::string(_("It cannot knock a head out, but W_O can stop reading it: the columns of "
                              "out_proj.weight that read the head are set to 0 (and, for mean ablation, what the "
                              "head adds on average goes into out_proj.bias)."));
  nb.Markdown(Section(_("The same with torch.nn.MultiheadAttention"), md));
  const std::string q_in = c.norm == Norm::Pre ? "ln(x)" : "x";
  const std::string kv_in = t.in.cross() ? "memory" : q_in;
  std::string out;
  switch (c.norm) {
    case Norm::Post: out = "ln(x + torch_attn_out)"; break;
    default: out = "x + torch_attn_out"; break;
  }
  nb.Code(Fill(R"py(
mha = torch.nn.MultiheadAttention(d_model, num_heads, bias=True, batch_first=True).double()
ln = torch.nn.LayerNorm(d_model, eps=ln_eps).double()
{{per_query_head}}{{fold}}with torch.no_grad():
    mha.in_proj_weight.copy_(torch.cat([W_q * fold, {{wk}}, {{wv}}], dim=1).T)
    mha.in_proj_bias.copy_(torch.cat([b_q * fold, {{bk}}, {{bv}}]))
    mha.out_proj.weight.copy_(W_o.T)
    mha.out_proj.bias.copy_(b_o)
{{knockout}}    ln.weight.copy_(gamma)
    ln.bias.copy_(beta)
    torch_attn_out, torch_attn = mha({{q_in}}, {{kv_in}}, {{kv_in}}, attn_mask={{mask}}, need_weights=True,
                                     average_attn_weights=False)
    torch_out = {{out}}
check("nn attn", torch_attn, app["attn"], d_model, size=largest_score)
check("nn attn_out", torch_attn_out, app["attn_out"], d_model)
check("nn out", torch_out, app["out"], d_model)
{{ffn}})py",
               {{"per_query_head", gqa ? kPerQueryHead : ""},
                {"fold", FoldLine(c)},
                {"wk", gqa ? "per_query_head(W_k)" : "W_k"},
                {"wv", gqa ? "per_query_head(W_v)" : "W_v"},
                {"bk", gqa ? "per_query_head(b_k)" : "b_k"},
                {"bv", gqa ? "per_query_head(b_v)" : "b_v"},
                {"knockout", KnockoutLines(t, s.ablate_mode)},
                {"q_in", q_in},
                {"kv_in", kv_in},
                {"mask", c.mask == Mask::Causal ? "hidden" : "None"},
                {"out", out},
                {"ffn", FfnLines(c)}}));
}

}  // namespace mha::notebook
