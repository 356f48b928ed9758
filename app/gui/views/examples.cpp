// The lesson's worked example in one click (MakeLessonExample), a weight editor
// for small layers (d_model <= 8) that recomputes as the learner drags a number,
// and .npz files for x and the weights (the same files --input / --weights read).
#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include "gui/draw/matrix_view.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/sources/file_sources.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

using dump::json;
using dump::Vec;

namespace {

// The view's own state (AppState::views): the files' paths, and what the last load or
// save (or preset) did.
struct ExamplesState {
  std::array<char, 1024> input_path{};
  std::array<char, 1024> weights_path{};
  FileOutcome outcome;
};

ExamplesState& St(AppState& s) { return s.views.Get<ExamplesState>(); }

constexpr int kMaxEditDModel = 8;

// Which weight of the editor a grid edits.
enum class Which { Q, K, V, O };

Mat& Matrix(Weights& w, Which k) {
  return k == Which::Q ? w.W_q : k == Which::K ? w.W_k : k == Which::V ? w.W_v : w.W_o;
}
RowVec& Bias(Weights& w, Which k) {
  return k == Which::Q ? w.b_q : k == Which::K ? w.b_k : k == Which::V ? w.b_v : w.b_o;
}
const Mat& Matrix(const Weights& w, Which k) { return Matrix(const_cast<Weights&>(w), k); }
const RowVec& Bias(const Weights& w, Which k) { return Bias(const_cast<Weights&>(w), k); }

float CellWidth() { return ImGui::CalcTextSize("-0.000").x + 2 * ImGui::GetStyle().FramePadding.x; }

float GridWidth(const Weights& w, Which k) {
  const float label = ImGui::CalcTextSize("b ").x + ImGui::GetStyle().ItemSpacing.x;
  return label + Matrix(w, k).cols() * (CellWidth() + ImGui::GetStyle().ItemInnerSpacing.x);
}

// One weight matrix and its bias as a grid of drag fields. Edits go to a fresh copy
// of the weights (EditableWeights), so the trace keeps the weights it was computed
// with until the recompute.
void WeightGrid(AppState& s, const Weights& w, Which k, const char* name) {
  const Mat& m = Matrix(w, k);
  const RowVec& b = Bias(w, k);
  const float cw = CellWidth();
  const float label_w = ImGui::CalcTextSize("b ").x + ImGui::GetStyle().ItemSpacing.x;
  ImGui::BeginGroup();
  ImGui::PushID(name);
  ImGui::AlignTextToFramePadding();
  ImGui::Text("%s  (%d x %d)", name, static_cast<int>(m.rows()), static_cast<int>(m.cols()));
  ImGui::SameLine();
  if (ImGui::SmallButton(_("identity"))) {
    if (auto e = EditableWeights(s)) {
      Mat& em = Matrix(*e, k);
      em.setZero();
      for (Eigen::Index i = 0; i < std::min(em.rows(), em.cols()); ++i) em(i, i) = 1.0f;
      Bias(*e, k).setZero();
    }
  }
  ImGui::SameLine();
  if (ImGui::SmallButton(_("zero"))) {
    if (auto e = EditableWeights(s)) {
      Matrix(*e, k).setZero();
      Bias(*e, k).setZero();
    }
  }
  const float lim = Limits::kMaxAbsValue;
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(ImGui::GetStyle().ItemInnerSpacing.x, 2.0f));
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("%d", static_cast<int>(i));
    ImGui::SameLine(label_w);
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      if (j) ImGui::SameLine();
      ImGui::PushID(static_cast<int>(i * m.cols() + j));
      float v = m(i, j);
      ImGui::SetNextItemWidth(cw);
      if (ImGui::DragFloat("##w", &v, 0.01f, -lim, lim, "%.3g", ImGuiSliderFlags_AlwaysClamp))
        if (auto e = EditableWeights(s)) Matrix(*e, k)(i, j) = v;
      if (i == 0 && j == 0) Probe(s, (std::string("edit ") + name + " 0 0").c_str());
      if (ImGui::IsItemHovered() && !ImGui::IsItemActive())
        ImGui::SetTooltip(_("%s[%d, %d] = %.7g\nDrag to change, double-click or Ctrl+click to type."), name,
                          static_cast<int>(i), static_cast<int>(j), static_cast<double>(m(i, j)));
      ImGui::PopID();
    }
  }
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("b");
  ImGui::SameLine(label_w);
  for (Eigen::Index j = 0; j < b.size(); ++j) {
    if (j) ImGui::SameLine();
    ImGui::PushID(static_cast<int>(100000 + j));
    float v = b[j];
    ImGui::SetNextItemWidth(cw);
    if (ImGui::DragFloat("##b", &v, 0.01f, -lim, lim, "%.3g", ImGuiSliderFlags_AlwaysClamp))
      if (auto e = EditableWeights(s)) Bias(*e, k)[j] = v;
    if (ImGui::IsItemHovered() && !ImGui::IsItemActive())
      ImGui::SetTooltip(_("bias %d = %.7g"), static_cast<int>(j), static_cast<double>(b[j]));
    ImGui::PopID();
  }
  ImGui::PopStyleVar();
  ImGui::PopID();
  ImGui::EndGroup();
}

void SmallMatrix(AppState& s, const char* id, const char* title, const Mat& m, const std::vector<std::string>* rows,
                 float width, bool group_heads) {
  ImGui::BeginGroup();
  ImGui::TextUnformatted(title);
  MatrixArgs a;
  a.id = id;
  a.key = "g" + std::to_string(s.result.generation);
  a.data = m.data();
  a.rows = static_cast<int>(m.rows());
  a.cols = static_cast<int>(m.cols());
  a.row_labels = rows;
  a.scale = ColourScale::Diverging;
  float r = 0.0f;
  for (Eigen::Index k = 0; k < m.size(); ++k) r = std::max(r, std::abs(m.data()[k]));
  a.range = std::max(r, 1e-6f);
  // Cells wide enough for 4 significant digits ("8.999"): these are the numbers to check by hand.
  const float fs = ImGui::GetFontSize();
  a.max_cell = fs * 3.4f;
  a.size = ImVec2(width, a.max_cell * a.rows + fs * 1.4f + (group_heads ? fs * 1.3f : 0.0f));
  a.row_axis = _("token");
  a.col_axis = _("dimension");
  const int hd = s.result.trace.cfg.head_dim();
  if (group_heads && hd > 0 && hd < a.cols) {
    a.col_group = hd;
    a.col_group_label = "head";
  }
  DrawMatrix(s, a);
  Probe(s, (std::string("lesson ") + id).c_str());
  ImGui::EndGroup();
}

void FileRow(AppState& s, const char* label, std::array<char, 1024>& buf, const char* hint, bool input) {
  const float lw = ImGui::CalcTextSize(_("weights (.npz)")).x + ImGui::GetStyle().ItemSpacing.x * 2;
  const float bw = ImGui::CalcTextSize(_("Load")).x + ImGui::CalcTextSize(_("Save")).x +
                   4 * ImGui::GetStyle().FramePadding.x + 2 * ImGui::GetStyle().ItemSpacing.x;
  ImGui::PushID(label);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(label);
  ImGui::SameLine(lw);
  ImGui::SetNextItemWidth(std::max(ImGui::GetFontSize() * 8.0f,
                                   std::min(ImGui::GetContentRegionAvail().x - bw, ImGui::GetFontSize() * 30.0f)));
  ImGui::InputTextWithHint("##path", hint, buf.data(), buf.size());
  Probe(s, input ? "input_path" : "weights_path");
  ImGui::SameLine();
  if (ImGui::Button(_("Load"))) St(s).outcome = input ? LoadInputFile(s, buf.data()) : LoadWeightsFile(s, buf.data());
  Probe(s, input ? "load_input" : "load_weights");
  ImGui::SameLine();
  if (ImGui::Button(_("Save"))) St(s).outcome = input ? SaveInputFile(s, buf.data()) : SaveWeightsFile(s, buf.data());
  Probe(s, input ? "save_input" : "save_weights");
  ImGui::PopID();
}

// The lesson's own numbers (or shapes) beside what mhaviz computed, while one of its
// examples is loaded: each line ticked where they agree.
void DrawLessonChecks(AppState& s) {
  const int preset = LessonPresetInUse(s);
  if (preset < 0 || !HasResults(s)) return;
  const LessonExample ex = LessonPresets()[static_cast<std::size_t>(preset)];
  const Trace& t = s.result.trace;
  // Open for the hand calculation (its numbers are the point); folded for the 2-head
  // example, whose lesson gives shapes only, so the weight editor stays in view.
  const std::string title = std::string(preset == 1 ? _("The lesson's numbers beside what mhaviz computes")
                                                    : _("The lesson's shapes beside what mhaviz computes")) +
                            "##lesson_checks" + std::to_string(preset);
  // On the buttons' line: folded, it costs the editor below no room.
  ImGui::SameLine(0, ImGui::GetFontSize());
  const bool open = ImGui::TreeNodeEx(
      title.c_str(), ImGuiTreeNodeFlags_NoTreePushOnOpen | (preset == 1 ? ImGuiTreeNodeFlags_DefaultOpen : 0));
  Probe(s, "lesson_checks_header");
  if (!open) return;
  // The two texts share the width and wrap; the verdict keeps the room it needs. (At
  // fixed widths, 150% text cut the computed row short and pushed "same" out.)
  const std::string same = std::string("\xE2\x9C\x93 ") + _("same");
  const float verdict_w = std::max(ImGui::CalcTextSize(same.c_str()).x, ImGui::CalcTextSize(_("differs")).x);
  if (ImGui::BeginTable("##lesson_checks", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter)) {
    ImGui::TableSetupColumn(_("the lesson says"), ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn(_("mhaviz computes"), ImGuiTableColumnFlags_WidthStretch, 1.3f);
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, verdict_w);
    ImGui::TableHeadersRow();
    int row = 0;
    for (const LessonExpectation& e : ex.expected) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", e.what.c_str());
      ImGui::TableNextColumn();
      std::string got;
      bool ok = false;
      try {
        const LessonCheck c = CheckLesson(t, e);
        ok = c.ok;
        const std::string where = e.tensor + (e.head >= 0 ? i18n::Format(_("[head %d]"), e.head) : std::string());
        if (!e.shape.empty()) {
          got = where + " \xE2\x86\x92 (" + std::to_string(c.shape[0]) + ", " + std::to_string(c.shape[1]) + ")";
        } else {
          got = where + (c.shape[0] > 1 ? i18n::Format(_(" row %d"), e.row) : std::string()) + " = [";
          for (std::size_t j = 0; j < c.values.size(); ++j) got += (j ? ", " : "") + Sig(c.values[j], 6);
          got += "]";
        }
      } catch (const std::exception& err) {
        got = err.what();
      }
      ImGui::TextWrapped("%s", got.c_str());
      Probe(s, ("lesson_got " + std::to_string(row)).c_str());
      ImGui::TableNextColumn();
      ImGui::PushStyleColor(ImGuiCol_Text, ok ? Pal().ok_text : Pal().error_text);
      // The tick stays out of the catalogue: the bold font, which loads the catalogue's
      // characters, has no U+2713 (the regular font draws it).
      ImGui::TextUnformatted(ok ? same.c_str() : _("differs"));
      ImGui::PopStyleColor();
      Probe(s, ("lesson_tick " + std::to_string(row++)).c_str());
    }
    ImGui::EndTable();
  }
  Probe(s, "lesson_checks");
}

}  // namespace

void DrawExamplesView(AppState& s) {
  SectionTitle(s, _("Lesson example and weight editor"),
               _("Load the lesson's three-word example and check every number by hand; edit W_Q, W_K, W_V and W_O and "
                 "watch every view recompute."),
               true);
  const float fs = ImGui::GetFontSize();
  // The lesson's worked examples, one button each on one line (what each is: its
  // tooltip, and the line under them until one is loaded).
  const char* kLessonX =
      _("X = [[1,2,3,4],[5,6,7,8],[9,10,11,12]], d_model = 4, two heads of head_dim 2, "
        "W_Q = W_K = W_V = W_O = I, no positional encoding, mask or LayerNorm.");
  const char* kHandX =
      _("The lesson's hand calculation: X = [1, 2], two heads of d_k 1, W^Q = W^K = W^V = 0.5 "
        "for head 1 and 0.3 for head 2, W^O = I.");
  if (ImGui::Button(_("Load the lesson example"))) St(s).outcome = LoadLessonExample(s);
  Probe(s, "load_lesson");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", kLessonX);
  SameLineIfFits(ButtonWidth(_("Load the hand calculation")));
  if (ImGui::Button(_("Load the hand calculation"))) St(s).outcome = LoadLessonPreset(s, 1);
  Probe(s, "load_hand");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", kHandX);
  if (LessonPresetInUse(s) < 0) {
    // Beside the buttons while that leaves it a readable column, else under them.
    SameLineIfFits(fs * 18.0f);
    Muted(kLessonX);
  }
  DrawLessonChecks(s);  // (its fold on this line)

  // Where x and the weights come from now.
  ImGui::Spacing();
  std::string x_src = s.choice.files.input_path.empty()
                          ? std::string(_("the sentence (embedding + positional encoding)"))
                          : SourceShown(s.choice.files.input_path);
  std::string w_src =
      s.choice.files.weights_path.empty()
          ? i18n::Format(_("seeded random (Xavier), seed %llu"), static_cast<unsigned long long>(s.choice.cfg.seed))
          : SourceShown(s.choice.files.weights_path);
  if (UsingTrainedModel(s)) {  // the model source (model_source.hpp)
    x_src = s.choice.layer == 0 ? std::string(_("the trained model's token and position embeddings of the ids typed"))
                                : i18n::Format(_("layer %d's output"), s.choice.layer - 1);
    w_src = i18n::Format(_("the trained model %s, layer %d"), s.choice.source.name.c_str(), s.choice.layer);
  }
  ImGui::AlignTextToFramePadding();
  ImGui::Text(_("x comes from %s."), x_src.c_str());
  if (!s.choice.files.input_path.empty()) {
    ImGui::SameLine();
    if (ImGui::SmallButton(_("Use the sentence"))) UseSentenceInputs(s);
    Probe(s, "use_sentence");
  }
  ImGui::AlignTextToFramePadding();
  ImGui::Text(_("Weights come from %s."), w_src.c_str());
  if (!s.choice.files.weights_path.empty()) {
    ImGui::SameLine();
    if (ImGui::SmallButton(_("Use seeded weights"))) UseSeededWeights(s);
    Probe(s, "use_seeded");
  }

  // Files: the same .npz files as --input and --weights.
  ImGui::Spacing();
  ExamplesState& st = St(s);
  FileRow(s, _("x (.npz)"), st.input_path, "x.npz: array x, (seq, d_model)", true);
  FileRow(s, _("weights (.npz)"), st.weights_path, "weights.npz: W_q, W_k, W_v, W_o, b_*", false);
  if (!st.outcome.message.empty())
    MessageBox(st.outcome.message, st.outcome.ok ? Pal().chip_bg : Pal().error_bg,
               st.outcome.ok ? Pal().ok_text : Pal().error_text);
  Probe(s, "file_message");

  // The numbers to check by hand, for small layers.
  if (s.result.ok && s.result.trace.cfg.d_model <= kMaxEditDModel && s.result.trace.seq <= 12) {
    const Trace& t = s.result.trace;
    ImGui::Spacing();
    if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
    ImGui::TextUnformatted(_("Check by hand"));
    if (s.ui.font_bold) ImGui::PopFont();
    const float w = std::min((ImGui::GetContentRegionAvail().x - 2 * fs) / 3.0f, fs * 20.0f);
    SmallMatrix(s, "x", _("x (input)"), t.in.x, &t.in.tokens, w, false);
    ImGui::SameLine(0, fs);
    SmallMatrix(s, "concat", _("concat: the heads' outputs side by side"), t.concat, &t.in.tokens, w, true);
    ImGui::SameLine(0, fs);
    SmallMatrix(s, "attn_out", "attn_out = concat W_O + b_O", t.attn_out, &t.in.tokens, w, false);
    if (ImGui::SmallButton(_("Step through one query"))) {
      ShowView(s, "query");
    }
    ImGui::SameLine();
    if (ImGui::SmallButton(_("Inspect any tensor"))) {
      ShowView(s, "inspect");
    }
  }

  // The weight editor.
  ImGui::Spacing();
  ImGui::Separator();
  if (UsingTrainedModel(s)) {
    Muted(
        _("The weight editor works on seeded or loaded weights: pick seeded random weights in Model (top left), or "
          "load the lesson example, to edit them."));
    return;
  }
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  ImGui::TextUnformatted(_("Weight editor"));
  if (s.ui.font_bold) ImGui::PopFont();
  const std::shared_ptr<const Weights> w = s.choice.files.weights ? s.choice.files.weights
                                           : s.result.ok          ? s.result.trace.weights
                                                                  : nullptr;
  const int d = s.choice.cfg.d_model;
  if (!w) {
    Muted(_("No weights yet: the configuration cannot run (see Configuration)."));
  } else if (w->W_q.rows() > kMaxEditDModel) {
    char buf[800];
    std::snprintf(buf, sizeof buf,
                  _("The editor shows layers up to d_model = %d (this one has %d: %d numbers per matrix). Load the "
                    "lesson example or set d_model to 8 or less."),
                  kMaxEditDModel, static_cast<int>(w->W_q.rows()), static_cast<int>(w->W_q.size()));
    Muted(buf);
  } else {
    Explanation(
        _("Drag a number to change it (double-click to type). Rows are input dimensions, columns output dimensions: "
          "Q = x W_Q + b."));
    const Weights& cur = *w;  // the grids read this; edits make a new copy
    const Which order[4] = {Which::Q, Which::K, Which::V, Which::O};
    const char* names[4] = {"W_Q", "W_K", "W_V", "W_O"};
    const float gap = fs * 1.5f;
    for (int i = 0; i < 4; ++i) {
      const float gw = GridWidth(cur, order[i]);
      // Side by side while they fit, like words in a line.
      if (i > 0 &&
          ImGui::GetItemRectMax().x + gap + gw <= ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x)
        ImGui::SameLine(0, gap);
      WeightGrid(s, cur, order[i], names[i]);
    }
    if (d != cur.W_q.rows())
      MessageBox(i18n::Format(_("These weights have d_model = %d but the configuration has %d: use seeded weights or "
                                "set d_model back."),
                              static_cast<int>(cur.W_q.rows()), d),
                 Pal().error_bg, Pal().error_text);
  }
}

json DumpExamplesView(AppState& s) {
  json l{{"input_source", s.choice.files.input_path.empty() ? "sentence" : s.choice.files.input_path},
         {"weights_source", s.choice.files.weights_path.empty() ? "seeded" : s.choice.files.weights_path},
         {"weights_edited", s.choice.files.weights_edited},
         {"file_message", St(s).outcome.message},
         {"file_message_ok", St(s).outcome.ok}};
  // The loaded lesson preset's numbers beside the computed ones.
  const int preset = LessonPresetInUse(s);
  l["preset"] = preset;
  if (preset >= 0 && HasResults(s)) {
    json checks = json::array();
    const LessonExample ex = LessonPresets()[static_cast<std::size_t>(preset)];
    for (const LessonExpectation& e : ex.expected) {
      json c{{"what", e.what}, {"tensor", e.tensor},   {"head", e.head},
             {"row", e.row},   {"expected", e.values}, {"expected_shape", e.shape}};
      try {
        const LessonCheck got = CheckLesson(s.result.trace, e);
        c["computed"] = got.values;
        c["shape"] = got.shape;
        c["ok"] = got.ok;
      } catch (const std::exception& err) {
        c["error"] = err.what();
        c["ok"] = false;
      }
      checks.push_back(c);
    }
    l["checks"] = checks;
  }
  if (s.result.ok && s.result.trace.cfg.d_model <= kMaxEditDModel && s.result.trace.weights) {
    const Weights& w = *s.result.trace.weights;
    nlohmann::json& wj = l["weights"];
    ForEachWeight(w, s.result.trace.cfg, [&](const WeightSpec& spec, const auto& m) {
      wj[spec.name] = spec.vector ? Vec(m) : dump::Matrix(m);
    });
  }
  return l;
}

// --probe's "examples": what the last load or save said (the GUI tests wait for it).
json ExamplesProbe(const AppState& s) {
  const ExamplesState* st = s.views.Find<ExamplesState>();
  return {{"file_message", st ? st->outcome.message : std::string()}};
}

ViewEntry ExamplesView() {
  ViewEntry v{"examples", N_("Examples"), N_("Examples: the lessons' worked examples, a weight editor and .npz files"),
              "the lesson's worked example, a weight editor and .npz files"};
  v.alias = "lesson";
  v.essentials = "load_lesson;load_hand";
  v.heads = false;
  v.draw = &DrawExamplesView;
  v.dump = &DumpExamplesView;
  v.probe = &ExamplesProbe;
  v.shows = "load_lesson";
  return v;
}

}  // namespace mha::gui
