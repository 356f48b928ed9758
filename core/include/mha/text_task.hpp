// Next-token prediction on running text, already turned into token ids: the task of a
// causal language model. Core sees ids only; reading a corpus and a tokenizer is the
// app's (app/lm).
//
//   training    windows of seq + 1 consecutive ids at random starts; the window's first
//               seq ids are the tokens and its last seq ids the targets (at position i
//               predict the id at i + 1), with a causal mask so position i sees only
//               ids up to i.
//   validation  the held-out stream cut into consecutive windows that do not overlap:
//               every held-out id (but the first of each window) is predicted once.
#pragma once

#include <cstdint>
#include <vector>

#include "mha/train.hpp"

namespace mha {

// Throws mha::Error with a teaching message if the stream cannot make windows of seq
// tokens (fewer than seq + 1 ids) or holds an id outside [0, vocab).
void CheckTokenStream(const std::vector<std::int32_t>& ids, int vocab, int seq, const char* what);

// `batch` random windows, deterministically from (seed, index): batch `index` of a run
// is the same on every machine. A share `repeat` of them (0 to 1) are repeats: a span A
// of L pieces (L uniform in [4, seq / 2]) followed by A again and then the text that
// followed A, so that in the second copy the next piece is always the one that followed
// the current piece last time: the incentive for an induction head, which running text
// of a few dozen pieces rarely gives. repeat = 0 draws exactly the plain windows.
void MakeWindowBatch(const std::vector<std::int32_t>& ids, int seq, std::uint64_t seed, std::uint64_t index, int batch,
                     Batch& out, double repeat = 0);

// How many non-overlapping windows of seq + 1 ids the stream holds (consecutive windows
// share one id: the last target of one is the first token of the next).
int CountWindows(const std::vector<std::int32_t>& ids, int seq);
// Windows first .. first + count - 1 of those, in order.
void MakeConsecutiveBatch(const std::vector<std::int32_t>& ids, int seq, int first, int count, Batch& out);

// The mean next-token loss and accuracy over every window of the stream (at most
// max_windows of them, from the start; 0: all), `batch` windows per forward pass.
// `ablate` (one per layer, see mha/ablation.hpp), if given, knocks heads out.
StepStats EvaluateStream(Trainer& trainer, const Model& m, const std::vector<std::int32_t>& ids, int seq, int batch,
                         int max_windows = 0, const std::vector<HeadAblation>* ablate = nullptr);

}  // namespace mha
