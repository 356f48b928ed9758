// What a language model's heads were measured to do, in one value every consumer reads
// (the views, the presentation header, the exports, through lm/head_names.hpp):
// - each head's positional pattern on the validation text (lm/head_labels.hpp:
//   previous-token, induction on repeated halves, ...);
// - the minimal pairs: each phenomenon's accuracy, the head that looks most at its cue,
//   and the proof table (lm/pairs_table.hpp): every head knocked out alone (zero
//   ablation), with the drops beyond chance marked.
//
// Measuring takes most of a minute of CPU (nine passes over the pairs). So the shipped
// model's evidence ships beside its checkpoint (mhaviz-small.npz ->
// mhaviz-small.labels.json, written by scripts/measure_head_labels.sh), and another
// model's is measured once on a worker and kept in a cache keyed by its checkpoint's
// hash ($XDG_CACHE_HOME/mhaviz/head-labels, default ~/.cache/mhaviz/head-labels).
// Either is used only while the checkpoint, the pairs and the validation text it was
// measured on are the same files, byte for byte (their hashes are in it).
//
//   std::optional<HeadEvidence> e = FindHeadEvidence(lm);       // instant: shipped or cached
//   if (!e) e = MeasureAndCache(lm, progress);                  // on a worker
//   HeadLabel l = NameHead(*e, 1, 0);                           // lm/head_names.hpp
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lm/language_model.hpp"
#include "lm/pairs_table.hpp"
#include "mha/heads.hpp"

namespace mha::lm {

// Where a measurement's inputs came from: the file's name (never its directory, so a
// shipped file names no machine's paths) and a hash of its bytes.
struct MeasuredFile {
  std::string name, hash;
  bool operator==(const MeasuredFile& o) const { return name == o.name && hash == o.hash; }
};

struct HeadEvidence {
  MeasuredFile checkpoint, pairs, validation;
  int windows = 0;                    // validation windows the patterns were measured on
  std::vector<HeadProfile> profiles;  // every head's pattern, (layer, head) order
  KnockoutTable table;                // zero ablation, every head; table.plain: the attention on cues
};

// A file's hash: FNV-1a (64 bits) and CRC-32 of its bytes, 24 hex digits. A cache key,
// not a signature. Throws mha::Error if it cannot be read.
std::string FileHash(const std::string& path);
// The pairs a model's jobs are measured on: pairs.jsonl in assets/corpus beside the
// checkpoint's assets/models, else the app's. Throws mha::Error saying where it looked.
std::string FindPairsFile(const std::string& checkpoint);
// mhaviz-small.npz -> mhaviz-small.labels.json, beside it.
std::string ShippedEvidencePath(const std::string& checkpoint);
// The cache's directory (not created here).
std::string EvidenceCacheDir();

// Measures everything on the model's own validation text and pairs (FindValidationText,
// FindPairsFile). `progress` sees each knock-out (and may throw to cancel).
HeadEvidence MeasureHeadEvidence(const LanguageModel& lm, const TableProgress& progress = {});

nlohmann::json EvidenceJson(const HeadEvidence& e);
// Reads what EvidenceJson wrote; throws mha::Error if it is not such a document or does
// not fit a model of num_layers x num_heads.
HeadEvidence EvidenceFromJson(const nlohmann::json& j, int num_layers, int num_heads);
// A file of it, read bounded (size and nesting) before it is parsed.
HeadEvidence LoadEvidence(const std::string& path, int num_layers, int num_heads);
// Written atomically.
void SaveEvidence(const HeadEvidence& e, const std::string& path);

// The shipped file beside the checkpoint, then the cache's, if it was measured on these
// very files; else nullopt. `where` (if given) says which file was read, or why none was.
std::optional<HeadEvidence> FindHeadEvidence(const LanguageModel& lm, std::string* where = nullptr);
// Measures and stores in the cache (a cache that cannot be written is not an error: the
// evidence is still returned).
HeadEvidence MeasureAndCache(const LanguageModel& lm, const TableProgress& progress = {});

}  // namespace mha::lm
