// Proof view: the proof table of a language model's heads on one screen. Rows are the
// phenomena of the minimal pairs, columns the intact model and then each head knocked
// out alone (zero ablation); a cell is the share of pairs the model still gets right,
// coloured by how far it dropped. The head whose knock-out takes a learned phenomenon
// to chance (a drop the pair count cannot explain, by an exact test) is marked; the
// other heads of the row are its control. Beside each phenomenon: one pair, the model's
// preference intact and with that head out, and the cue word it has to look back to.
//
// The table is lm::KnockOutHeads over every head, the function `mhaviz pairs --ablate
// all` calls, so the numbers are its JSON's. For the shipped model it is read from the
// measurement shipped beside the checkpoint (lm/head_evidence.hpp: checked equal to a
// fresh one, and used only while the checkpoint and pairs are the same bytes), so it
// appears at once; another model is measured on a task (nine passes over the pairs).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include "gui/draw/matrix_view.hpp"
#include "gui/draw/table_fit.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/sources/model_measures.hpp"
#include "gui/state/app_state.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "lm/head_evidence.hpp"
#include "lm/head_labels.hpp"
#include "lm/minimal_pairs.hpp"
#include "lm/pairs_table.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// The table, and for each row the head its example is shown for (the carrier, else
// the head that looks most at the cue) with that head's attention from the deciding
// position to the cue, intact.
struct ProofData {
  lm::KnockoutTable table;
  // Where the table came from: "shipped" (beside the checkpoint), "cached" (measured
  // before on this computer, for this very checkpoint), or "measured" (just now).
  std::string source;
  // The whole evidence, when it was measured just now: handed to every view's names.
  std::shared_ptr<const lm::HeadEvidence> measured;
  std::vector<HeadRef> example_head;
  std::vector<double> cue_weight;  // -1: the pair has no position after its cue
};

struct ProofState {
  Task<ProofData> task;
  const lm::LanguageModel* task_for = nullptr;  // the model the task (or `data`) is for
  std::shared_ptr<const lm::LanguageModel> model;
  std::shared_ptr<const ProofData> data;
  std::string error;
};

// A phenomenon's name as the pairs file writes it (English; the keys of the JSON), in
// the interface's language: "particle 을/를" -> "조사 을/를".
std::string PhenomenonShown(const std::string& name) {
  static const char* const kNames[] = {N_("honorific agreement"), N_("numeral classifier"),
                                       N_("agreement across an attractor")};
  for (const char* n : kNames)
    if (name == n) return _(n);
  const std::string particle = "particle ";
  if (name.compare(0, particle.size(), particle) == 0)
    return i18n::Format(_("particle %s"), name.substr(particle.size()).c_str());
  return name;
}

// Every row's example head and its attention to the cue in the example pair.
void AddExamples(const lm::LanguageModel& lm, const std::vector<lm::MinimalPair>& pairs, ProofData& d,
                 TaskContext<ProofData>& ctx) {
  const int H = d.table.num_heads;
  for (std::size_t r = 0; r < d.table.rows.size(); ++r) {
    ctx.Check();
    const lm::PhenomenonRow& row = d.table.rows[r];
    HeadRef head{-1, -1};
    if (!row.carriers.empty()) {
      head = row.carriers.front();
    } else {
      for (const lm::PhenomenonScore& p : d.table.plain.phenomena)
        if (p.phenomenon == row.phenomenon) head = {p.best_layer, p.best_head};
    }
    double weight = -1;
    for (const lm::MinimalPair& p : pairs)
      if (p.line == row.example.line && head.layer >= 0) {
        const lm::PairScore sc = lm::ScoreMinimalPair(lm, p);
        const std::size_t i = static_cast<std::size_t>(head.layer * H + head.head);
        if (!sc.cue.empty() && i < sc.cue_weight.size()) weight = sc.cue_weight[i];
        break;
      }
    d.example_head.push_back(head);
    d.cue_weight.push_back(weight);
  }
}

ProofData Measure(const std::shared_ptr<const lm::LanguageModel>& lm, TaskContext<ProofData>& ctx) {
  ProofData d;
  ctx.Stage(N_("reading the minimal pairs"));
  const std::vector<lm::MinimalPair> pairs = lm::LoadMinimalPairs(lm::FindPairsFile(lm->path));
  std::string where;
  if (std::optional<lm::HeadEvidence> e = lm::FindHeadEvidence(*lm, &where)) {
    d.table = std::move(e->table);
    d.source = where == lm::ShippedEvidencePath(lm->path) ? "shipped" : "cached";
  } else {
    const std::vector<HeadRef> heads = lm::EveryHead(*lm);
    ctx.SetTotal(static_cast<int>(heads.size()));
    ctx.Stage(N_("knocking out each head"));
    const lm::TableProgress progress = [&ctx](int done, int, const HeadRef&) {
      ctx.Check();
      if (done > 0) ctx.Advance();
    };
    bool has_validation = true;
    try {
      lm::FindValidationText(lm->path);
    } catch (const Error&) {
      has_validation = false;
    }
    if (has_validation) {
      // The whole evidence, kept in the cache by the checkpoint's hash: the next time
      // this model is opened, its table and causal names are there at once.
      auto e = std::make_shared<lm::HeadEvidence>(lm::MeasureAndCache(*lm, progress));
      d.table = e->table;
      d.measured = std::move(e);
    } else {
      d.table = lm::KnockOutHeads(*lm, pairs, heads, AblationMode::Zero, nullptr, nullptr, progress);
    }
    d.source = "measured";
  }
  AddExamples(*lm, pairs, d, ctx);
  return d;
}

// Starts the task for the model shown, takes a finished one. Never waits unless `wait`.
ProofState& Update(AppState& s, bool wait) {
  ProofState& st = s.views.Get<ProofState>();
  const auto& lm = s.choice.source.lm;
  if (!lm) return st;
  if (st.task_for != lm.get()) {
    st.task_for = lm.get();
    st.model = lm;
    st.data.reset();
    st.error.clear();
    st.task.Start([lm](TaskContext<ProofData>& ctx) { return Measure(lm, ctx); });
  }
  if (wait && st.task.Running()) st.task.Wait();
  if (st.task.Poll()) {
    if (auto v = st.task.result()) {
      st.data = v;
      if (v->measured) AdoptHeadEvidence(s, *st.model, v->measured);
    } else {
      st.error = st.task.error();
    }
  }
  return st;
}

// The cell's background: transparent when the head costs nothing, the Patch view's red
// at full strength when it costs everything the model learned above chance.
ImU32 DropColour(double intact, double accuracy) {
  const double room = std::max(intact - 0.5, 0.05);
  const float t = static_cast<float>(std::clamp((intact - accuracy) / room, 0.0, 1.0));
  return t <= 0.0f ? 0 : EffectColour(0.08f + 0.92f * t);
}

// Under the table: the bound a drop has to beat, stated with this table's numbers,
// what the colours and marks say, and where the numbers come from.
void DrawExplanation(AppState& s, const lm::KnockoutTable& t, const std::string& source) {
  const int n = t.rows.empty() ? 0 : t.rows.front().pairs;
  const lm::ChanceBand b = lm::CoinBand(std::max(n, 1));
  // Presented, the bound and the source fold into the header's "?" (Explanation): the
  // legend stays, and the example pairs' table comes up into the window.
  Explanation(i18n::Format(_("Chance is 0.50: a model that cannot tell the sentences apart wins half the "
                             "pairs. With %d pairs a coin lands in %.2f-%.2f in 99%% of tries (exact "
                             "binomial): a phenomenon is learned only above that band, and a knock-out "
                             "takes it to chance when it falls inside it. A drop counts only when the "
                             "exact McNemar test on the pairs it flips gives p <= 0.01 / %d heads = %.5f."),
                           n, b.lo, b.hi, static_cast<int>(t.heads.size()), t.level)
                  .c_str());
  const char* legend =
      _("Red: how much of what the model learned above chance the knock-out costs. Boxed: the carrier, whose "
        "knock-out takes a learned phenomenon to chance. *: a significant drop that stays above chance. Grey: no "
        "significant drop; these heads are the control (a grey intact share: not learned). Hover a cell for its "
        "counts and test.");
  if (FoldingExplanations()) {
    // Presented, the view shares the window with a lesson's band, where the full
    // legend would show its first line only: a key of one line, the legend in the "?".
    Explanation(legend);
    Muted(
        _("Red: what the knock-out costs \u00B7 Boxed: the carrier, down to chance \u00B7 *: a significant drop "
          "\u00B7 Grey: the control"));
  } else {
    Muted(legend);
  }
  Probe(s, "proof_key");
  Explanation(source == "shipped" ? _("Measured when the model was shipped (the same numbers as mhaviz pairs "
                                      "--ablate=all --json).")
              : source == "cached"
                  ? _("Measured on this computer before, for this very checkpoint, and kept (the same numbers as "
                      "mhaviz pairs --ablate=all --json).")
                  : _("Measured now on this model (the same numbers as mhaviz pairs --ablate=all --json); kept for "
                      "the next time it is opened."));
}

// A column: its header and its widest cell's text.
struct ProofColumn {
  std::string header;
  std::string widest;
};

// How the table is written in `avail`: headers wider than their cells on two lines,
// then half the cells' padding, where the table would otherwise scroll sideways.
struct ProofFit {
  bool wrap = false;
  bool tight = false;
  bool fits = true;
};

ProofFit FitProofTable(const std::vector<ProofColumn>& columns, float avail) {
  const float pad = ImGui::GetStyle().CellPadding.x;
  auto width = [&](bool wrap, bool tight) {
    float w = 0.0f;
    for (const ProofColumn& c : columns)
      w += std::max(TextWidth(FittedHeader(c.header, TextWidth(c.widest), wrap)), TextWidth(c.widest)) +
           pad * (tight ? 1.0f : 2.0f) + 1;
    return w;
  };
  for (const ProofFit f : {ProofFit{false, false}, ProofFit{true, false}, ProofFit{true, true}})
    if (width(f.wrap, f.tight) <= avail) return f;
  return {true, true, false};
}

// The accuracy of phenomenon `r` without head `c`, marked: boxed for a carrier, * for
// a significant drop that stays above chance, grey for the control; its counts and
// test on hover.
void DrawCell(const lm::KnockoutTable& t, const lm::PhenomenonRow& r, const lm::KnockoutCell& c) {
  // A phenomenon never learned has nothing to lose: its cells stay uncoloured.
  const ImU32 bg = r.learned ? DropColour(r.accuracy, c.accuracy) : 0;
  if (bg) ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, bg);
  const bool carrier = std::find(r.carriers.begin(), r.carriers.end(), c.head) != r.carriers.end();
  if (carrier) {
    ImGui::Text("%.2f", c.accuracy);
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    const float pad = ImGui::GetFontSize() * 0.2f;
    ImGui::GetWindowDrawList()->AddRect(ImVec2(a.x - pad, a.y - 1), ImVec2(b.x + pad, b.y + 1), Pal().error_text, 0, 0,
                                        2.0f);
  } else if (c.significant) {
    ImGui::Text("%.2f *", c.accuracy);
  } else {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(Pal().muted_text), "%.2f", c.accuracy);
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(_("%s knocked out: %d of %d pairs right (%.3f).\nLost %d pairs, gained %d: McNemar p = "
                        "%.2g (counts at p <= %.5f).%s"),
                      HeadName(c.head).c_str(), c.correct, r.pairs, c.accuracy, c.lost, c.gained, c.p, t.level,
                      c.to_chance ? _("\nInside the chance band.") : "");
}

// Each column as wide as its widest cell; where that is wider than the area (a
// projector's text size), the headers go onto two lines and the padding halves, and
// only then does the table scroll sideways with the phenomena's column frozen. Its
// height is its rows', so what follows stays in place.
void DrawTable(AppState& s, const lm::KnockoutTable& t) {
  std::vector<ProofColumn> columns{
      {_("phenomenon"), ""}, {_("pairs"), "000"}, {_("chance band"), "0.00-0.00"}, {_("intact"), "0.00"}};
  for (const lm::PhenomenonRow& r : t.rows)
    if (TextWidth(PhenomenonShown(r.phenomenon)) > TextWidth(columns[0].widest))
      columns[0].widest = PhenomenonShown(r.phenomenon);
  for (const HeadRef& h : t.heads) columns.push_back({i18n::Format(_("%s out"), HeadName(h).c_str()), "0.00 *"});
  const ProofFit fit = FitProofTable(columns, ImGui::GetContentRegionAvail().x);
  const int cols = static_cast<int>(columns.size());
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                                ImGuiTableFlags_ScrollX | ImGuiTableFlags_NoHostExtendY;
  const ImGuiStyle& st = ImGui::GetStyle();
  const float row = ImGui::GetTextLineHeight() + st.CellPadding.y * 2 + 1;
  const float height = row * static_cast<float>(t.rows.size() + 1) + (fit.wrap ? ImGui::GetTextLineHeight() : 0.0f) +
                       (fit.fits ? 0.0f : st.ScrollbarSize) + 2;
  ImGui::PushStyleVar(ImGuiStyleVar_CellPadding,
                      ImVec2(st.CellPadding.x * (fit.tight ? 0.5f : 1.0f), st.CellPadding.y));
  const bool open = ImGui::BeginTable("proof_table", cols, flags, ImVec2(0, height));
  ImGui::PopStyleVar();
  if (!open) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  // Fixed from the first frame (a fitted column measures its cells over a frame first).
  for (const ProofColumn& c : columns) {
    const std::string h = FittedHeader(c.header, TextWidth(c.widest), fit.wrap);
    ImGui::TableSetupColumn(h.c_str(), ImGuiTableColumnFlags_WidthFixed, std::max(TextWidth(h), TextWidth(c.widest)));
  }
  ImGui::TableHeadersRow();
  const TourOutline& o = s.ui.tour.outline;
  for (const lm::PhenomenonRow& r : t.rows) {
    ImGui::TableNextRow();
    const bool asked = o.phenomenon == r.phenomenon;
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(PhenomenonShown(r.phenomenon).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%d", r.pairs);
    ImGui::TableNextColumn();
    ImGui::Text("%.2f-%.2f", r.band.lo, r.band.hi);
    ImGui::TableNextColumn();
    if (r.learned) {
      ImGui::Text("%.2f", r.accuracy);
    } else {
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(Pal().muted_text), "%.2f", r.accuracy);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", _("(not learned)"));
    }
    for (const lm::KnockoutCell& c : r.cells) {
      ImGui::TableNextColumn();
      // A lesson's question about this row's carrier, not answered yet: the knock-outs,
      // which are its answer, wait for the class's.
      if (asked && o.pending)
        ImGui::TextDisabled("?");
      else
        DrawCell(t, r, c);
    }
    Probe(s, ("proof_end " + std::to_string(&r - t.rows.data())).c_str());  // the row's last cell
    if (asked && o.pending) Probe(s, "proof_hidden_row");
    if (asked && o.on) DrawRevealRow(s, ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y, true);
  }
  ImGui::EndTable();
}

const char* Prefers(double margin) {
  return margin > 0 ? _("prefers the good sentence") : _("prefers the bad sentence");
}

// One pair per phenomenon: which sentence the model prefers intact and with the
// example head knocked out (the margin log P(good) - log P(bad), in nats), and the cue.
void DrawExamples(AppState& s, const ProofData& d) {
  const lm::KnockoutTable& t = d.table;
  Explanation(
      _("One pair of each phenomenon: the model's preference intact and with the carrier (else "
        "the head that looks most at the cue) knocked out, and the cue word that head attends to "
        "from the position that decides."));
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("proof_examples", 5, flags)) return;
  ImGui::TableSetupColumn(_("phenomenon"), ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn(_("good / bad sentence"), ImGuiTableColumnFlags_WidthStretch, 2.2f);
  ImGui::TableSetupColumn(_("intact"), ImGuiTableColumnFlags_WidthStretch, 1.2f);
  ImGui::TableSetupColumn(_("knocked out"), ImGuiTableColumnFlags_WidthStretch, 1.4f);
  ImGui::TableSetupColumn(_("cue word"), ImGuiTableColumnFlags_WidthStretch, 1.2f);
  ImGui::TableHeadersRow();
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const lm::PhenomenonRow& row = t.rows[r];
    const lm::PairExample& e = row.example;
    if (e.line <= 0) continue;
    const HeadRef h = d.example_head[r];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", PhenomenonShown(row.phenomenon).c_str());
    if (r == 0) Probe(s, "proof_example 0");
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", e.good.c_str());
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    ImGui::TextWrapped("* %s", e.bad.c_str());
    ImGui::PopStyleColor();
    ImGui::TableNextColumn();
    ImGui::TextWrapped(_("%s\n(%+.2f nats)"), Prefers(e.margin), e.margin);
    ImGui::TableNextColumn();
    // (the knock-out and the cue's head say the carrier: hidden while a lesson asks for it)
    if (s.ui.tour.outline.pending && s.ui.tour.outline.phenomenon == row.phenomenon) {
      ImGui::TextDisabled("?");
      ImGui::TableNextColumn();
      ImGui::TextWrapped("\u201C%s\u201D", e.cue.c_str());
      continue;
    }
    int k = -1;
    for (std::size_t i = 0; i < t.heads.size(); ++i)
      if (t.heads[i] == h) k = static_cast<int>(i);
    if (k >= 0 && k < static_cast<int>(e.margin_without.size())) {
      const double m = e.margin_without[static_cast<std::size_t>(k)];
      ImGui::TextWrapped(_("%s out%s: %s\n(%+.2f nats)"), HeadName(h).c_str(),
                         row.carriers.empty() ? "" : (std::string(" (") + _("carrier") + ")").c_str(), Prefers(m), m);
    }
    ImGui::TableNextColumn();
    if (d.cue_weight[r] >= 0)
      ImGui::TextWrapped(_("\u201C%s\u201D\n%s gives it weight %.2f"), e.cue.c_str(), HeadName(h).c_str(),
                         d.cue_weight[r]);
    else
      ImGui::TextWrapped("\u201C%s\u201D", e.cue.c_str());
  }
  ImGui::EndTable();
}

void DrawProofView(AppState& s) {
  if (!UsingLanguageModel(s)) {
    ImGui::TextWrapped(_("The proof table knocks out a language model's heads one at a time on its minimal pairs. Pick "
                         "\"%s\" under Model (left)."),
                       kSmallModelName);
    return;
  }
  ProofState& st = Update(s, false);
  if (!st.error.empty()) {
    MessageBox(std::string(_("Could not measure the proof table: ")) + st.error, Pal().error_bg, Pal().error_text);
    return;
  }
  if (!st.data) {
    const int total = st.task.total(), step = st.task.step();
    Muted(total > 0 ? i18n::Format(_("Knocking out each head on the minimal pairs: %d of %d..."), step, total).c_str()
                    : _("Reading the measurement..."));
    s.ui.report.views_busy += 1;
    return;
  }
  // Presented (a lesson's step), the "?" keeps it and the table moves up.
  Explanation(
      _("Each column knocks one head out (its context becomes 0 before W_O): the share of "
        "minimal pairs the model still gets right."));
  DrawTable(s, st.data->table);
  Probe(s, "proof_table");
  DrawExplanation(s, st.data->table, st.data->source);
  ImGui::Spacing();
  DrawExamples(s, *st.data);
}

nlohmann::json DumpProofView(AppState& s) {
  if (!UsingLanguageModel(s)) return dump::Error("the proof table needs a language model");
  ProofState& st = Update(s, true);
  if (!st.data) return dump::Error(st.error);
  nlohmann::json j;
  j["table"] = lm::TableJson(st.data->table);
  j["shipped"] = st.data->source == "shipped";
  j["source"] = st.data->source;
  nlohmann::json ex = nlohmann::json::array();
  for (std::size_t r = 0; r < st.data->example_head.size(); ++r)
    ex.push_back({{"head", HeadName(st.data->example_head[r])}, {"cue_weight", st.data->cue_weight[r]}});
  j["examples"] = ex;
  return j;
}

}  // namespace

ViewEntry ProofView() {
  ViewEntry v{"proof", N_("Proof"), N_("Proof: each head knocked out on the minimal pairs"),
              "a language model's phenomena x knocked-out heads, with chance bands (mhaviz pairs --ablate all)"};
  v.draw = &DrawProofView;
  v.dump = &DumpProofView;
  return v;
}

}  // namespace mha::gui
