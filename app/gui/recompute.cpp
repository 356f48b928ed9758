#include "gui/recompute.hpp"

#include <chrono>
#include <new>

namespace mha::gui {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

void Recompute(AppState& s) {
  s.dirty = false;
  const auto t0 = Clock::now();
  Result& r = s.result;
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
    r.ok = true;
    r.error.clear();
    ++r.generation;
  } catch (const Error& e) {
    r.ok = false;
    r.error = e.what();
  } catch (const std::bad_alloc&) {
    r.ok = false;
    r.error = "Out of memory for this configuration. Use fewer tokens, fewer heads or a smaller d_model.";
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = std::string("Unexpected error: ") + e.what();
  }
  s.timing.last_recompute_ms = MsSince(t0);
  s.timing.recompute_ms.push_back(s.timing.last_recompute_ms);
}

}  // namespace mha::gui
