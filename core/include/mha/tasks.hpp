// Synthetic tasks on which heads visibly specialise, their data generated on the fly
// from a seed. Each says in one sentence what a head must learn to solve it.
//
//   offsets    random tokens; at each position predict the token 1 back, 2 back, ...
//              K back (one target per offset). One attention head can fetch one
//              position, so with an attention-only layer 1 head solves offset 1 but
//              not offset 2, and K heads solve all, one head per offset.
//   reverse    predict, at position i, the token at position seq-1-i: the anti-diagonal.
//   sort       the first half is random tokens, the second half the same tokens sorted;
//              predict each next sorted token (causal): attend to the next larger token.
//   induction  filler, then a segment of distinct tokens repeated once
//              ([u v A B C A B C]; the segment's length varies); in the repeat predict
//              the next token: find where the current token was before and copy what
//              followed it (Olsson et al. 2022). Needs 2 layers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mha/config.hpp"
#include "mha/model.hpp"
#include "mha/train.hpp"

namespace mha {

enum class TaskKind { Offsets, Reverse, Sort, Induction };

struct TaskSpec {
  TaskKind kind = TaskKind::Offsets;
  int offsets = 2;  // K, for offsets
  int vocab = 11;   // distinct content tokens
  int seq = 16;     // sequence length
};

const char* ToString(TaskKind k);
// Throws mha::Error naming the known tasks.
TaskKind ParseTask(const std::string& name);
// One sentence: what the task asks and what a head must learn to solve it.
std::string Explain(const TaskSpec& t);
// Throws mha::Error if the task's sizes are impossible (e.g. sort with more positions
// than tokens, offsets K >= seq).
void Validate(const TaskSpec& t);

int NumTargets(const TaskSpec& t);
// The task's vocabulary: "0", "1", ... plus any separator it uses.
std::vector<std::string> TaskVocab(const TaskSpec& t);
// The mask the task needs: causal where a position must not see its answer.
Mask TaskMask(const TaskSpec& t);
// The task as JSON text (for ModelConfig::task): {"name":..., "offsets":..., ...}.
std::string TaskJson(const TaskSpec& t);
// What the attention of a head solving target k should look like, for labels:
// the key position the query at position i should attend to, or -1.
int ExpectedKey(const TaskSpec& t, int target, int i, const std::vector<int>& tokens);

// Fills `out` with `batch` fresh sequences, deterministically from (seed, index):
// batch index n of a run is the same on every machine.
void MakeBatch(const TaskSpec& t, std::uint64_t seed, std::uint64_t index, int batch, Batch& out);
// The held-out examples of a task trained with `seed`: the same generator on a seed
// stream training never draws from (seed + 1), so accuracy on them is not memorised.
// The one definition: the trainer evaluates on them, `mhaviz trace --model --example N`
// and the app show example N of them.
void HeldOutBatch(const TaskSpec& t, std::uint64_t seed, std::uint64_t index, int batch, Batch& out);

}  // namespace mha
