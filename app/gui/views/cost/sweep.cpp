// The Cost view's measured times (sweep.hpp): the worker, and its points drawn
// on the FLOPs plot.
#include "gui/views/cost/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/state/app_state.hpp"
#include "gui/style/theme.hpp"
#include "mha/flash.hpp"
#include "mha/forward.hpp"
#include "options/timing.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

using nlohmann::json;

namespace {

// Passes per point: at least kMinRuns timed after one warm-up (which pages in the
// trace's buffers), more while they add up to under kPointMs, at most kMaxRuns.
constexpr int kMinRuns = 3, kMaxRuns = 9;
constexpr double kPointMs = 40.0;
// A point is left out (and says why) past these: the sweep runs beside the window and
// the learner's own trace, so it stays far inside the app's memory budget, and a pass
// of many seconds (d_model 4096 at 2048 tokens) is bench's work, not a view's.
constexpr std::size_t kSweepMaxBytes = std::size_t{512} << 20;
constexpr double kSweepMaxFlops = 2e10;

// What decides a pass's work: the sweep restarts when one of these changes, and only
// then (a new sentence or new weights leave the times as they are).
bool SameShapes(const Config& a, const Config& b) {
  return a.d_model == b.d_model && a.num_heads == b.num_heads && a.kv_heads() == b.kv_heads() && a.mask == b.mask &&
         a.norm == b.norm && a.block == b.block && a.ffn_dim() == b.ffn_dim() && a.activation == b.activation &&
         FlashBr(a) == FlashBr(b) && FlashBc(a) == FlashBc(b) && a.scale == b.scale;
}

double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// One path at one n: Forward on random N(0, 1) inputs with the seeded weights, one
// thread (the other core stays with the window). Returns the median thread CPU ms,
// or < 0 when cancelled; `refused` gets Validate's message.
double Measure(const Config& base, Attention path, int n, const TaskContext<SweepSnapshot>& ctx, int& runs,
               std::string& refused) {
  Config cfg = base;
  cfg.attention = path;
  cfg.threads = 1;
  try {
    Validate(cfg, n, n);
  } catch (const Error& e) {
    refused = e.what();
    return -1.0;
  }
  const std::size_t bytes = EstimateTraceBytes(cfg, n, n);
  double flops = 0;
  for (const FlowRow& r : ShapeFlow(cfg, n, n)) flops += static_cast<double>(r.flops);
  char why[200];
  if (bytes > kSweepMaxBytes || flops > kSweepMaxFlops) {
    std::snprintf(why, sizeof why,
                  "left out: one pass needs about %zu MiB and %.1f GFLOP, over the sweep's %zu MiB and %.0f GFLOP "
                  "(mhaviz bench measures it)",
                  bytes >> 20, flops / 1e9, kSweepMaxBytes >> 20, kSweepMaxFlops / 1e9);
    refused = why;
    return -1.0;
  }
  std::mt19937 rng(static_cast<std::uint32_t>(cfg.seed) + static_cast<std::uint32_t>(n));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  // Two inputs taking turns: a Trace re-projects only rows whose input changed, and
  // every pass here must do all the work.
  Inputs in[2];
  for (Inputs& x : in) {
    x.tokens.assign(n, "");
    x.x.resize(n, cfg.d_model);
    for (Eigen::Index i = 0; i < x.x.size(); ++i) x.x.data()[i] = normal(rng);
  }
  const auto weights = std::make_shared<const Weights>(InitWeights(cfg));
  Trace t;
  if (ctx.cancelled()) return -1.0;  // quitting waits for at most the pass under way
  Forward(cfg, weights, in[1], t);   // warm-up
  std::vector<double> ms;
  double total = 0.0;
  while (!ctx.cancelled()) {
    const double c0 = options::ThreadCpuMs();
    Forward(cfg, weights, in[ms.size() % 2], t);
    ms.push_back(options::ThreadCpuMs() - c0);
    total += ms.back();
    const int k = static_cast<int>(ms.size());
    if (k >= kMaxRuns || (k >= kMinRuns && total >= kPointMs)) break;
  }
  if (ctx.cancelled()) return -1.0;
  runs = static_cast<int>(ms.size());
  return MedianOf(ms);
}

// Every point of `snap`, both paths, published as each is measured.
SweepSnapshot RunSweep(SweepSnapshot snap, TaskContext<SweepSnapshot>& ctx) {
  ctx.SetTotal(2 * static_cast<int>(snap.points.size()));
  try {
    for (SweepPoint& p : snap.points) {
      for (Attention path : {Attention::Standard, Attention::Flash}) {
        int runs = 0;
        std::string refused;
        const double ms = Measure(snap.cfg, path, p.n, ctx, runs, refused);
        ctx.Check();
        (path == Attention::Standard ? p.standard_ms : p.flash_ms) = ms;
        (path == Attention::Standard ? p.standard_runs : p.flash_runs) = runs;
        (path == Attention::Standard ? p.standard_refused : p.flash_refused) = refused;
        ++snap.measured;
        ctx.Advance();
        ctx.Publish(snap);
      }
    }
  } catch (const std::exception& e) {  // (a cancel is no exception: it ends the task)
    snap.error = e.what();
  }
  snap.finished = true;
  return snap;
}

}  // namespace

std::vector<int> SweepSizes() {
  std::vector<int> ns;
  for (int n = 16; n <= 2048; n *= 2) ns.push_back(n);
  return ns;
}

void CostSweep::Ensure(const Config& cfg) {
  if (started_ && SameShapes(first_.cfg, cfg)) return;
  started_ = true;
  first_ = SweepSnapshot{};
  first_.cfg = cfg;
  first_.cfg.threads = 1;
  first_.id = task_.generation() + 1;  // the next Start's
  for (int n : SweepSizes()) {
    SweepPoint p;
    p.n = n;
    first_.points.push_back(p);
  }
  frames_running_ = 0;
  task_.Start([snap = first_](TaskContext<SweepSnapshot>& ctx) { return RunSweep(snap, ctx); });
}

void CostSweep::Tick() {
  task_.Poll();
  if (Running()) ++frames_running_;
}

bool CostSweep::Running() const { return task_.Running(); }

SweepSnapshot CostSweep::Snapshot() const {
  const auto latest = task_.Latest();
  return latest ? *latest : first_;
}

CostSweep& Sweep(AppState& s) { return s.views.Get<CostSweep>(); }
const CostSweep* FindSweep(const AppState& s) { return s.views.Find<CostSweep>(); }

namespace {

// Least-squares slope of log(ms) against log(n) over a path's last `last` measured points.
double Slope(const SweepSnapshot& snap, bool standard, int last) {
  std::vector<std::pair<double, double>> xy;
  for (std::size_t i = 0; i < snap.points.size(); ++i) {
    const SweepPoint& p = snap.points[i];
    const double ms = standard ? p.standard_ms : p.flash_ms;
    if (ms > 0) xy.emplace_back(std::log(p.n), std::log(ms));
  }
  if (static_cast<int>(xy.size()) > last) xy.erase(xy.begin(), xy.end() - last);
  if (xy.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  double mx = 0, my = 0;
  for (auto [x, y] : xy) mx += x, my += y;
  mx /= xy.size();
  my /= xy.size();
  double sxy = 0, sxx = 0;
  for (auto [x, y] : xy) sxy += (x - mx) * (y - my), sxx += (x - mx) * (x - mx);
  return sxy / sxx;
}

}  // namespace

double SweepSlope(const SweepSnapshot& snap, bool standard, int last) { return Slope(snap, standard, last); }

double SweepFirstSlope(const SweepSnapshot& snap, bool standard, int first) {
  SweepSnapshot head;
  for (int i = 0; i < first && i < static_cast<int>(snap.points.size()); ++i) head.points.push_back(snap.points[i]);
  return Slope(head, standard, first);
}

namespace {

// The measured times' axis runs from the x axis up to below the legend's lines (the
// FLOPs curves' three and the two measured ones), so no point hides under the legend.
float MeasuredTop(const ImVec2& a) { return a.y + ImGui::GetFontSize() * 6.6f; }

}  // namespace

void DrawMeasuredTimes(ImDrawList* dl, const ImVec2& a, const ImVec2& b, double x0, double x1,
                       const SweepSnapshot& snap) {
  double lo = 1e300, hi = 0;
  for (const SweepPoint& p : snap.points)
    for (double ms : {p.standard_ms, p.flash_ms})
      if (ms > 0) lo = std::min(lo, ms), hi = std::max(hi, ms);
  if (hi <= 0) return;
  // Its own scale: whole decades of ms spanning what was measured, on the right edge.
  const double y0 = std::floor(std::log10(lo)), y1 = std::max(y0 + 1.0, std::ceil(std::log10(hi)));
  const float fs = ImGui::GetFontSize();
  auto X = [&](double n) { return a.x + static_cast<float>((std::log10(n) - x0) / (x1 - x0)) * (b.x - a.x); };
  const float top = MeasuredTop(a);
  auto Y = [&](double ms) { return b.y - static_cast<float>((std::log10(ms) - y0) / (y1 - y0)) * (b.y - top); };
  char buf[48];
  for (int e = static_cast<int>(y0); e <= static_cast<int>(y1); ++e) {
    const float y = Y(std::pow(10.0, e));
    dl->AddLine(ImVec2(b.x - fs * 0.5f, y), ImVec2(b.x, y), Pal().muted_text);
    // The lowest tick's label would sit on the x axis's own label.
    if (y > b.y - fs * 1.5f) continue;
    if (e >= 0)
      std::snprintf(buf, sizeof buf, "%.0f ms", std::pow(10.0, e));
    else
      std::snprintf(buf, sizeof buf, "%.*f ms", -e, std::pow(10.0, e));
    const float w = ImGui::CalcTextSize(buf).x;
    dl->AddText(ImVec2(b.x - w - fs * 0.6f, y - fs * 0.5f), Pal().muted_text, buf);
  }
  const ImU32 col_std = Pal().error_text, col_flash = Pal().notice_text;
  for (bool standard : {true, false}) {
    const ImU32 col = standard ? col_std : col_flash;
    std::vector<ImVec2> line;
    for (const SweepPoint& p : snap.points) {
      const double ms = standard ? p.standard_ms : p.flash_ms;
      if (ms <= 0) continue;
      const ImVec2 c(X(p.n), Y(ms));
      line.push_back(c);
      if (standard)
        dl->AddRect(ImVec2(c.x - fs * 0.3f, c.y - fs * 0.3f), ImVec2(c.x + fs * 0.3f, c.y + fs * 0.3f), col, 0.0f, 0,
                    2.0f);
      else
        dl->AddCircle(c, fs * 0.32f, col, 0, 2.0f);
    }
    if (line.size() > 1) dl->AddPolyline(line.data(), static_cast<int>(line.size()), col, 0, 1.0f);
  }
}

namespace {
const char* MeasuredStandardText() { return _("measured: standard, ms (right)"); }
const char* MeasuredFlashText() { return _("measured: Flash, ms (right)"); }
}  // namespace

ImVec2 MeasuredLegendSize() {
  const float fs = ImGui::GetFontSize();
  const float w = std::max(ImGui::CalcTextSize(MeasuredStandardText()).x, ImGui::CalcTextSize(MeasuredFlashText()).x);
  return ImVec2(fs * 1.5f + w, fs * 2.2f);
}

void MeasuredLegend(ImDrawList* dl, const ImVec2& at) {
  const float fs = ImGui::GetFontSize();
  const char* std_text = MeasuredStandardText();
  const char* flash_text = MeasuredFlashText();
  const ImVec2 c0(at.x + fs * 0.6f, at.y + fs * 0.5f), c1(at.x + fs * 0.6f, at.y + fs * 1.7f);
  dl->AddRect(ImVec2(c0.x - fs * 0.3f, c0.y - fs * 0.3f), ImVec2(c0.x + fs * 0.3f, c0.y + fs * 0.3f), Pal().error_text,
              0.0f, 0, 2.0f);
  dl->AddText(ImVec2(at.x + fs * 1.5f, at.y), ImGui::GetColorU32(ImGuiCol_Text), std_text);
  dl->AddCircle(c1, fs * 0.32f, Pal().notice_text, 0, 2.0f);
  dl->AddText(ImVec2(at.x + fs * 1.5f, at.y + fs * 1.2f), ImGui::GetColorU32(ImGuiCol_Text), flash_text);
}

void DrawSweepStatus(const SweepSnapshot& snap, bool brief) {
  const auto say = [brief](const char* t) {
    if (brief)
      Explanation(t);
    else
      Muted(t);
  };
  const int total = 2 * static_cast<int>(snap.points.size());
  const int nmin = snap.points.empty() ? 0 : snap.points.front().n;
  const int nmax = snap.points.empty() ? 0 : snap.points.back().n;
  char line[400];
  if (!snap.error.empty()) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(Pal().error_text), "%s %s", _("The timing stopped:"),
                       snap.error.c_str());
    return;
  }
  if (!snap.finished) {
    std::snprintf(line, sizeof line, _("Measuring on this machine: %d of %d passes timed (n = %d ... %d)..."),
                  snap.measured, total, nmin, nmax);
    say(line);
    return;
  }
  std::snprintf(line, sizeof line,
                _("Measured on this machine (squares: standard, circles: Flash; right axis, ms): one layer's "
                  "forward pass at d_model = %d, %d heads, on one thread, the median CPU time of 3 to 9 passes "
                  "at each n."),
                snap.cfg.d_model, snap.cfg.num_heads);
  say(line);
  const double s_std = SweepSlope(snap, true, 3), s_flash = SweepSlope(snap, false, 3);
  const double s_first = SweepFirstSlope(snap, true, 3);
  std::snprintf(line, sizeof line,
                _("Slope of the measured times: standard %.2f at the smallest n, %.2f at the largest it ran; "
                  "Flash %.2f at the largest (2 means time grows as n^2)."),
                s_first, s_std, s_flash);
  say(line);
  // The first point each path could not run, and why (the core's or the sweep's words).
  for (bool standard : {true, false})
    for (const SweepPoint& p : snap.points) {
      const std::string& why = standard ? p.standard_refused : p.flash_refused;
      if (why.empty()) continue;
      if (standard && p.n > Limits::kMaxTokens && p.flash_refused.empty())
        std::snprintf(line, sizeof line,
                      _("Standard attention is refused from n = %d on (its n x n matrices); "
                        "Flash attention runs there."),
                      p.n);
      else
        std::snprintf(line, sizeof line,
                      standard ? _("Standard attention not measured from n = %d on: %s")
                               : _("Flash attention not measured from n = %d on: %s"),
                      p.n, why.c_str());
      say(line);
      break;
    }
}

json SweepJson(const AppState& s) {
  const CostSweep* sw = FindSweep(s);
  if (!sw || !sw->Started()) return json{{"started", false}};
  const SweepSnapshot snap = sw->Snapshot();
  json pts = json::array();
  for (const SweepPoint& p : snap.points) {
    auto ms = [](double v) { return v > 0 ? json(v) : json(nullptr); };
    json j{{"n", p.n},
           {"standard_ms", ms(p.standard_ms)},
           {"flash_ms", ms(p.flash_ms)},
           {"standard_runs", p.standard_runs},
           {"flash_runs", p.flash_runs}};
    if (!p.standard_refused.empty()) j["standard_refused"] = p.standard_refused;
    if (!p.flash_refused.empty()) j["flash_refused"] = p.flash_refused;
    pts.push_back(std::move(j));
  }
  auto slope = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  return {{"started", true},
          {"id", snap.id},
          {"finished", snap.finished},
          {"measured", snap.measured},
          {"total", 2 * static_cast<int>(snap.points.size())},
          {"error", snap.error},
          {"what",
           "mha::Forward, one thread, median thread CPU ms over 3 to 9 passes after a warm-up, random "
           "N(0, 1) inputs, self-attention at the current configuration's shapes"},
          {"d_model", snap.cfg.d_model},
          {"num_heads", snap.cfg.num_heads},
          {"flash_tile", {FlashBr(snap.cfg), FlashBc(snap.cfg)}},
          {"points", pts},
          {"standard_slope_last3", slope(SweepSlope(snap, true, 3))},
          {"flash_slope_last3", slope(SweepSlope(snap, false, 3))},
          {"frames_while_running", sw->FramesWhileRunning()}};
}

json SweepProbeJson(const AppState& s) {
  const CostSweep* sw = FindSweep(s);
  if (!sw || !sw->Started()) return json{{"started", false}};
  const SweepSnapshot snap = sw->Snapshot();
  return {{"started", true},
          {"id", snap.id},
          {"measured", snap.measured},
          {"total", 2 * static_cast<int>(snap.points.size())},
          {"finished", snap.finished},
          {"running", sw->Running()},
          {"frames_while_running", sw->FramesWhileRunning()}};
}

}  // namespace mha::gui
