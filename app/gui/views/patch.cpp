// Patch view: activation patching on a language model, without code. Two sentences of
// as many pieces, a clean one and a corrupt one; the corrupt sentence is run again with
// one head's context (before W_O) taken from the clean run, and the view shows how much
// of the clean - corrupt difference in log P(target) after the last position that head
// restores: recovered = (patched - corrupt) / (clean - corrupt). A layer x head grid
// (every position patched), and for the chosen head, one position at a time.
//
// The numbers are lm::PatchEveryHead's, the function `mhaviz patch --json` prints,
// computed on a task (one pass per head and per head x position).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <imgui.h>
#include <imgui_stdlib.h>
#include <nlohmann/json.hpp>

#include "gui/draw/table_fit.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/state/app_state.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "lm/patching.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// What a patch is asked for: the model and the three fields as they were when it began.
struct PatchKey {
  const lm::LanguageModel* model = nullptr;
  std::string clean, corrupt, target;
  bool operator==(const PatchKey& o) const {
    return model == o.model && clean == o.clean && corrupt == o.corrupt && target == o.target;
  }
};

struct PatchState {
  Task<lm::PatchReport> task;
  PatchKey asked;                                  // what the task (or `report`) is for
  std::shared_ptr<const lm::LanguageModel> model;  // held, so that `asked.model` names no other model
  std::shared_ptr<const lm::PatchReport> report;
  std::string error;
  int chosen = 0;  // the head whose positions are shown, (layer * heads + head)
  int serial = 0;  // the Choice's PatchChoice::serial last patched
};

PatchState& St(AppState& s) { return s.views.Get<PatchState>(); }

PatchKey CurrentKey(const AppState& s) {
  const PatchChoice& p = s.choice.patch;
  return {s.choice.source.lm.get(), p.clean, p.corrupt, p.target};
}

void Start(AppState& s, PatchState& st) {
  st.asked = CurrentKey(s);
  st.serial = s.choice.patch.serial;
  st.report.reset();
  st.error.clear();
  std::shared_ptr<const lm::LanguageModel> lm = s.choice.source.lm;
  st.model = lm;
  st.task.Start([lm, k = st.asked](TaskContext<lm::PatchReport>& ctx) {
    ctx.Stage(N_("patching each head"));
    return lm::PatchEveryHead(*lm, k.clean, k.corrupt, k.target, true);
  });
}

// Starts the first patch of a model on its own (the view then has numbers to show);
// later ones when asked. Takes a finished one.
void Update(AppState& s, PatchState& st, bool wait) {
  if (!s.choice.source.lm) return;
  // Fields set from outside (a lesson step) are patched at once, unless they are the ones
  // already patched (a step played again).
  const bool moved = st.serial != s.choice.patch.serial && !(CurrentKey(s) == st.asked);
  if (st.asked.model != s.choice.source.lm.get() || moved) Start(s, st);
  st.serial = s.choice.patch.serial;
  if (wait && st.task.Running()) st.task.Wait();
  if (st.task.Poll()) {
    if (auto r = st.task.result()) {
      st.report = r;
      // The positions shown first are those of the head that restores the most.
      st.chosen = 0;
      for (std::size_t i = 0; i < r->heads.size(); ++i)
        if (std::abs(r->heads[i].recovered) > std::abs(r->heads[static_cast<std::size_t>(st.chosen)].recovered))
          st.chosen = static_cast<int>(i);
    } else {
      st.error = st.task.error();
    }
  }
}

// Red for what a patch restores, blue for what it takes further away.
ImU32 RecoveredColour(double r) { return EffectColour(static_cast<float>(std::clamp(std::abs(r), 0.0, 1.0)), r < 0); }

void DrawFields(AppState& s, PatchState& st) {
  const float lw = ImGui::CalcTextSize(_("corrupt")).x + ImGui::GetStyle().ItemSpacing.x * 2;
  PatchChoice& p = s.choice.patch;
  FormLabel(_("clean"), lw);
  ImGui::SetNextItemWidth(-1.0f);
  ImGui::InputText("##patch_clean", &p.clean);
  Probe(s, "patch_clean");
  FormLabel(_("corrupt"), lw);
  ImGui::SetNextItemWidth(-1.0f);
  ImGui::InputText("##patch_corrupt", &p.corrupt);
  FormLabel(_("target"), lw);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8.0f);
  ImGui::InputTextWithHint("##patch_target", _("likeliest"), &p.target);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", _("The piece whose log-probability after the last position is measured. Empty: the "
                              "clean run's likeliest next piece."));
  ImGui::SameLine();
  const bool fresh = CurrentKey(s) == st.asked;
  ImGui::BeginDisabled(fresh && (st.task.Running() || st.report));
  if (ImGui::Button(_("Patch"))) Start(s, st);
  ImGui::EndDisabled();
  Probe(s, "patch_run");
}

void DrawGrid(PatchState& st, const lm::PatchReport& r) {
  const int L = static_cast<int>(r.layers.size());
  const int H = L > 0 ? static_cast<int>(r.heads.size()) / L : 0;
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("patch_grid", H + 2, flags)) return;
  // Widths fixed from the first frame: a fitted column measures its cells over a frame
  // first, and a screenshot or a lesson's export taken as the report arrives caught the
  // columns one character wide.
  const auto column = [](const std::string& header) {
    ImGui::TableSetupColumn(header.c_str(), ImGuiTableColumnFlags_WidthFixed,
                            std::max(TextWidth(header), TextWidth("+0.00")));
  };
  column(_("layer"));
  for (int h = 0; h < H; ++h) column(i18n::Format(_("head %d"), h));
  column(_("all heads"));
  ImGui::TableHeadersRow();
  for (int l = 0; l < L; ++l) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%d", l);
    for (int h = 0; h < H; ++h) {
      const int i = l * H + h;
      const lm::HeadPatch& p = r.heads[static_cast<std::size_t>(i)];
      ImGui::TableNextColumn();
      ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, RecoveredColour(p.recovered));
      char label[48];
      std::snprintf(label, sizeof label, "%+.2f##p%d", p.recovered, i);
      // The chosen head is framed, not filled: a fill would hide its colour, the number read.
      if (ImGui::Selectable(label, false)) st.chosen = i;
      if (st.chosen == i)
        ImGui::GetWindowDrawList()->AddRect(ImGui::GetItemRectMin(), ImGui::GetItemRectMax(),
                                            ImGui::GetColorU32(ImGuiCol_Text), 0.0f, 0, 2.0f);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(_("%s patched at every position: log P = %.3f (clean %.3f, corrupt %.3f)."),
                          HeadName(p.head).c_str(), p.logp, r.clean.logp, r.corrupt.logp);
    }
    ImGui::TableNextColumn();
    ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, RecoveredColour(r.layers[static_cast<std::size_t>(l)].recovered));
    ImGui::Text("%+.2f", r.layers[static_cast<std::size_t>(l)].recovered);
  }
  ImGui::EndTable();
}

void DrawPositions(const PatchState& st, const lm::PatchReport& r) {
  const lm::HeadPatch& p = r.heads[static_cast<std::size_t>(st.chosen)];
  const int n = static_cast<int>(p.recovered_at.size());
  ImGui::Text(_("%s, one position patched at a time:"), HeadName(p.head).c_str());
  if (n == 0 || !ImGui::BeginTable("patch_positions", n,
                                   ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollX | ImGuiTableFlags_SizingFixedFit,
                                   ImVec2(0, ImGui::GetTextLineHeightWithSpacing() * 3.2f + 8)))
    return;
  for (int i = 0; i < n; ++i) {
    const std::size_t k = static_cast<std::size_t>(i);
    const std::string c = k < r.clean.pieces.size() ? DisplayPiece(r.clean.pieces[k]) : "";
    const std::string d = k < r.corrupt.pieces.size() ? DisplayPiece(r.corrupt.pieces[k]) : "";
    ImGui::TableSetupColumn((c == d ? c : c + " / " + d).c_str(), ImGuiTableColumnFlags_WidthFixed,
                            std::max(ImGui::CalcTextSize((c + " / " + d).c_str()).x, ImGui::CalcTextSize("+0.00").x));
  }
  ImGui::TableHeadersRow();
  ImGui::TableNextRow();
  for (int i = 0; i < n; ++i) {
    ImGui::TableNextColumn();
    ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, RecoveredColour(p.recovered_at[static_cast<std::size_t>(i)]));
    ImGui::Text("%+.2f", p.recovered_at[static_cast<std::size_t>(i)]);
  }
  ImGui::EndTable();
}

void DrawPatchView(AppState& s) {
  if (!UsingLanguageModel(s)) {
    ImGui::TextWrapped(_("Activation patching runs a language model on two sentences. Pick \"%s\" under Model (left)."),
                       kSmallModelName);
    return;
  }
  PatchState& st = St(s);
  // Presented (a lesson's step), the "?" keeps it and the grids move up.
  Explanation(
      _("Run the corrupt sentence again with one head's context (before W_O) taken from the "
        "clean sentence's run: how much of the clean - corrupt difference in log P(target) after "
        "the last position does that head alone restore? recovered = (patched - corrupt) / "
        "(clean - corrupt): 1 all of it, 0 nothing. The two sentences need as many pieces."));
  DrawFields(s, st);
  Update(s, st, false);
  if (!st.error.empty()) {
    MessageBox(st.error, Pal().error_bg, Pal().error_text);
    return;
  }
  if (!st.report) {
    Muted(_("Patching each head..."));
    s.ui.report.views_busy += 1;
    return;
  }
  const lm::PatchReport& r = *st.report;
  Muted(i18n::Format(_("target \"%s\"%s: log P = %.3f clean, %.3f corrupt. Click a head for its positions."),
                     DisplayPiece(r.target_piece).c_str(),
                     r.target_default ? _(" (the clean run's likeliest next piece)") : "", r.clean.logp, r.corrupt.logp)
            .c_str());
  DrawGrid(st, r);
  Probe(s, "patch_grid");
  ImGui::Spacing();
  DrawPositions(st, r);
}

nlohmann::json DumpPatchView(AppState& s) {
  if (!UsingLanguageModel(s)) return dump::Error("patching needs a language model");
  PatchState& st = St(s);
  Update(s, st, true);
  if (!st.report) return dump::Error(st.error);
  const lm::PatchReport& r = *st.report;
  auto side = [](const lm::PatchSide& p) {
    return nlohmann::json{{"sentence", p.sentence}, {"ids", p.ids}, {"pieces", p.pieces}, {"logp", p.logp}};
  };
  nlohmann::json heads = nlohmann::json::array();
  for (const lm::HeadPatch& h : r.heads)
    heads.push_back({{"layer", h.head.layer},
                     {"head", h.head.head},
                     {"name", HeadName(h.head)},
                     {"logp", h.logp},
                     {"recovered", h.recovered},
                     {"positions", h.recovered_at},
                     {"positions_logp", h.logp_at}});
  nlohmann::json layers = nlohmann::json::array();
  for (const lm::LayerPatch& l : r.layers)
    layers.push_back({{"layer", l.layer}, {"logp", l.logp}, {"recovered", l.recovered}});
  return {{"clean", side(r.clean)},
          {"corrupt", side(r.corrupt)},
          {"target", {{"id", r.target}, {"piece", r.target_piece}, {"default", r.target_default}}},
          {"heads", heads},
          {"layers", layers},
          {"chosen", HeadName(r.heads[static_cast<std::size_t>(st.chosen)].head)}};
}

// --probe's "patch_view": the fields as chosen, what the shown report was asked for, and
// its heads' recovered shares (what a lesson step's test reads without quitting the app).
nlohmann::json ProbePatchView(const AppState& s) {
  const PatchState* st = s.views.Find<PatchState>();
  const PatchChoice& p = s.choice.patch;
  nlohmann::json j{{"clean", p.clean}, {"corrupt", p.corrupt}, {"target", p.target}, {"serial", p.serial}};
  if (!st) return j;
  j["asked"] = {{"clean", st->asked.clean}, {"corrupt", st->asked.corrupt}, {"target", st->asked.target}};
  j["running"] = st->task.Running();
  j["error"] = st->error;
  nlohmann::json heads = nlohmann::json::array();
  if (st->report)
    for (const lm::HeadPatch& h : st->report->heads)
      heads.push_back({{"name", HeadName(h.head)}, {"recovered", h.recovered}});
  j["computed"] = st->report != nullptr;
  j["heads"] = heads;
  return j;
}

// --patch-clean, --patch-corrupt, --patch-target: the view's sentences and target.
void DeclarePatchFlags(CLI::App& app, const std::string& g, ViewFlagActions& actions) {
  const auto field = [&](const char* name, std::string PatchChoice::*f, const char* help) {
    app.add_option_function<std::string>(
           name,
           [&actions, f](const std::string& v) { actions.push_back([f, v](AppState& s) { s.choice.patch.*f = v; }); },
           help)
        ->type_name("TEXT")
        ->group(g);
  };
  field("--patch-clean", &PatchChoice::clean, "the Patch view's clean sentence (default: 할머니께서 방에서)");
  field("--patch-corrupt", &PatchChoice::corrupt,
        "the Patch view's corrupt sentence, as many pieces (default: 형이 방에서)");
  field("--patch-target", &PatchChoice::target,
        "the Patch view's target piece (default 주무; empty: the clean run's likeliest next piece)");
}

}  // namespace

ViewEntry PatchView() {
  ViewEntry v{"patch", N_("Patch"), N_("Patch: which head carries the clean sentence's prediction"),
              "activation patching: each head's context from a clean sentence into a corrupt one (mhaviz patch)"};
  v.draw = &DrawPatchView;
  v.dump = &DumpPatchView;
  v.flags = &DeclarePatchFlags;
  v.probe = &ProbePatchView;
  return v;
}

}  // namespace mha::gui
