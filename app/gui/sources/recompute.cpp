#include "text/i18n.hpp"
#include "gui/sources/recompute.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <string>

#include <glad/gl.h>
#include <imgui_internal.h>

#include "gui/sources/exports.hpp"
#include "gui/sources/knockout.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/sources/model_measures.hpp"
#include "gui/sources/model_source.hpp"
#include "gui/state/settings.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "text/normalize.hpp"

namespace mha::gui {

// Attention cells (all maps together) above which a recompute goes to the worker:
// colouring them alone takes a few ms per million.
double WorkerCells() {
  static const double cells = [] {
    const char* e = std::getenv("MHAVIZ_WORKER_CELLS");  // tests: 0 sends every recompute to the worker
    return e && *e ? std::max(0.0, std::atof(e)) : 2.0 * (1 << 20);
  }();
  return cells;
}

bool OnWorker(double cells, double madds) {
  if (std::getenv("MHAVIZ_WORKER_CELLS")) return cells > WorkerCells();
  return cells > WorkerCells() || madds > 2e8;
}

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
// settings and --dump-state all hold the composed text; says so if it changed (in the
// words of text::NfcNotice, which the command line prints).
std::vector<Notice> NormaliseTyped(Choice& c) {
  std::vector<Notice> notes;
  if (text::Nfc n = text::ToNfc(c.sentence); n.changed) {
    c.sentence = std::move(n.text);
    notes.push_back(
        {N_("The sentence was normalised to Unicode NFC: decomposed letters (such as Hangul typed as "
            "separate jamo, common in text copied from macOS file names or PDFs) were composed, so it shows "
            "and embeds exactly like the same text typed on a keyboard.")});
  }
  if (text::Nfc n = text::ToNfc(c.memory); n.changed) {
    c.memory = std::move(n.text);
    notes.push_back(
        {N_("The memory sentence was normalised to Unicode NFC: decomposed letters (such as Hangul typed "
            "as separate jamo, common in text copied from macOS file names or PDFs) were composed, so it "
            "shows and embeds exactly like the same text typed on a keyboard.")});
  }
  return notes;
}

namespace {

// What the tokenizer cut or replaced, in the words of the core's TokenizeNotice (which
// the command line prints), each with its numbers.
std::vector<Notice> TokenizerNotices(const Tokenized& t) {
  std::vector<Notice> out;
  if (t.input_truncated)
    out.push_back(
        {N_("Input longer than %s KiB was cut off there."), {std::to_string(Limits::kMaxSentenceBytes >> 10)}});
  if (t.dropped_tokens > 0)
    out.push_back({N_("Only the first %s tokens are used (cap); %s more were left out."),
                   {std::to_string(Limits::kMaxTokens), std::to_string(t.dropped_tokens)}});
  if (t.invalid_bytes > 0)
    out.push_back({N_("%s byte(s) of invalid UTF-8 were replaced by U+FFFD."), {std::to_string(t.invalid_bytes)}});
  return out;
}

// The seeded layer (or --weights, --input) on the typed sentence, through the app's Live
// cache (its stages kept between recomputes: only the worker or the frame uses it).
class SeededJob final : public WorkerJob {
 public:
  explicit SeededJob(AppState& s) : live_(&s.recompute.live) {
    Result& r = s.result;
    nfc_notes_ = NormaliseTyped(s.choice);
    if (!nfc_notes_.empty()) SyncBuffersFromChoice(s);  // the fields show the composed text too
    // The chips show the tokenization even when the configuration cannot run; the
    // notices say what it cut (the Live recompute cuts the same way).
    auto texts = [](const Tokenized& t) {
      std::vector<std::string> out;
      for (const auto& tok : t.tokens) out.push_back(tok.text);
      return out;
    };
    choice_.cfg = s.choice.cfg;
    if (s.choice.files.input_path.empty()) {
      const Tokenized tq = Tokenize(s.choice.sentence, Limits::kMaxTokens);
      r.tokens = texts(tq);
      notices_ = TokenizerNotices(tq);
      r.memory_tokens.clear();
      sentence_ = s.choice.sentence;
      if (s.choice.cross) {
        const Tokenized tm = Tokenize(s.choice.memory, Limits::kMaxTokens);
        r.memory_tokens = texts(tm);
        if (std::vector<Notice> m = TokenizerNotices(tm); !m.empty() && !s.choice.memory.empty())
          notices_.push_back({N_("Memory: %s"), {}, std::move(m)});
        memory_ = s.choice.memory;
      }
    } else {
      r.tokens = s.choice.files.input.tokens;
      r.memory_tokens = s.choice.files.input.memory_tokens;
      choice_.inputs = &s.choice.files.input;
    }
    choice_.weights = s.choice.files.weights;
    knockout_ = s.choice.knockout;
    // The buffers and projections of the last trace are reused (Live), not copied.
    trace_ = std::move(r.trace);
    mean_ = std::move(r.mean_attn);
  }
  // The worker reads its own copy of an --input file: the window may load another.
  void Detach() {
    if (!choice_.inputs) return;
    inputs_copy_ = std::make_shared<const Inputs>(*choice_.inputs);
    choice_.inputs = inputs_copy_.get();
  }
  void Compute() override {
    try {
      LiveChoice c = choice_;
      if (!c.inputs) {
        c.sentence = sentence_;
        c.memory = memory_;
      }
      live_->Recompute(c, trace_, &mean_);
      // The seeded layer again without its knocked-out heads (sources/knockout.hpp).
      plan_ = KnockoutPlan::Seeded(knockout_, trace_);
      if (plan_.Any()) {
        Inputs in = trace_.in;
        in.ablate = plan_.layers()[0];
        trace_ = Forward(trace_.cfg, trace_.weights, in);
      }
      ok_ = true;
    } catch (const Error& e) {
      error_ = e.what();
    } catch (const std::bad_alloc&) {
      error_ = _("Out of memory for this configuration. Use fewer tokens, fewer heads or a smaller d_model.");
    } catch (const std::exception& e) {
      error_ = std::string(_("Unexpected error: ")) + e.what();
    }
  }
  void Apply(AppState& s) override {
    Result& r = s.result;
    r.notices = std::move(notices_);
    if (!GiveBack(r)) return;
    r.notices.insert(r.notices.end(), nfc_notes_.begin(), nfc_notes_.end());
    r.reuse = ReuseText(s.recompute.live.report(), r.trace);  // once per recompute, not per frame
    r.reuse_shown = ReuseText(s.recompute.live.report(), r.trace, true);
    r.knocked_out = plan_.heads();
    r.knocked_mean = plan_.mean();
    AppendKnockout(s);
    r.ok = true;
    r.error.clear();
    ++r.generation;
  }

 private:
  Live* live_;
  LiveChoice choice_;
  std::string sentence_, memory_;
  std::shared_ptr<const Inputs> inputs_copy_;
  Knockout knockout_;
  KnockoutPlan plan_;
  std::vector<Notice> nfc_notes_, notices_;
};

std::unique_ptr<WorkerJob> MakeJob(AppState& s) {
  // A job takes the trace (its buffers are reused): no task may be reading it then.
  s.result.readers.StopAll();
  if (UsingTrainedModel(s)) return MakeModelJob(s);
  return std::make_unique<SeededJob>(s);
}

void RecordRecompute(AppState& s, double ms) {
  s.ui.timing.last_recompute_ms = ms;
  s.ui.timing.recompute_ms.push_back(ms);
}

// "32 heads x 1024 tokens", for the veil.
std::string JobText(int heads, int seq) {
  return i18n::Format(P_("%d head", "%d heads", heads), heads) + " \xC3\x97 " +
         i18n::Format(P_("%d token", "%d tokens", seq), seq);
}

// The work of the current choice (from what the chips show: the sentence's tokens or
// the --input rows; a trained model's sizes).
WorkSize ChoiceWork(const AppState& s) {
  if (UsingTrainedModel(s)) return ModelWork(s);
  int seq = 0, seq_kv = 0;
  if (!s.choice.files.input_path.empty()) {
    seq = static_cast<int>(s.choice.files.input.x.rows());
    seq_kv = s.choice.files.input.cross() ? static_cast<int>(s.choice.files.input.memory.rows()) : seq;
  } else {
    seq = static_cast<int>(Tokenize(s.choice.sentence, Limits::kMaxTokens).tokens.size());
    seq_kv = s.choice.cross ? static_cast<int>(Tokenize(s.choice.memory, Limits::kMaxTokens).tokens.size()) : seq;
  }
  return LayerWork(s.choice.cfg, seq, seq_kv);
}

bool Big(const WorkSize& w) { return OnWorker(w.cells, w.madds); }

// Re-colours the app's current maps (a new colour scale): Compute reads s.result's
// trace, which nothing writes while it runs (the recompute waits for the worker).
class ColourJob final : public WorkerJob {
 public:
  explicit ColourJob(const Result& r) : r_(r) { ok_ = true; }
  void Compute() override {}
  void Apply(AppState&) override {}
  const Trace& Shown() const override { return r_.trace; }
  const Mat& ShownMean() const override { return r_.mean_attn; }

 private:
  const Result& r_;
};

// An export of the app's current trace (exports.cpp prepared it): the trace stays the
// app's, read by the worker while recomputes wait.
class ExportJob final : public WorkerJob {
 public:
  explicit ExportJob(ExportWork work) : work_(std::move(work)) {}
  void Compute() override { outcome_ = work_.run(); }
  void Apply(AppState& s) override { ShowExportOutcome(s, outcome_); }

 private:
  ExportWork work_;
  ExportOutcome outcome_;
};

// A view's work on the app's current trace: the task runs it, the window's thread
// stores what it returned.
class ViewJob final : public WorkerJob {
 public:
  explicit ViewJob(ViewWork work) : work_(std::move(work)) {}
  void Compute() override { done_ = work_(); }
  void Apply(AppState& s) override {
    if (done_) done_(s);
  }

 private:
  ViewWork work_;
  Primed done_;
};

// What the task does with a job: compute it, colour its maps for upload, and the
// views' work beside the new trace (their prime hooks).
RecomputeOutput RunJob(std::shared_ptr<WorkerJob> job, RecomputeWorker::Kind kind, std::uint64_t generation,
                       render::ColourScale scale, const std::vector<PrimeHook>& primers, const Choice& choice) {
  const auto t0 = Clock::now();
  RecomputeOutput out;
  job->Compute();
  if (job->Ok()) {
    try {
      ColourHeatmaps(job->Shown(), job->ShownMean(), generation, scale, out.pixels, /*mipmaps=*/true);
    } catch (const std::bad_alloc&) {
      out.pixels = HeatmapPixels{};  // the grid colours them itself, in the frame
    }
  }
  if (job->Ok() && kind == RecomputeWorker::Kind::Recompute) {
    // What the views would otherwise compute in the window's first frames.
    const Trace& t = job->Shown();
    try {
      std::vector<HeadSummary> summaries = SummarizeHeads(t);
      out.primed.push_back([summaries = std::move(summaries)](AppState& s) mutable {
        Fill(s.result.summaries, GenKey(s), std::move(summaries));
      });
      for (const PrimeHook prime : primers)
        if (Primed p = prime(t, choice)) out.primed.push_back(std::move(p));
    } catch (const std::exception&) {
      // (the views compute them, and show their error)
    }
  }
  out.job = std::move(job);
  out.ms = MsSince(t0);
  return out;
}

void StartWorker(AppState& s) {
  RecomputeWorker& w = s.recompute.worker;
  Result& r = s.result;
  w.pixels = HeatmapPixels{};
  std::unique_ptr<WorkerJob> job;
  if (w.kind == RecomputeWorker::Kind::Recompute) {
    s.dirty = false;
    const WorkSize size = ChoiceWork(s);
    job = MakeJob(s);
    if (auto* seeded = dynamic_cast<SeededJob*>(job.get())) seeded->Detach();
    w.generation = r.generation + 1;
    // Nothing reads the trace while the task has it (HasResults is false); the
    // results area shows the picture of the last one.
    r.ok = false;
    r.error.clear();
    w.what = JobText(size.heads, size.seq);
  } else if (w.kind == RecomputeWorker::Kind::Colour) {
    job = std::make_unique<ColourJob>(r);
    w.generation = r.generation;
    w.what = JobText(r.trace.cfg.num_heads, r.trace.seq);
  } else if (w.kind == RecomputeWorker::Kind::View) {
    job = std::make_unique<ViewJob>(std::move(w.view_work));
    w.view_work = nullptr;
  } else {
    job = std::make_unique<ExportJob>(std::move(w.export_work));
    w.what = JobText(r.trace.cfg.num_heads, r.trace.seq);
  }
  w.started = Clock::now();
  ++w.jobs;
  w.phase = RecomputeWorker::Phase::Run;
  // The task gets copies of what it reads besides the job: the choice, for the views'
  // prime hooks, without the files' data (the trace holds what they gave).
  Inputs input = std::move(s.choice.files.input);
  Choice choice = s.choice;
  s.choice.files.input = std::move(input);
  w.task.Start([job = std::shared_ptr<WorkerJob>(std::move(job)), kind = w.kind, generation = w.generation,
                scale = s.ui.colour_scale, primers = s.recompute.primers, choice = std::move(choice)](
                   TaskContext<RecomputeOutput>&) { return RunJob(job, kind, generation, scale, primers, choice); });
}

// The task's result back into the app (this thread, once it has ended).
void TakeResult(AppState& s) {
  RecomputeWorker& w = s.recompute.worker;
  std::shared_ptr<RecomputeOutput> out = w.task.Take();
  if (!out || !out->job) {  // (the task cannot throw: a job keeps its own errors)
    w.phase = RecomputeWorker::Phase::Idle;
    return;
  }
  out->job->Apply(s);
  w.pixels = std::move(out->pixels);
  // The trace is the app's again: the maps still to upload, or nothing left to do.
  w.phase = w.pixels.valid() ? RecomputeWorker::Phase::Upload : RecomputeWorker::Phase::Idle;
  if (s.result.ok)
    for (Primed& p : out->primed) p(s);
  if (w.kind == RecomputeWorker::Kind::Recompute) RecordRecompute(s, out->ms);
}

}  // namespace

void Recompute(AppState& s) {
  s.dirty = false;
  const auto t0 = Clock::now();
  std::unique_ptr<WorkerJob> job = MakeJob(s);
  job->Compute();
  job->Apply(s);
  RecordRecompute(s, MsSince(t0));
}

void StepRecompute(AppState& s) {
  RecomputeWorker& w = s.recompute.worker;
  using Phase = RecomputeWorker::Phase;
  StepModelMeasures(s);
  if (w.phase == Phase::Capture) return;  // AfterRender starts it
  if (w.phase == Phase::Run) {
    if (!w.task.Poll()) return;
    TakeResult(s);
  }
  if (w.phase == Phase::Upload) {
    if (w.pixels.valid()) {
      // A few maps per frame (about a quarter of the frame's budget), the picture
      // staying until the last is in, and for the frame that uploads it: the views'
      // first frame with the new trace (their caches, a matrix's first rows) gets a
      // frame of its own.
      const auto t0 = Clock::now();
      if (s.ui.textures.Upload(w.pixels, kFrameBudgetMs / 4)) w.pixels = HeatmapPixels{};
      s.ui.timing.last_upload_ms = MsSince(t0);
      s.ui.timing.upload_ms.push_back(s.ui.timing.last_upload_ms);
      return;
    }
    w.phase = Phase::Idle;
  }
  if (s.dirty || s.ui.churn) {
    if (Big(ChoiceWork(s))) {
      w.kind = RecomputeWorker::Kind::Recompute;
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
    w.kind = RecomputeWorker::Kind::Colour;
    w.phase = Phase::Capture;
  }
}

void StepExports(AppState& s) {
  if (RecomputePending(s)) return;  // after the recompute under way
  ExportWork e;
  if (!PrepareExport(s, &e)) return;
  if (e.cells <= WorkerCells()) {  // a small figure: at once
    ShowExportOutcome(s, e.run());
    return;
  }
  RecomputeWorker& w = s.recompute.worker;
  w.export_work = std::move(e);
  w.kind = RecomputeWorker::Kind::Export;
  w.phase = RecomputeWorker::Phase::Capture;
}

bool StartViewWork(AppState& s, ViewWork work, const std::string& what) {
  RecomputeWorker& w = s.recompute.worker;
  if (RecomputePending(s) || s.dirty || !HasResults(s)) return false;
  w.view_work = std::move(work);
  w.what = what;
  w.kind = RecomputeWorker::Kind::View;
  w.phase = RecomputeWorker::Phase::Capture;
  return true;
}

void SetResultsRect(AppState& s, ImVec2 a, ImVec2 b) {
  if (!WorkerBusy(s)) s.recompute.worker.rect = {a.x, a.y, b.x - a.x, b.y - a.y};
}

void AfterRender(AppState& s, int fb_w, int fb_h) {
  RecomputeWorker& w = s.recompute.worker;
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
  StartWorker(s);
}

void DrawWorkerPicture(AppState& s, ImVec2 a, ImVec2 b) {
  const RecomputeWorker& w = s.recompute.worker;
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
  const RecomputeWorker& w = s.recompute.worker;
  if (!w.busy()) return std::string();
  const double sec = std::chrono::duration<double>(Clock::now() - w.started).count();
  if (w.phase == RecomputeWorker::Phase::Upload) return i18n::Format(_("Drawing %s ..."), w.what.c_str());
  const char* doing = w.kind == RecomputeWorker::Kind::Colour   ? _("Colouring %s: %.1f s")
                      : w.kind == RecomputeWorker::Kind::Export ? _("Exporting %s: %.1f s")
                                                                : _("Computing %s: %.1f s");
  return i18n::Format(doing, w.what.c_str(), sec);
}

void FinishRecompute(AppState& s) {
  RecomputeWorker& w = s.recompute.worker;
  if (w.phase == RecomputeWorker::Phase::Run) {
    w.task.Wait();
    w.task.Poll();
    TakeResult(s);
  }
  w.pixels = HeatmapPixels{};
  w.phase = RecomputeWorker::Phase::Idle;
}

void ReleaseWorker(AppState& s) {
  if (s.recompute.worker.picture) glDeleteTextures(1, &s.recompute.worker.picture);
  s.recompute.worker.picture = 0;
}

}  // namespace mha::gui
