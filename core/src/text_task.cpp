#include "mha/text_task.hpp"

#include <algorithm>
#include <string>

#include "mha/config.hpp"
#include "rng.hpp"

namespace mha {

void CheckTokenStream(const std::vector<std::int32_t>& ids, int vocab, int seq, const char* what) {
  if (seq < 1) throw Error(std::string(what) + ": windows need at least 1 token (seq = " + std::to_string(seq) + ").");
  if (ids.size() < static_cast<std::size_t>(seq) + 1)
    throw Error(std::string(what) + " has " + std::to_string(ids.size()) + " tokens, fewer than one window of " +
                std::to_string(seq + 1) +
                " (seq + 1: the tokens and the next one to predict). Give more text or "
                "a smaller --seq.");
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= vocab)
      throw Error(std::string(what) + ": token " + std::to_string(i) + " has id " + std::to_string(ids[i]) +
                  ", outside the vocabulary of " + std::to_string(vocab) + ".");
}

namespace {

void Shape(Batch& out, int batch, int seq) {
  out.batch = batch;
  out.seq = seq;
  out.num_targets = 1;
  out.tokens.resize(static_cast<std::size_t>(batch) * seq);
  out.targets.resize(static_cast<std::size_t>(batch) * seq);
}

void CopyWindow(const std::vector<std::int32_t>& ids, std::size_t start, int seq, Batch& out, int b) {
  std::copy_n(ids.begin() + static_cast<std::ptrdiff_t>(start), seq,
              out.tokens.begin() + static_cast<std::ptrdiff_t>(b) * seq);
  std::copy_n(ids.begin() + static_cast<std::ptrdiff_t>(start) + 1, seq,
              out.targets.begin() + static_cast<std::ptrdiff_t>(b) * seq);
}

}  // namespace

void MakeWindowBatch(const std::vector<std::int32_t>& ids, int seq, std::uint64_t seed, std::uint64_t index, int batch,
                     Batch& out, double repeat) {
  Shape(out, batch, seq);
  const std::uint64_t starts = ids.size() - static_cast<std::size_t>(seq);  // start in [0, size - seq - 1]
  detail::SplitMix64 rng(detail::StreamSeed(seed ^ detail::Mix64(index + 1), "text windows"));
  std::vector<std::int32_t> x(static_cast<std::size_t>(seq) + 1);
  for (int b = 0; b < batch; ++b) {
    const std::uint64_t start = rng.Next() % starts;
    // No draws when repeat is 0, so plain runs keep their batches.
    if (repeat <= 0 || seq < 8 || rng.Uniform() >= repeat) {
      CopyWindow(ids, start, seq, out, b);
      continue;
    }
    const int len = 4 + static_cast<int>(rng.Next() % static_cast<std::uint64_t>(seq / 2 - 3));  // [4, seq / 2]
    const auto* a = ids.data() + start;
    std::copy_n(a, len, x.begin());
    std::copy_n(a, seq + 1 - len, x.begin() + len);  // A again, then what followed A
    std::copy_n(x.begin(), seq, out.tokens.begin() + static_cast<std::ptrdiff_t>(b) * seq);
    std::copy_n(x.begin() + 1, seq, out.targets.begin() + static_cast<std::ptrdiff_t>(b) * seq);
  }
}

int CountWindows(const std::vector<std::int32_t>& ids, int seq) {
  if (ids.size() < static_cast<std::size_t>(seq) + 1) return 0;
  return static_cast<int>((ids.size() - 1) / static_cast<std::size_t>(seq));
}

void MakeConsecutiveBatch(const std::vector<std::int32_t>& ids, int seq, int first, int count, Batch& out) {
  Shape(out, count, seq);
  for (int b = 0; b < count; ++b) CopyWindow(ids, static_cast<std::size_t>(first + b) * seq, seq, out, b);
}

StepStats EvaluateStream(Trainer& trainer, const Model& m, const std::vector<std::int32_t>& ids, int seq, int batch,
                         int max_windows, const std::vector<HeadAblation>* ablate) {
  int windows = CountWindows(ids, seq);
  if (max_windows > 0) windows = std::min(windows, max_windows);
  StepStats total;
  total.accuracy.assign(1, 0.0);
  total.counted.assign(1, 0);
  double loss_sum = 0, correct = 0;
  Batch b;
  for (int first = 0; first < windows; first += batch) {
    MakeConsecutiveBatch(ids, seq, first, std::min(batch, windows - first), b);
    const StepStats& st = trainer.Evaluate(m, b, ablate);
    const double n = static_cast<double>(st.counted[0]);
    loss_sum += st.loss * n;
    correct += st.accuracy[0] * n;
    total.counted[0] += st.counted[0];
  }
  if (total.counted[0] > 0) {
    total.loss = loss_sum / static_cast<double>(total.counted[0]);
    total.accuracy[0] = correct / static_cast<double>(total.counted[0]);
  }
  return total;
}

}  // namespace mha
