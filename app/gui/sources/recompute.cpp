#include "text/i18n.hpp"
#include "gui/sources/recompute.hpp"

#include <chrono>
#include <new>
#include <string>

#include "gui/sources/lm_source.hpp"
#include "gui/sources/model_source.hpp"
#include "gui/state/settings.hpp"
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

void Recompute(AppState& s) {
  s.dirty = false;
  const auto t0 = Clock::now();
  if (UsingTrainedModel(s)) {  // the model source's branch: model_source.cpp
    RecomputeFromModel(s);
    s.timing.last_recompute_ms = MsSince(t0);
    s.timing.recompute_ms.push_back(s.timing.last_recompute_ms);
    return;
  }
  Result& r = s.result;
  const std::string nfc_note = NormaliseTyped(s.choice);
  if (!nfc_note.empty()) SyncBuffersFromChoice(s);  // the fields show the composed text too
  // The chips show the tokenization even when the configuration cannot run.
  auto texts = [](const std::string& sentence) {
    std::vector<std::string> out;
    for (auto& t : Tokenize(sentence, Limits::kMaxTokens).tokens) out.push_back(std::move(t.text));
    return out;
  };
  if (s.files.input_path.empty()) {
    r.tokens = texts(s.choice.sentence);
    r.memory_tokens = s.choice.cross ? texts(s.choice.memory) : std::vector<std::string>();
  } else {
    r.tokens = s.files.input.tokens;
    r.memory_tokens = s.files.input.memory_tokens;
  }
  try {
    LiveChoice c;
    c.cfg = s.choice.cfg;
    if (s.files.input_path.empty()) {
      c.sentence = s.choice.sentence;
      if (s.choice.cross) c.memory = s.choice.memory;
    } else {
      c.inputs = &s.files.input;
    }
    c.weights = s.files.weights;
    s.live.Recompute(c, r.trace, &r.mean_attn, &r.notice);
    FitKnockedOut(s, 1, r.trace.cfg.num_heads);
    if (!s.source.knocked.empty()) {
      // The seeded layer again with its knocked-out heads (mean ablation: each head's
      // mean context over this sentence, the only text a seeded layer has).
      ContextMeans means;
      if (s.source.knock_mode == AblationMode::Mean) means = MeanContexts(std::vector<const Trace*>{&r.trace});
      Inputs in = r.trace.in;
      in.ablate = LayerAblations(1, r.trace.cfg, s.source.knock_mode, s.source.knocked, &means)[0];
      r.trace = Forward(r.trace.cfg, r.trace.weights, in);
    }
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
  } catch (const Error& e) {
    r.ok = false;
    r.error = e.what();
  } catch (const std::bad_alloc&) {
    r.ok = false;
    r.error = _("Out of memory for this configuration. Use fewer tokens, fewer heads or a smaller d_model.");
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = std::string(_("Unexpected error: ")) + e.what();
  }
  s.timing.last_recompute_ms = MsSince(t0);
  s.timing.recompute_ms.push_back(s.timing.last_recompute_ms);
}

}  // namespace mha::gui
