// Cells and phrases both notebooks share (the layer's and the trained model's): the
// check that compares a recomputed tensor with mhaviz's, the heatmap grid in a
// Korean-capable font, and markdown that shows typed text as typed.
#pragma once

#include <string>
#include <vector>

namespace mha::notebook {

// The `check(name, mine, theirs, n, size=None)` helper: a recomputed float64 tensor
// against mhaviz's float32 one, within 1e-6 * sqrt(n) of the values' size.
std::string CheckHelperCode();

// Picks a Korean-capable installed font for matplotlib (NanumGothic first) and defines
// labels(), which keeps matplotlib from reading a token's $ as a formula.
std::string FontCode();

// Lesson 004's figure: one heatmap per head of `attn_expr` (batch, heads, rows, cols),
// `rows_var`/`cols_var` naming the Python lists of labels; `kv_group` adds which K/V
// head each query head reads (GQA).
struct GridSpec {
  std::string attn_expr = "attn";
  std::string rows_var = "tokens", cols_var = "tokens";
  int num_heads = 1, rows = 1, cols = 1;
  int kv_group = 1;  // query heads per K/V head
};
std::string HeatmapGridCode(const GridSpec& g);

// `text` shown literally in markdown: one line, markdown's and HTML's special
// characters escaped, cut to `max_chars` code points with an ellipsis.
std::string MarkdownText(const std::string& text, std::size_t max_chars = 120);

// "`a`, `b`" for .npz keys and the like.
std::string CodeList(const std::vector<std::string>& items);

}  // namespace mha::notebook
