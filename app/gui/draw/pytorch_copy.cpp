#include "gui/draw/pytorch_copy.hpp"

#include <algorithm>

#include <imgui.h>

#include "gui/draw/widgets.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// What was copied last, to say "Copied" beside the button while it is still what the
// view shows.
struct PyTorchCopyState {
  std::string copied;
};

}  // namespace

std::string PyTorchSnippetFor(const AppState& s, notebook::Snippet kind, std::string* error) {
  std::string why;
  if (!s.result.ok || s.result.trace.seq == 0) {
    why = _("There is no valid trace to compute yet.");
  } else {
    const Trace& t = s.result.trace;
    notebook::SnippetSpec spec;
    spec.kind = kind;
    spec.trace = &t;
    spec.npz_name = "trace.npz";
    spec.head = std::clamp(s.choice.head, 0, std::max(t.cfg.num_heads - 1, 0));
    spec.query = std::clamp(s.choice.query, 0, std::max(t.seq - 1, 0));
    spec.tensor = s.choice.inspect.tensor;
    if (kind == notebook::Snippet::Tensor) {
      const std::vector<std::string> known = notebook::SnippetTensors(t);
      if (std::find(known.begin(), known.end(), spec.tensor) == known.end())
        why = i18n::Format(_("No snippet recomputes %s; pick another tensor."), spec.tensor.c_str());
    }
    if (why.empty()) {
      try {
        return notebook::PyTorchSnippet(spec);
      } catch (const std::exception& e) {
        why = e.what();
      }
    }
  }
  if (error) *error = why;
  return "";
}

void CopyAsPyTorchButton(AppState& s, notebook::Snippet kind, const char* probe) {
  std::string why;
  const std::string snippet = PyTorchSnippetFor(s, kind, &why);
  auto& st = s.views.Get<PyTorchCopyState>();
  // Beside the previous item where it fits, else under it (a projector's text size).
  const char* label = _("Copy as PyTorch");
  const ImGuiStyle& style = ImGui::GetStyle();
  ImGui::SameLine(0.0f, ImGui::GetFontSize() * 0.6f);
  if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(label).x + style.FramePadding.x * 2) ImGui::NewLine();
  ImGui::BeginDisabled(snippet.empty());
  if (ImGui::SmallButton(label)) {
    ImGui::SetClipboardText(snippet.c_str());
    st.copied = snippet;
  }
  ImGui::EndDisabled();
  Probe(s, probe);
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", snippet.empty() ? why.c_str()
                                            : _("A PyTorch snippet for the clipboard that computes what this view "
                                                "shows, in the lessons' code. It reads trace.npz: write it with "
                                                "mhaviz trace --npz trace.npz and the same flags (or File > Export "
                                                "notebook for the whole layer). It ends by checking its result."));
  if (!snippet.empty() && st.copied == snippet) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", _("Copied"));
    Probe(s, (std::string(probe) + " copied").c_str());
  }
}

}  // namespace mha::gui
