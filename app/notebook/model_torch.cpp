// The trained model's notebook, its torch.nn cell: the whole model again from
// torch.nn.Embedding, torch.nn.MultiheadAttention, nn.LayerNorm and nn.Linear.
#include "notebook/cells.hpp"
#include "notebook/model_cells.hpp"
#include "text/i18n.hpp"

namespace mha::notebook {
namespace {

std::string PositionalLine(Positional p) {
  switch (p) {
    case Positional::Learned: return "    y = y + P[\"pos_embed\"][:seq]\n";
    case Positional::Sinusoidal: return "    y = y + pe\n";
    case Positional::None: break;
  }
  return "";
}

std::string FoldText(const Config& c) {
  std::string f;
  if (!c.scale) f = "math.sqrt(head_dim)";
  if (c.temperature != 1.0f) f += (f.empty() ? "1 / " : " / ") + PyFloat(c.temperature);
  return f.empty() ? "1.0" : f + "  # nn.MultiheadAttention always divides by sqrt(head_dim)";
}

}  // namespace

void ModelCells::Torch() {
  const Config& c = Cfg().layer;
  const bool gqa = c.kv_heads() != c.num_heads;
  std::string md =
      _("The same model from PyTorch's own modules: torch.nn.Embedding, torch.nn.MultiheadAttention "
        "(lessons 001 and 003), torch.nn.LayerNorm and torch.nn.Linear, loaded with the checkpoint's "
        "weights (nn.Linear and in_proj_weight keep W transposed).");
  if (gqa)
    md += " " + std::string(_("nn.MultiheadAttention has no GQA: the shared Key/Value weights are repeated for "
                              "every query head of their group."));
  if (!s.knocked_out.empty())
    md += " " + std::string(_("It cannot knock a head out, but W_O can stop reading it: the columns of "
                              "out_proj.weight that read the head are set to 0, and what W_O reads instead goes into "
                              "out_proj.bias."));
  nb.Markdown(Section(_("The same with torch.nn modules"), md));
  std::string kv = gqa ? "per_query_head" : "";
  std::string code = Fill(
      R"py(
fold = {{fold}}
{{per_query_head}}

def nn_layer(l):
    W = lambda name: P[f"layers.{l}.{name}"]
    mha = torch.nn.MultiheadAttention(d_model, num_heads, bias=True, batch_first=True).double()
    ln1 = torch.nn.LayerNorm(d_model, eps=ln_eps).double()
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([W("W_q") * fold, {{wk}}, {{wv}}], dim=1).T)
        mha.in_proj_bias.copy_(torch.cat([W("b_q") * fold, {{bk}}, {{bv}}]))
        mha.out_proj.weight.copy_(W("W_o").T)
        mha.out_proj.bias.copy_(W("b_o"))
        for n, h in enumerate(knocked_out.get(l, [])):
            cols = slice(h * head_dim, (h + 1) * head_dim)
            mha.out_proj.bias += replacement[l][n] @ W("W_o")[cols]
            mha.out_proj.weight[:, cols] = 0
        ln1.weight.copy_(W("ln_gamma"))
        ln1.bias.copy_(W("ln_beta"))
)py",
      {{"fold", FoldText(c)},
       {"per_query_head", gqa ? "\ndef per_query_head(w):  # GQA's K/V weights, repeated for the query heads of each "
                                "group\n    return w.unflatten(-1, (num_kv_heads, head_dim)).repeat_interleave(group, "
                                "dim=-2).flatten(-2)\n"
                              : ""},
       {"wk", kv.empty() ? "W(\"W_k\")" : kv + "(W(\"W_k\"))"},
       {"wv", kv.empty() ? "W(\"W_v\")" : kv + "(W(\"W_v\"))"},
       {"bk", kv.empty() ? "W(\"b_k\")" : kv + "(W(\"b_k\"))"},
       {"bv", kv.empty() ? "W(\"b_v\")" : kv + "(W(\"b_v\"))"}});
  if (c.block == Block::Encoder)
    code += Fill(R"py(    ffn = torch.nn.Sequential(torch.nn.Linear(d_model, {{d_ff}}), torch.nn.{{act}}(),
                              torch.nn.Linear({{d_ff}}, d_model)).double()
    ln2 = torch.nn.LayerNorm(d_model, eps=ln_eps).double()
    with torch.no_grad():
        ffn[0].weight.copy_(W("ffn_W1").T)
        ffn[0].bias.copy_(W("ffn_b1"))
        ffn[2].weight.copy_(W("ffn_W2").T)
        ffn[2].bias.copy_(W("ffn_b2"))
        ln2.weight.copy_(W("ln2_gamma"))
        ln2.bias.copy_(W("ln2_beta"))
    return mha, ln1, ffn, ln2
)py",
                 {{"d_ff", std::to_string(c.ffn_dim())}, {"act", c.activation == Activation::Gelu ? "GELU" : "ReLU"}});
  else
    code += "    return mha, ln1, None, None\n";
  std::string attn, ffn;
  const std::string mask = c.mask == Mask::Causal ? "hidden" : "None";
  switch (c.norm) {
    case Norm::Pre:
      attn = "        a, w = mha(ln1(y), ln1(y), ln1(y), attn_mask=" + mask +
             ", need_weights=True, average_attn_weights=False)\n        y = y + a\n";
      ffn = "        y = y + ffn(ln2(y))\n";
      break;
    case Norm::Post:
      attn = "        a, w = mha(y, y, y, attn_mask=" + mask +
             ", need_weights=True, average_attn_weights=False)\n        y = ln1(y + a)\n";
      ffn = "        y = ln2(y + ffn(y))\n";
      break;
    case Norm::None:
      attn = "        a, w = mha(y, y, y, attn_mask=" + mask +
             ", need_weights=True, average_attn_weights=False)\n        y = y + a\n";
      ffn = "        y = y + ffn(y)\n";
      break;
  }
  const bool pre = c.norm == Norm::Pre;
  code +=
      "\n\nembed = torch.nn.Embedding.from_pretrained(P[\"tok_embed\"])\nwith torch.no_grad():\n"
      "    y = embed(tokens)\n" +
      PositionalLine(Cfg().positional) +
      "    y = y.unsqueeze(0)\n    for l in range(num_layers):\n"
      "        mha, ln1, ffn, ln2 = nn_layer(l)\n" +
      attn +
      "        check(f\"nn L{l} attn\", w, app[f\"layers.{l}.attn\"], (l + 1) * widest, size=largest_per_layer[l])\n" +
      (c.block == Block::Encoder ? ffn : "") +
      (pre ? "    lnf = torch.nn.LayerNorm(d_model, eps=ln_eps).double()\n"
             "    lnf.weight.copy_(P[\"lnf_gamma\"])\n    lnf.bias.copy_(P[\"lnf_beta\"])\n    y = lnf(y)\n"
           : "") +
      "    unembed = torch.nn.Linear(d_model, P[\"unembed.0\"].shape[1]).double()\n"
      "    unembed.weight.copy_(P[\"unembed.0\"].T)\n    unembed.bias.copy_(P[\"unembed_b.0\"])\n"
      "    nn_logits = unembed(y)[0]\n"
      "check(\"nn logits\", nn_logits, app[\"logits\"], n_model)\n";
  nb.Code(code);
}

}  // namespace mha::notebook
