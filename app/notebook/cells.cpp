#include "notebook/cells.hpp"

#include <algorithm>

#include "notebook/ipynb.hpp"
#include "text/i18n.hpp"

namespace mha::notebook {

std::string CheckHelperCode() {
  return R"py(
def check(name, mine, theirs, n, size=None):
    """Asserts that `mine` (computed here in float64) matches mhaviz's float32 `theirs`.

    A float32 sum of n products is off by about 6e-8 * sqrt(n) times the size of the
    numbers summed; the check allows 1e-6 * sqrt(n) times it (`size`: the size of what
    went in, when that is larger than the result's): one weight changed by a fraction of
    a percent fails it.
    """
    theirs = theirs.to(mine.dtype)
    assert mine.shape == theirs.shape, f"{name}: shape {tuple(mine.shape)}, mhaviz's {tuple(theirs.shape)}"
    shown = torch.isfinite(theirs)  # -inf marks the scores a mask hides
    assert torch.equal(shown, torch.isfinite(mine)), f"{name}: the masked (-inf) entries differ"
    biggest = theirs[shown].abs().max().item() if shown.any() else 0.0
    bound = 1e-6 * math.sqrt(n) * max(biggest, size or 0.0)
    err = (mine[shown] - theirs[shown]).abs().max().item() if shown.any() else 0.0
    assert err <= bound, f"{name} differs from mhaviz's by {err:.3g} (allowed: {bound:.3g})"
    print(f"{name:<12} = mhaviz's {str(tuple(theirs.shape)):<16} largest difference {err:.1e} (allowed {bound:.1e})")
)py";
}

std::string FontCode() {
  return Fill(
      R"py(
import matplotlib.pyplot as plt
from matplotlib import font_manager

# Hangul needs a font that has it: the first Korean-capable font installed, and DejaVu
# Sans for the symbols it lacks.
installed = {f.name for f in font_manager.fontManager.ttflist}
korean = [name for name in ("NanumGothic", "NanumBarunGothic", "Noto Sans CJK KR", "Noto Sans KR",
                            "Malgun Gothic", "Apple SD Gothic Neo", "AppleGothic") if name in installed]
plt.rcParams["font.family"] = korean[:1] + ["DejaVu Sans"]
plt.rcParams["axes.unicode_minus"] = False  # NanumGothic has no Unicode minus sign
print({{found}}, korean[0] if korean else {{none}})


def labels(names):
    """Tick labels as typed: matplotlib would read $...$ as a formula."""
    return [name.replace("$", r"\$") for name in names]
)py",
      {{"found", PyStr(_("Korean font:"))},
       {"none", PyStr(_("none installed: Hangul shows as boxes (Debian/Ubuntu: sudo apt install fonts-nanum)"))}});
}

namespace {

// A map's side in inches: a label's line (8-point text) for each of up to 40 tokens.
double Panel(const GridSpec& g) {
  const int n = std::min(std::max(g.rows, g.cols), 40);
  return std::max(3.8, 0.16 * n + 1.6);
}

}  // namespace

std::string HeatmapGridCode(const GridSpec& g) {
  const int shown = g.num_heads < 16 ? g.num_heads : 16;
  const int cols = shown < 4 ? shown : 4;
  std::string title = PyStr(std::string(_("head")) + " ") + " + str(h)";
  if (g.kv_group > 1) title += " + \" (K/V \" + str(h // " + std::to_string(g.kv_group) + ") + \")\"";
  std::string more;
  if (shown < g.num_heads)
    more = "print(" +
           PyStr(i18n::Format(_("The first %d of %d heads; attn[0, h] holds any other."), shown, g.num_heads)) + ")\n";
  return Fill(R"py(
# Lesson 004's figure: one heatmap per head, rows = Query tokens, columns = Key tokens,
# the colours on one fixed scale from 0 to 1 (viridis, as mhaviz draws them).
shown, columns = {{shown}}, {{cols}}
rows = (shown + columns - 1) // columns
size, fontsize = {{size}}, {{fontsize}}  # inches a map, points a label: room for every token's label
fig, axes = plt.subplots(rows, columns, figsize=(size * 1.1 * columns, size * rows), squeeze=False)
for h, ax in enumerate(axes.flat):
    if h >= shown:
        ax.axis("off")
        continue
    weights = {{attn}}[0, h].detach().numpy()
    im = ax.imshow(weights, cmap="viridis", vmin=0, vmax=1, aspect="auto")
    ax.set_title({{title}})
    if weights.shape[1] <= 40:
        ax.set_xticks(range(weights.shape[1]))
        ax.set_xticklabels(labels({{cols_var}}), rotation=0 if weights.shape[1] <= 5 else 90, fontsize=fontsize)
    if weights.shape[0] <= 40:
        ax.set_yticks(range(weights.shape[0]))
        ax.set_yticklabels(labels({{rows_var}}), fontsize=fontsize)
    ax.set_xlabel("Key")
    ax.set_ylabel("Query")
    if weights.size <= 64:  # the weights themselves, where they fit
        for i in range(weights.shape[0]):
            for j in range(weights.shape[1]):
                ax.text(j, i, f"{weights[i, j]:.2f}", ha="center", va="center", fontsize=9,
                        color="black" if weights[i, j] > 0.5 else "white")
    plt.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
plt.tight_layout()
plt.show()
{{more}})py",
              {{"shown", std::to_string(shown)},
               {"size", PyFloat(Panel(g))},
               {"fontsize", std::max(g.rows, g.cols) <= 12 ? "10" : "8"},
               {"cols", std::to_string(cols)},
               {"attn", g.attn_expr},
               {"title", title},
               {"rows_var", g.rows_var},
               {"cols_var", g.cols_var},
               {"more", more}});
}

std::string MarkdownText(const std::string& text, std::size_t max_chars) {
  std::string out;
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) != 0x80 && ++chars > max_chars) {
      out += "\u2026";
      break;
    }
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else if (c < 0x20 || c == 0x7F) {
      continue;  // control characters have no place in a heading
    } else if (std::string("\\`*_{}[]<>#|~$&").find(static_cast<char>(c)) != std::string::npos) {
      out += '\\';
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string CodeList(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", `" : "`") + items[i] + "`";
  return out;
}

}  // namespace mha::notebook
