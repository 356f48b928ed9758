#include "mha/tasks.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "mha/model.hpp"
#include "rng.hpp"

namespace mha {

const char* ToString(TaskKind k) {
  switch (k) {
    case TaskKind::Offsets: return "offsets";
    case TaskKind::Reverse: return "reverse";
    case TaskKind::Sort: return "sort";
    case TaskKind::Induction: return "induction";
  }
  return "?";
}

TaskKind ParseTask(const std::string& name) {
  for (TaskKind k : {TaskKind::Offsets, TaskKind::Reverse, TaskKind::Sort, TaskKind::Induction})
    if (name == ToString(k)) return k;
  throw Error("Unknown task '" + name +
              "'. The tasks are: offsets (predict the tokens 1..K back: one head per offset), reverse (the "
              "sequence backwards: an anti-diagonal head), sort (the tokens in order), induction (continue a "
              "repeated sequence: needs 2 layers).");
}

std::string Explain(const TaskSpec& t) {
  switch (t.kind) {
    case TaskKind::Offsets:
      return "At every position, predict the token 1, 2, ... " + std::to_string(t.offsets) +
             " places back. A head attends to one place at a time, so each offset needs a head of its own: with " +
             std::to_string(t.offsets) + " heads each head learns one offset; with 1 head only one offset is solved.";
    case TaskKind::Reverse:
      return "At position i, predict the token at position seq-1-i: each query must attend to its mirror position, "
             "an anti-diagonal pattern.";
    case TaskKind::Sort:
      return "The first half is distinct random tokens, the second half the same tokens sorted; predict each next "
             "sorted token: a head must find the smallest token larger than the current one.";
    case TaskKind::Induction:
      return "A random sequence is repeated once; in the repeat, predict the next token. Layer 0 learns a "
             "previous-token head, layer 1 an induction head that finds where the current token was before and "
             "copies what followed it (Olsson et al. 2022). One layer cannot do it.";
  }
  return "";
}

void Validate(const TaskSpec& t) {
  auto fail = [](const std::string& m) { throw Error(m); };
  // As many tokens as a model may have (the shipped language model has 4000); the
  // step's memory check bounds the logits they cost.
  if (t.vocab < 2 || t.vocab > ModelLimits::kMaxVocab)
    fail("The task's vocabulary must have 2 to " + std::to_string(ModelLimits::kMaxVocab) + " tokens; got " +
         std::to_string(t.vocab) + ".");
  if (t.seq < 2 || t.seq > 256)
    fail("The task's sequences must have 2 to 256 tokens; got " + std::to_string(t.seq) + ".");
  switch (t.kind) {
    case TaskKind::Offsets:
      if (t.offsets < 1 || t.offsets > 8 || t.offsets >= t.seq)
        fail("offsets K = " + std::to_string(t.offsets) + " must be 1 to 8 and smaller than seq = " +
             std::to_string(t.seq) + ": each position predicts the tokens 1..K back.");
      break;
    case TaskKind::Sort:
    case TaskKind::Induction:
      if (t.seq % 2 != 0 || t.seq < 4)
        fail(std::string("The ") + ToString(t.kind) + " task needs an even seq of at least 4 (two halves); got " +
             std::to_string(t.seq) + ".");
      break;
    case TaskKind::Reverse: break;
  }
}

int NumTargets(const TaskSpec& t) { return t.kind == TaskKind::Offsets ? t.offsets : 1; }

std::vector<std::string> TaskVocab(const TaskSpec& t) {
  std::vector<std::string> v;
  for (int i = 0; i < t.vocab; ++i) v.push_back(std::to_string(i));
  return v;
}

Mask TaskMask(const TaskSpec& t) { return t.kind == TaskKind::Reverse ? Mask::None : Mask::Causal; }

std::string TaskJson(const TaskSpec& t) {
  return std::string("{\"name\": \"") + ToString(t.kind) + "\", \"offsets\": " + std::to_string(t.offsets) +
         ", \"vocab\": " + std::to_string(t.vocab) + ", \"seq\": " + std::to_string(t.seq) + "}";
}

int ExpectedKey(const TaskSpec& t, int target, int i, const std::vector<int>& tokens) {
  const int n = static_cast<int>(tokens.size()), half = n / 2;
  switch (t.kind) {
    case TaskKind::Offsets: return i - (target + 1) >= 0 ? i - (target + 1) : -1;
    case TaskKind::Reverse: return n - 1 - i;
    case TaskKind::Sort: {
      if (i < half - 1 || i >= n - 1) return -1;
      // the input position holding the next sorted token
      const int want = tokens[i + 1];
      for (int j = 0; j < half; ++j)
        if (tokens[j] == want) return j;
      return -1;
    }
    case TaskKind::Induction:
      // the position after the previous occurrence of this token
      for (int j = i - 1; j >= 0; --j)
        if (tokens[j] == tokens[i]) return j + 1 < i ? j + 1 : -1;
      return -1;
  }
  return -1;
}

void HeldOutBatch(const TaskSpec& t, std::uint64_t seed, std::uint64_t index, int batch, Batch& out) {
  MakeBatch(t, seed + 1, index, batch, out);
}

void MakeBatch(const TaskSpec& t, std::uint64_t seed, std::uint64_t index, int batch, Batch& out) {
  Validate(t);
  const int S = t.seq, K = NumTargets(t), V = t.vocab, half = S / 2;
  out.batch = batch;
  out.seq = S;
  out.num_targets = K;
  out.tokens.assign(static_cast<std::size_t>(batch) * S, 0);
  out.targets.assign(static_cast<std::size_t>(batch) * S * K, -1);
  detail::SplitMix64 rng(detail::StreamSeed(seed ^ detail::Mix64(index + 1), "task batch"));
  auto draw = [&](int n) { return static_cast<int>(rng.Uniform() * n); };
  std::vector<int> pool(V);
  for (int b = 0; b < batch; ++b) {
    int induction_start = S;  // induction: where the repeat begins
    std::int32_t* x = out.tokens.data() + static_cast<std::size_t>(b) * S;
    std::int32_t* y = out.targets.data() + static_cast<std::size_t>(b) * S * K;
    switch (t.kind) {
      case TaskKind::Offsets:
      case TaskKind::Reverse:
        for (int i = 0; i < S; ++i) x[i] = draw(V);
        break;
      case TaskKind::Sort:
        // Distinct tokens where the vocabulary allows, so the next sorted token has
        // one place to be read from.
        std::iota(pool.begin(), pool.end(), 0);
        for (int i = 0; i < half; ++i) {
          if (V >= half) {
            std::swap(pool[i], pool[i + draw(V - i)]);
            x[i] = pool[i];
          } else {
            x[i] = draw(V);
          }
        }
        std::copy(x, x + half, x + half);
        std::sort(x + half, x + S);
        break;
      case TaskKind::Induction: {
        // A segment of m distinct tokens, repeated, after a filler of other tokens.
        // m varies per sequence, so "copy the token m places back" is no fixed offset:
        // the model must find where the current token was before (content, not place).
        const int m = std::max(2, half / 2 + draw(half - half / 2 + 1));
        std::iota(pool.begin(), pool.end(), 0);
        for (int i = 0; i < V; ++i) std::swap(pool[i], pool[i + draw(V - i)]);
        const int filler = S - 2 * m;
        const int seg_vocab = std::min(V, m);  // tokens pool[0, m) form the segment
        for (int i = 0; i < filler; ++i) x[i] = V > seg_vocab ? pool[seg_vocab + draw(V - seg_vocab)] : draw(V);
        for (int i = 0; i < m; ++i) x[filler + i] = x[filler + m + i] = pool[i % seg_vocab];
        induction_start = S - m;
        break;
      }
    }
    for (int i = 0; i < S; ++i) {
      switch (t.kind) {
        case TaskKind::Offsets:
          for (int k = 0; k < K; ++k) y[i * K + k] = i - (k + 1) >= 0 ? x[i - (k + 1)] : -1;
          break;
        case TaskKind::Reverse: y[i] = x[S - 1 - i]; break;
        case TaskKind::Sort: y[i] = i >= half - 1 && i < S - 1 ? x[i + 1] : -1; break;
        case TaskKind::Induction: y[i] = i >= induction_start && i < S - 1 ? x[i + 1] : -1; break;
      }
    }
  }
}

}  // namespace mha
