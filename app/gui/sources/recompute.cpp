#include "text/i18n.hpp"
#include "gui/sources/recompute.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <string>

#include <glad/gl.h>
#include <imgui_internal.h>

#include "gui/sources/lm_source.hpp"
#include "gui/sources/model_source.hpp"
#include "gui/state/settings.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "text/normalize.hpp"

namespace mha::gui {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

}  // namespace

// What the last recompute redid, in the lesson's words: a new head count keeps Q, K
// and V (it only cuts them differently), a new word re-projects its own row.
std::string ReuseText(const LiveReport& r, const Trace& t, bool shown) {
  // English for --dump-state (tests and scripts read it), translated for the status bar.
  const auto tr = [shown](const char* m) { return shown ? _(m) : m; };
  const auto trp = [shown](const char* one, const char* many, int n) {
    return shown ? P_(one, many, n) : n == 1 ? one : many;
  };
  std::string s;
  // Seeded weights are drawn per (d_model, seed): a new d_model is a new random
  // layer, so every map changes (a new num_heads only re-cuts the same Q, K, V).
  if (r.weights == LiveReport::Weights::New)
    s = tr(N_("new random weights for this d_model and seed (every map changes), "));
  else if (r.weights == LiveReport::Weights::KvOnly)
    s = tr(N_("new W_K, W_V, "));
  const Trace::Reuse& u = t.reuse;
  const bool cross = t.in.cross();
  if (u.resplit && u.q_rows == 0 && u.kv_rows == 0)
    return s + i18n::Format(trp(N_("Q, K, V kept and re-split into %d head"), "Q, K, V kept and re-split into %d heads",
                                t.cfg.num_heads),
                            t.cfg.num_heads);
  if (u.q_rows == 0 && u.kv_rows == 0) return s + tr(N_("Q, K, V kept"));
  if (u.q_rows == t.seq && u.kv_rows == t.seq_kv) return s + tr(N_("Q, K, V computed"));
  if (!cross) return s + i18n::Format(tr(N_("Q, K, V of %d of %d rows re-projected")), u.q_rows, t.seq);
  return s + i18n::Format(tr(N_("Q: %d of %d rows, K, V: %d of %d rows re-projected")), u.q_rows, t.seq, u.kv_rows,
                          t.seq_kv);
}

// Composes (NFC) what the learner typed, in place, so the field, the tokens, the saved
// settings and --dump-state all hold the composed text; returns a note if it changed.
std::string NormaliseTyped(Choice& c) {
  std::string note;
  if (text::Nfc n = text::ToNfc(c.sentence); n.changed) {
    c.sentence = std::move(n.text);
    note = text::NfcNotice("The sentence");
  }
  if (text::Nfc n = text::ToNfc(c.memory); n.changed) {
    c.memory = std::move(n.text);
    note += (note.empty() ? "" : " ") + text::NfcNotice("The memory sentence");
  }
  return note;
}

namespace {

// The learner's choice as a job (on this thread: the sentence is composed, the chips'
// tokens are set, the --input arrays referenced).
RecomputeJob MakeJob(AppState& s, std::string* nfc_note) {
  Result& r = s.result;
  *nfc_note = NormaliseTyped(s.choice);
  if (!nfc_note->empty()) SyncBuffersFromChoice(s);  // the fields show the composed text too
  // The chips show the tokenization even when the configuration cannot run.
  auto texts = [](const std::string& sentence) {
    std::vector<std::string> out;
    for (auto& t : Tokenize(sentence, Limits::kMaxTokens).tokens) out.push_back(std::move(t.text));
    return out;
  };
  RecomputeJob job;
  job.cfg = s.choice.cfg;
  if (s.files.input_path.empty()) {
    r.tokens = texts(s.choice.sentence);
    r.memory_tokens = s.choice.cross ? texts(s.choice.memory) : std::vector<std::string>();
    job.sentence = s.choice.sentence;
    if (s.choice.cross) job.memory = s.choice.memory;
  } else {
    r.tokens = s.files.input.tokens;
    r.memory_tokens = s.files.input.memory_tokens;
    job.inputs = &s.files.input;
  }
  job.weights = s.files.weights;
  job.knocked = s.source.knocked;
  job.knock_mode = s.source.knock_mode;
  return job;
}

// The core on the job, on any thread: `live`, `t`, `mean` and `notice` are the only
// state it touches.
void RunJob(const RecomputeJob& job, Live& live, Trace& t, Mat& mean, std::string& notice, RecomputeOutcome& out) {
  try {
    LiveChoice c;
    c.cfg = job.cfg;
    if (job.inputs) {
      c.inputs = job.inputs;
    } else {
      c.sentence = job.sentence;
      c.memory = job.memory;
    }
    c.weights = job.weights;
    live.Recompute(c, t, &mean, &notice);
    std::vector<HeadRef> knocked = job.knocked;
    knocked.erase(std::remove_if(knocked.begin(), knocked.end(),
                                 [&](const HeadRef& h) { return h.layer >= 1 || h.head >= t.cfg.num_heads; }),
                  knocked.end());
    if (!knocked.empty()) {
      // The seeded layer again with its knocked-out heads (mean ablation: each head's
      // mean context over this sentence, the only text a seeded layer has).
      ContextMeans means;
      if (job.knock_mode == AblationMode::Mean) means = MeanContexts(std::vector<const Trace*>{&t});
      Inputs in = t.in;
      in.ablate = LayerAblations(1, t.cfg, job.knock_mode, knocked, &means)[0];
      t = Forward(t.cfg, t.weights, in);
    }
    out.ok = true;
    out.error.clear();
  } catch (const Error& e) {
    out.ok = false;
    out.error = e.what();
  } catch (const std::bad_alloc&) {
    out.ok = false;
    out.error = _("Out of memory for this configuration. Use fewer tokens, fewer heads or a smaller d_model.");
  } catch (const std::exception& e) {
    out.ok = false;
    out.error = std::string(_("Unexpected error: ")) + e.what();
  }
}

// The job's outcome into the result (this thread; s.result.trace holds its trace).
void ApplyOutcome(AppState& s, const RecomputeOutcome& out, const std::string& nfc_note) {
  Result& r = s.result;
  if (!out.ok) {
    r.ok = false;
    r.error = out.error;
    return;
  }
  FitKnockedOut(s, 1, r.trace.cfg.num_heads);
  if (!nfc_note.empty()) r.notice += (r.notice.empty() ? "" : " ") + nfc_note;
  r.reuse = ReuseText(s.live.report(), r.trace);  // once per recompute, not per frame
  r.reuse_shown = ReuseText(s.live.report(), r.trace, true);
  if (!s.source.knocked.empty()) {
    r.reuse += ", knocked out: " + KnockoutText(s);
    r.reuse_shown += i18n::Format(_(", knocked out: %s"), KnockoutText(s, true).c_str());
  }
  r.ok = true;
  r.error.clear();
  ++r.generation;
}

void RecordRecompute(AppState& s, double ms) {
  s.timing.last_recompute_ms = ms;
  s.timing.recompute_ms.push_back(ms);
}

// Attention cells of every map together (heads and the mean) above which a recompute
// goes to the worker: colouring them alone takes a few ms per million.
double WorkerCells() {
  static const double cells = [] {
    const char* e = std::getenv("MHAVIZ_WORKER_CELLS");  // tests: 0 sends every recompute to the worker
    return e && *e ? std::max(0.0, std::atof(e)) : 2.0 * (1 << 20);
  }();
  return cells;
}

// The last result's tokens, sizes of the job for the veil: "32 heads x 1024 tokens".
std::string JobText(const Config& c, int seq) {
  return i18n::Format(P_("%d head", "%d heads", c.num_heads), c.num_heads) + " \xC3\x97 " +
         i18n::Format(P_("%d token", "%d tokens", seq), seq);
}

// The job's size from what the chips show (the sentence's tokens, or the --input rows).
void JobSize(const AppState& s, int* seq, int* seq_kv) {
  if (!s.files.input_path.empty()) {
    *seq = static_cast<int>(s.files.input.x.rows());
    *seq_kv = s.files.input.cross() ? static_cast<int>(s.files.input.memory.rows()) : *seq;
    return;
  }
  *seq = static_cast<int>(Tokenize(s.choice.sentence, Limits::kMaxTokens).tokens.size());
  *seq_kv = s.choice.cross ? static_cast<int>(Tokenize(s.choice.memory, Limits::kMaxTokens).tokens.size()) : *seq;
}

void StartWorker(AppState& s, bool colour_only) {
  RecomputeWorker& w = s.worker;
  Result& r = s.result;
  w.colour_only = colour_only;
  w.out = RecomputeOutcome{};
  w.scale = s.ui.colour_scale;
  w.pixels = HeatmapPixels{};
  std::string nfc_note;
  if (!colour_only) {
    s.dirty = false;
    w.job = MakeJob(s, &nfc_note);
    if (w.job.inputs) {  // the worker reads its own copy: the window may load another file
      w.job.inputs_copy = std::make_shared<const Inputs>(*w.job.inputs);
      w.job.inputs = w.job.inputs_copy.get();
    }
    w.nfc_note = nfc_note;
    w.out.notice = r.notice;
    w.trace = std::move(r.trace);
    w.mean_attn = std::move(r.mean_attn);
    r.trace = Trace();
    r.mean_attn = Mat();
    w.generation = r.generation + 1;
    // Nothing reads the trace while the worker has it (HasResults is false); the
    // results area shows the picture of the last one.
    r.ok = false;
    r.error.clear();
    w.what = JobText(w.job.cfg, static_cast<int>(r.tokens.size()));
  } else {
    w.generation = r.generation;
    w.what = JobText(r.trace.cfg, r.trace.seq);
  }
  w.done.store(false);
  w.started = std::chrono::steady_clock::now();
  ++w.jobs;
  w.phase = RecomputeWorker::Phase::Run;
  const Trace* colour_from = colour_only ? &r.trace : &w.trace;
  const Mat* colour_mean = colour_only ? &r.mean_attn : &w.mean_attn;
  w.thread = std::thread([&w, &live = s.live, colour_from, colour_mean] {
    const auto t0 = std::chrono::steady_clock::now();
    if (!w.colour_only) RunJob(w.job, live, w.trace, w.mean_attn, w.out.notice, w.out);
    if (w.colour_only || w.out.ok) {
      try {
        ColourHeatmaps(*colour_from, *colour_mean, w.generation, w.scale, w.pixels, /*mipmaps=*/true);
      } catch (const std::bad_alloc&) {
        w.pixels = HeatmapPixels{};  // the grid colours them itself, in the frame
      }
    }
    w.out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    w.done.store(true, std::memory_order_release);
  });
}

// The worker's result back into the app (this thread, once `done`).
void TakeResult(AppState& s) {
  RecomputeWorker& w = s.worker;
  if (w.thread.joinable()) w.thread.join();
  if (!w.colour_only) {
    s.result.trace = std::move(w.trace);
    s.result.mean_attn = std::move(w.mean_attn);
    w.trace = Trace();
    w.mean_attn = Mat();
    s.result.notice = w.out.notice;
    ApplyOutcome(s, w.out, w.nfc_note);
    w.job = RecomputeJob{};
  }
  RecordRecompute(s, w.out.ms);
}

}  // namespace

bool BigRecompute(const Config& c, int seq, int seq_kv) {
  const double cells = static_cast<double>(c.num_heads + 1) * seq * seq_kv;
  if (std::getenv("MHAVIZ_WORKER_CELLS")) return cells > WorkerCells();
  const double d = c.d_model, kv = static_cast<double>(c.kv_heads()) * c.head_dim();
  // Multiply-adds: Q, K, V and W_O, the scores and the weighted sum, the FFN.
  double madds = seq * d * d + static_cast<double>(seq_kv) * d * 2 * kv + seq * d * d + 2.0 * seq * seq_kv * d;
  if (c.block == Block::Encoder) madds += 2.0 * seq * d * c.ffn_dim();
  return cells > WorkerCells() || madds > 2e8;
}

void Recompute(AppState& s) {
  s.dirty = false;
  const auto t0 = Clock::now();
  if (UsingTrainedModel(s)) {  // the model source's branch: model_source.cpp
    RecomputeFromModel(s);
    RecordRecompute(s, MsSince(t0));
    return;
  }
  std::string nfc_note;
  const RecomputeJob job = MakeJob(s, &nfc_note);
  RecomputeOutcome out;
  RunJob(job, s.live, s.result.trace, s.result.mean_attn, s.result.notice, out);
  ApplyOutcome(s, out, nfc_note);
  RecordRecompute(s, MsSince(t0));
}

void StepRecompute(AppState& s) {
  RecomputeWorker& w = s.worker;
  using Phase = RecomputeWorker::Phase;
  if (w.phase == Phase::Capture) return;  // AfterRender starts it
  if (w.phase == Phase::Run) {
    if (!w.done.load(std::memory_order_acquire)) return;
    TakeResult(s);
    w.phase = w.pixels.valid() ? Phase::Upload : Phase::Idle;
  }
  if (w.phase == Phase::Upload) {
    // A few maps per frame (about a quarter of the frame's budget), the picture
    // staying until the last is in.
    const auto t0 = Clock::now();
    if (s.ui.textures.Upload(w.pixels, kFrameBudgetMs / 4)) {
      w.pixels = HeatmapPixels{};
      w.phase = Phase::Idle;
    }
    s.timing.last_upload_ms = MsSince(t0);
    s.timing.upload_ms.push_back(s.timing.last_upload_ms);
    return;
  }
  if (s.dirty || s.churn) {
    int seq = 0, seq_kv = 0;
    if (!UsingTrainedModel(s)) JobSize(s, &seq, &seq_kv);
    if (!UsingTrainedModel(s) && BigRecompute(s.choice.cfg, seq, seq_kv)) {
      w.colour_only = false;
      w.phase = Phase::Capture;
      return;
    }
    Recompute(s);
    return;
  }
  // A new colour scale re-colours every map: big maps on the worker too.
  s.ui.textures.SetScale(s.ui.colour_scale);
  const Trace& t = s.result.trace;
  if (s.result.ok && s.ui.textures.Stale(s.result) &&
      static_cast<double>(t.cfg.num_heads + 1) * t.seq * t.seq_kv > WorkerCells()) {
    w.colour_only = true;
    w.phase = Phase::Capture;
  }
}

void SetResultsRect(AppState& s, ImVec2 a, ImVec2 b) {
  if (!WorkerBusy(s)) s.worker.rect = {a.x, a.y, b.x - a.x, b.y - a.y};
}

void AfterRender(AppState& s, int fb_w, int fb_h) {
  RecomputeWorker& w = s.worker;
  if (w.phase != RecomputeWorker::Phase::Capture) return;
  // The results area from the frame just drawn (the back buffer), for the veil.
  const ImVec2 fs = ImGui::GetIO().DisplayFramebufferScale;
  const int x = std::clamp(static_cast<int>(w.rect[0] * fs.x), 0, fb_w);
  const int y = std::clamp(static_cast<int>(w.rect[1] * fs.y), 0, fb_h);
  const int cw = std::clamp(static_cast<int>(w.rect[2] * fs.x), 0, fb_w - x);
  const int ch = std::clamp(static_cast<int>(w.rect[3] * fs.y), 0, fb_h - y);
  // Before the first result there is nothing to keep (the area says so): a plain veil.
  w.has_picture = s.result.generation > 0 && cw > 0 && ch > 0;
  if (w.has_picture) {
    if (w.picture == 0) glGenTextures(1, &w.picture);
    glBindTexture(GL_TEXTURE_2D, w.picture);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glCopyTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, x, fb_h - y - ch, cw, ch, 0);  // GL counts rows from the bottom
    glBindTexture(GL_TEXTURE_2D, 0);
  }
  StartWorker(s, w.colour_only);
}

void DrawWorkerPicture(AppState& s, ImVec2 a, ImVec2 b) {
  const RecomputeWorker& w = s.worker;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (w.has_picture)
    dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(w.picture)), a, b, ImVec2(0, 1),
                 ImVec2(1, 0));
  ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
  bg.w = 0.55f;
  dl->AddRectFilled(a, b, ImGui::ColorConvertFloat4ToU32(bg));
  const std::string line1 = WorkerText(s);
  const char* line2 = w.has_picture ? _("The last result is shown until the new one is ready.") : "";
  const float fs = ImGui::GetFontSize();
  const ImVec2 t1 = ImGui::CalcTextSize(line1.c_str()), t2 = *line2 ? ImGui::CalcTextSize(line2) : ImVec2(0, 0);
  const float bw = std::max(t1.x, t2.x) + 2 * fs, bh = t1.y + t2.y + (*line2 ? 1.6f : 1.2f) * fs;
  const ImVec2 c((a.x + b.x) / 2, (a.y + b.y) / 2);
  const ImVec2 p0(c.x - bw / 2, c.y - bh / 2), p1(c.x + bw / 2, c.y + bh / 2);
  dl->AddRectFilled(p0, p1, Pal().notice_bg, 4.0f);
  dl->AddText(ImVec2(p0.x + fs, p0.y + 0.6f * fs), Pal().notice_text, line1.c_str());
  dl->AddText(ImVec2(p0.x + fs, p0.y + 0.9f * fs + t1.y), Pal().notice_text, line2);
  ImGui::SetCursorScreenPos(a);
  ImGui::Dummy(ImVec2(b.x - a.x, b.y - a.y));
  s.ui.probe["worker_veil"] = {a.x, a.y, b.x - a.x, b.y - a.y};
}

std::string WorkerText(const AppState& s) {
  const RecomputeWorker& w = s.worker;
  if (!w.busy()) return std::string();
  const double sec = std::chrono::duration<double>(Clock::now() - w.started).count();
  if (w.phase == RecomputeWorker::Phase::Upload) return i18n::Format(_("Drawing %s ..."), w.what.c_str());
  return i18n::Format(w.colour_only ? _("Colouring %s: %.1f s") : _("Computing %s: %.1f s"), w.what.c_str(), sec);
}

void FinishRecompute(AppState& s) {
  RecomputeWorker& w = s.worker;
  if (w.phase == RecomputeWorker::Phase::Run) TakeResult(s);
  w.pixels = HeatmapPixels{};
  w.phase = RecomputeWorker::Phase::Idle;
}

void ReleaseWorker(AppState& s) {
  if (s.worker.picture) glDeleteTextures(1, &s.worker.picture);
  s.worker.picture = 0;
}

}  // namespace mha::gui
