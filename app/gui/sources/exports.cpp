#include "gui/sources/exports.hpp"

#include <filesystem>
#include <functional>
#include <vector>

#include <glad/gl.h>

#include "gui/sources/file_sources.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/sources/model_source.hpp"
#include "gui/sources/notebook_export.hpp"
#include "io/files.hpp"
#include "render/head_view_render.hpp"
#include "render/render.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  for (std::size_t i = 0; i < suffix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i]) return false;
  return true;
}

// The figure as SVG or as PNG, written atomically. Returns " W x H" for a PNG ("" for
// an SVG); `notes` (if not null) gets the image's notes, each after a space.
std::string WriteFigure(const std::string& path, bool svg, const std::function<std::string()>& as_svg,
                        const std::function<render::Image()>& as_png, std::string* notes = nullptr) {
  if (svg) {
    io::WriteFileAtomic(path, as_svg());
    return "";
  }
  const render::Image img = as_png();
  io::WriteFileAtomic(path, render::EncodePng(img));
  if (notes)
    for (const auto& n : img.notes) *notes += " " + n;
  return " " + std::to_string(img.width) + " x " + std::to_string(img.height);
}

// The head view as on screen: its layer, and the heads switched on there.
std::function<ExportOutcome()> HeadViewExport(AppState& s, const std::string& path, bool svg) {
  const Trace& t = s.result.trace;
  render::HeadViewOptions o;
  o.scale = s.ui.exports.scale;
  o.header = s.ui.exports.header;
  int on = 0;
  for (int h = 0; h < t.cfg.num_heads; ++h) {
    o.heads.push_back(!s.choice.head_view_off[static_cast<std::size_t>(h)]);
    on += o.heads.back() ? 1 : 0;
  }
  if (UsingTrainedModel(s)) {
    o.title = i18n::Format(_("Head view \u00B7 layer %d"), s.choice.layer);
    o.sentence = s.choice.source.lm
                     ? i18n::Format(_("%s on \u201C%s\u201D"), _(kSmallModelName), s.choice.sentence.c_str())
                     : s.choice.source.name;
  } else if (s.choice.files.input_path.empty()) {
    o.sentence = s.choice.sentence;
  }
  const std::string saved =
      P_("Saved the head view (%d head) as%s %s to %s.", "Saved the head view (%d heads) as%s %s to %s.", on);
  return [&t, o, path, svg, on, saved]() {
    const std::string size = WriteFigure(
        path, svg, [&] { return render::RenderHeadViewSvg(t, o); }, [&] { return render::RenderHeadView(t, o); });
    return ExportOutcome{i18n::Format(saved.c_str(), on, size.c_str(), svg ? "SVG" : "PNG", AbsolutePath(path).c_str()),
                         true};
  };
}

// An export's work, with its errors as the outcome.
ExportOutcome Guarded(const std::function<ExportOutcome()>& run) {
  try {
    return run();
  } catch (const std::exception& e) {
    return {std::string(_("Export failed: ")) + e.what(), false};
  }
}

}  // namespace

std::string AbsolutePath(const std::string& path) {
  if (path.empty()) return path;
  std::error_code ec;
  const auto p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

bool PrepareExport(AppState& s, ExportWork* work) {
  const bool picture = s.ui.pending.export_png || s.ui.pending.export_svg;
  if (!picture && !s.ui.pending.export_notebook) return false;
  const bool notebook = s.ui.pending.export_notebook || s.ui.exports.notebook;
  s.ui.pending.export_png = s.ui.pending.export_svg = s.ui.pending.export_notebook = false;
  std::string path = s.ui.exports.path.data();
  if (notebook) {
    PrepareNotebookExport(s, path, work);
    return true;
  }
  std::function<ExportOutcome()> run;
  try {
    if (path.empty()) throw Error("Type a file name for the export first, e.g. attention.png or attention.svg.");
    if (!s.result.ok) throw Error("There is nothing to export until the configuration is valid: " + s.result.error);
    const Trace& t = s.result.trace;
    work->cells = static_cast<double>(t.cfg.num_heads + 1) * t.seq * t.seq_kv;
    int head = -1;
    // (With one head the figure has no mean: it would repeat the head.)
    std::string what = t.cfg.num_heads == 1 ? std::string(_("the 1 head"))
                                            : i18n::Format(_("all %d heads and their mean"), t.cfg.num_heads);
    if (s.ui.exports.selected_only && s.ui.enlarged >= 0 && s.ui.enlarged < t.cfg.num_heads) {
      head = s.ui.enlarged;
      what = i18n::Format(_("head %d"), head);
    }
    const bool svg = EndsWith(path, ".svg");
    if (!svg && !EndsWith(path, ".png")) path += ".png";
    if (s.ui.exports.head_view) {
      run = HeadViewExport(s, path, svg);
    } else {
      render::HeatmapOptions o;
      o.head = head;
      o.scale = s.ui.exports.scale;
      o.values = s.ui.exports.values;
      o.colour_scale = s.ui.colour_scale;
      o.columns = s.ui.exports.columns;
      o.header = s.ui.exports.header;
      o.fit = s.ui.exports.fit_16_9 ? 16.0 / 9.0 : 0.0;
      o.weights = DescribeWeights(s).shown;
      if (s.choice.files.input_path.empty()) {
        o.sentence = s.choice.sentence;
        if (t.in.cross()) o.memory = s.choice.memory;
      }
      const std::string saved = _("Saved %s as%s %s to %s.");
      run = [&t, o, path, svg, what, saved]() {
        std::string notes;
        const std::string size = WriteFigure(
            path, svg, [&] { return render::RenderHeatmapsSvg(t, o); }, [&] { return render::RenderHeatmaps(t, o); },
            &notes);
        return ExportOutcome{
            i18n::Format(saved.c_str(), what.c_str(), size.c_str(), svg ? "SVG" : "PNG", AbsolutePath(path).c_str()) +
                notes,
            true};
      };
    }
  } catch (const std::exception& e) {
    const ExportOutcome failed{std::string(_("Export failed: ")) + e.what(), false};
    run = [failed] { return failed; };
    work->cells = 0;
  }
  work->run = [run] { return Guarded(run); };
  return true;
}

void RunPendingExports(AppState& s) {
  ExportWork work;
  if (!PrepareExport(s, &work)) return;
  ShowExportOutcome(s, work.run());
}

void ShowExportOutcome(AppState& s, const ExportOutcome& o) {
  s.ui.exports.message = o.message;
  s.ui.exports.message_ok = o.ok;
}

void WriteScreenshot(const std::string& path, int w, int h) {
  if (w <= 0 || h <= 0) throw Error("The window has no pixels to capture (is it minimised?).");
  std::vector<std::uint8_t> px(static_cast<std::size_t>(w) * h * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  // GL's rows start at the bottom; PNG's at the top. Opaque: the clear colour is.
  std::vector<std::uint8_t> flipped(px.size());
  const std::size_t stride = static_cast<std::size_t>(w) * 4;
  for (int y = 0; y < h; ++y) {
    std::copy_n(px.data() + static_cast<std::size_t>(h - 1 - y) * stride, stride, flipped.data() + y * stride);
    for (std::size_t x = 3; x < stride; x += 4) flipped[y * stride + x] = 255;
  }
  render::Image img;
  img.width = w;
  img.height = h;
  img.rgba = std::move(flipped);
  io::WriteFileAtomic(path, render::EncodePng(img));
}

}  // namespace mha::gui
