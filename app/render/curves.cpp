// The training curves: loss (left axis) and accuracy per target (right axis, 0 to 1)
// against the step, as a Scene for the PNG and the SVG; and every step as CSV.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "render/scene.hpp"
#include "render/train_render.hpp"

namespace mha::render {
namespace {

constexpr double kPlotW = 560, kPlotH = 280, kMargin = 16;
// Accuracy lines, one per target (Tableau 10: distinct, and none is the loss's ink).
constexpr Rgb kTargetColours[] = {{31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
                                  {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
constexpr Rgb kAxis{180, 180, 180}, kGridLine{235, 235, 235};

// A tick step of 1, 2 or 5 times a power of ten giving about `n` ticks over `span`.
double NiceStep(double span, int n) {
  const double raw = span / std::max(1, n);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

std::string TickText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", std::fabs(v) < 1e-12 ? 0.0 : v);
  return buf;
}

// The curve's points, averaged into at most `bins` buckets along the step axis, so a
// million-step run draws a path of a few hundred points.
struct Series {
  std::vector<double> step, loss;
  std::vector<std::vector<double>> acc;  // per target
};

Series Bin(const std::vector<CurvePoint>& c, int bins) {
  Series s;
  const std::size_t n = c.size(), per = std::max<std::size_t>(1, (n + bins - 1) / bins);
  const std::size_t K = c.empty() ? 0 : c[0].accuracy.size();
  s.acc.resize(K);
  for (std::size_t i = 0; i < n; i += per) {
    const std::size_t j = std::min(n, i + per);
    double st = 0, lo = 0;
    std::vector<double> a(K, 0);
    for (std::size_t k = i; k < j; ++k) {
      st += c[k].step;
      lo += c[k].loss;
      for (std::size_t t = 0; t < K && t < c[k].accuracy.size(); ++t) a[t] += c[k].accuracy[t];
    }
    const double m = static_cast<double>(j - i);
    s.step.push_back(st / m);
    s.loss.push_back(lo / m);
    for (std::size_t t = 0; t < K; ++t) s.acc[t].push_back(a[t] / m);
  }
  return s;
}

// Maps a loss to [0, 1] up the axis: log10 when the losses span more than a decade.
struct LossAxis {
  bool log = false;
  double lo = 0, hi = 1;
  double operator()(double v) const {
    if (log) v = std::log10(std::max(v, std::pow(10.0, lo)));
    return hi > lo ? (v - lo) / (hi - lo) : 0.5;
  }
};

LossAxis MakeLossAxis(const std::vector<double>& loss) {
  LossAxis a;
  double mn = 1e300, mx = 0;
  for (double v : loss)
    if (std::isfinite(v)) mn = std::min(mn, v), mx = std::max(mx, v);
  if (mx <= 0) return a;
  if (mn > 0 && mx / mn > 10) {
    a.log = true;
    a.lo = std::floor(std::log10(mn));
    a.hi = std::ceil(std::log10(mx));
  } else {
    // Four equal steps, so the loss's ticks sit on the accuracy's grid lines.
    const double raw = mx / 4, p = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * p;
    for (double m : {1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0})
      if (m * p >= raw) {
        step = m * p;
        break;
      }
    a.lo = 0;
    a.hi = 4 * step;
  }
  return a;
}

Scene CurvesScene(const Progress& p, const CurveOptions& o, Text& text) {
  if (p.curve.empty()) throw Error("There is no curve to draw yet: the run has not taken a step.");
  const double s = std::clamp(o.scale, 1.0, 8.0);
  const Style title{static_cast<float>(15 * s), true}, label{static_cast<float>(11 * s), false},
      tick{static_cast<float>(10 * s), false};
  const Series ser = Bin(p.curve, 400);
  const std::size_t K = ser.acc.size();
  const LossAxis la = MakeLossAxis(ser.loss);
  const double x_max = std::max({1.0, static_cast<double>(p.total), static_cast<double>(p.curve.back().step)});

  Scene sc;
  const double left = std::round((kMargin + 46) * s), top = std::round((kMargin + 15 + 10 + 11 + 14) * s);
  const double pw = std::round(kPlotW * s), ph = std::round(kPlotH * s);
  sc.width = static_cast<int>(left + pw + (46 + kMargin) * s);
  sc.height = static_cast<int>(top + ph + (16 + 14 + kMargin) * s);
  auto X = [&](double step) { return left + pw * step / x_max; };
  auto Y = [&](double unit) { return top + ph * (1 - unit); };

  // Title and legend.
  sc.texts.push_back(
      Label(kMargin * s, (kMargin + 15) * s, title, kInk, o.title.empty() ? "Training: loss and accuracy" : o.title));
  double lx = kMargin * s;
  const double ly = (kMargin + 15 + 10 + 11) * s;
  auto legend = [&](Rgb c, const std::string& what) {
    sc.rects.push_back(Box(static_cast<int>(lx), static_cast<int>(ly - 4 * s), static_cast<int>(14 * s),
                           std::max(2, static_cast<int>(2 * s)), c));
    sc.texts.push_back(Label(lx + 18 * s, ly, label, kInk, what));
    lx += (18 + 16) * s + text.Width(what, label);
  };
  legend(kInk, std::string("loss (left axis") + (la.log ? ", log scale)" : ")"));
  for (std::size_t k = 0; k < K; ++k)
    legend(kTargetColours[k % 10], "accuracy, target " + std::to_string(k) + " (right axis)");
  sc.width = std::max(sc.width, static_cast<int>(lx + kMargin * s));

  // Grid lines at the accuracy ticks; axes.
  const int line = std::max(1, static_cast<int>(std::lround(s)));
  for (int i = 0; i <= 4; ++i) {
    const int y = static_cast<int>(std::lround(Y(i / 4.0)));
    sc.rects.push_back(Box(static_cast<int>(left), y, static_cast<int>(pw), line, i == 0 ? kAxis : kGridLine));
    sc.texts.push_back(Label(left + pw + 6 * s, y + 0.36 * tick.px, tick, kGrey, TickText(i / 4.0)));
  }
  sc.rects.push_back(Box(static_cast<int>(left) - line, static_cast<int>(top), line, static_cast<int>(ph), kAxis));
  sc.rects.push_back(Box(static_cast<int>(left + pw), static_cast<int>(top), line, static_cast<int>(ph), kAxis));
  // Loss ticks on the left.
  if (la.log) {
    for (int e = static_cast<int>(la.lo); e <= static_cast<int>(la.hi); ++e) {
      sc.rects.push_back(Box(static_cast<int>(left), static_cast<int>(std::lround(Y(la(std::pow(10.0, e))))),
                             static_cast<int>(pw), line, kGridLine));
      sc.texts.push_back(Label(left - 6 * s, Y(la(std::pow(10.0, e))) + 0.36 * tick.px, tick, kInk,
                               TickText(std::pow(10.0, e)), Anchor::End));
    }
  } else {
    for (int i = 0; i <= 4; ++i)
      sc.texts.push_back(
          Label(left - 6 * s, Y(i / 4.0) + 0.36 * tick.px, tick, kInk, TickText(la.hi * i / 4), Anchor::End));
  }
  // Step ticks below.
  const double xs = NiceStep(x_max, 6);
  for (double v = 0; v <= x_max + xs / 100; v += xs) {
    sc.rects.push_back(
        Box(static_cast<int>(std::lround(X(v))), static_cast<int>(top + ph), line, static_cast<int>(4 * s), kAxis));
    sc.texts.push_back(Label(X(v), top + ph + (4 + 11) * s, tick, kInk, TickText(v), Anchor::Middle));
  }
  sc.texts.push_back(Label(left + pw / 2, top + ph + (16 + 14) * s, label, kInk, "step", Anchor::Middle));
  sc.texts.push_back(Label(left - 34 * s, top + ph / 2, label, kInk, "loss", Anchor::Middle, 90));
  sc.texts.push_back(Label(left + pw + 40 * s, top + ph / 2, label, kGrey, "accuracy", Anchor::Middle, 90));

  // The lines: accuracies first, the loss on top.
  for (std::size_t k = 0; k < K; ++k) {
    ScenePath path;
    path.colour = kTargetColours[k % 10];
    path.width = 1.5 * s;
    path.cls = "accuracy-" + std::to_string(k);
    for (std::size_t i = 0; i < ser.step.size(); ++i) path.pts.emplace_back(X(ser.step[i]), Y(ser.acc[k][i]));
    sc.paths.push_back(std::move(path));
  }
  ScenePath loss;
  loss.colour = kInk;
  loss.width = 1.5 * s;
  loss.cls = "loss";
  for (std::size_t i = 0; i < ser.step.size(); ++i)
    if (std::isfinite(ser.loss[i])) loss.pts.emplace_back(X(ser.step[i]), Y(std::clamp(la(ser.loss[i]), 0.0, 1.0)));
  sc.paths.push_back(std::move(loss));
  return sc;
}

}  // namespace

Image DrawCurves(const Progress& p, const CurveOptions& o) {
  Text text;
  return Rasterise(CurvesScene(p, o, text), text);
}

std::string CurvesSvg(const Progress& p, const CurveOptions& o) {
  Text text;
  return SceneSvg(CurvesScene(p, o, text));
}

std::string CurvesCsv(const Progress& p, int num_targets) {
  const int K = num_targets >= 0 ? num_targets : p.curve.empty() ? 0 : static_cast<int>(p.curve[0].accuracy.size());
  std::string out = "step,lr,loss";
  for (int k = 0; k < K; ++k) out += ",accuracy_" + std::to_string(k);
  out += ",grad_norm\n";
  char buf[64];
  for (const CurvePoint& c : p.curve) {
    out += std::to_string(c.step - 1);
    std::snprintf(buf, sizeof buf, ",%.9g,%.9g", static_cast<double>(c.lr), static_cast<double>(c.loss));
    out += buf;
    for (int k = 0; k < K; ++k) {
      std::snprintf(buf, sizeof buf, ",%.6f", k < static_cast<int>(c.accuracy.size()) ? c.accuracy[k] : 0.0);
      out += buf;
    }
    std::snprintf(buf, sizeof buf, ",%.9g\n", c.grad_norm);
    out += buf;
  }
  return out;
}

}  // namespace mha::render
