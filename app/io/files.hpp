// File formats the app reads and writes, none of which needs a display:
// .npz (numpy archives, through libzip), JSON (nlohmann), and atomic file writes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mha/mha.hpp"

namespace mha::io {

// Thrown when a stop signal (SIGINT, SIGTERM, ...) the application handles ends work
// early: an abandoned write, or a long set-up. Commands exit with 128 + signal (130
// for Ctrl-C), as they do when a run they stop at a step boundary ends.
struct Interrupted : Error {
  Interrupted(const std::string& what, int sig) : Error(what), signal(sig) {}
  int signal;
};
// Removes the temporary files of the atomic writes in flight (async-signal-safe: for a
// handler that ends the process at once).
void RemoveStagedFiles();

// Where an output's bytes go as they are produced: the temporary file of an atomic
// write, or a string.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void Write(const char* data, std::size_t n) = 0;
};
struct StringSink : Sink {
  std::string bytes;
  void Write(const char* data, std::size_t n) override { bytes.append(data, n); }
};

// One output of WriteOutputsAtomic: its path, and what writes its bytes into the
// temporary file (called once; a large output need never exist whole in memory).
struct Output {
  std::string path;
  std::function<void(Sink&)> write;
};

// Writes every output atomically: each goes to a short-named temporary file in its
// target's directory, and only when all are complete are they renamed into place, after
// every rename's preconditions were checked, so a failure changes no output. An existing
// file keeps its mode (and owner, where permitted); a symlink, even a dangling one, is
// written through to its target; a device, FIFO or /dev/stdout is written in place. Two
// outputs that are one file (however spelled) are refused (OutputClash). SIGINT, SIGTERM, SIGHUP and
// SIGQUIT during the writes (even a write blocked on a full pipe) abandon them: the
// temporary files are removed and the signal then acts as usual; during the renames they
// wait until the renames are done. Throws mha::Error naming the path and the reason.
void WriteOutputsAtomic(const std::vector<Output>& files);
void WriteFilesAtomic(const std::vector<std::pair<std::string, std::string>>& files);
void WriteFileAtomic(const std::string& path, const std::string& bytes);
// Two outputs of one command that are one file: the user's choice of names, a usage
// error (exit 2, options::Guard) however the names are spelled.
struct OutputClash : Error {
  using Error::Error;
};
// Throws OutputClash if two of the (label, path) outputs are the same file: the same
// path spelled two ways, a symlink to the other, or a hard link. `label` names the flag.
void CheckDistinctOutputs(const std::vector<std::pair<std::string, std::string>>& labelled_paths);
// The preflight of a command's outputs, before any long work: every (label, path) with
// a path (empty ones are skipped: a flag not given) must be writable as the atomic write
// will write it, after following symlinks: not a directory, in an existing directory
// that takes a new file (a temporary file is created there and removed: this also
// catches read-only file systems, and works as root), replaceable if it exists; and no
// two may be one file (OutputClash). Throws mha::Error naming the flag and the reason.
void CheckOutputs(const std::vector<std::pair<std::string, std::string>>& labelled_paths);

// Reads a whole file (at most max_bytes); throws mha::Error if missing or too big.
// Never reads more than max_bytes + 1 bytes, so an endless source (/dev/zero, a pipe)
// cannot exhaust memory. `check_head`, if set, sees the first bytes (up to 8) as soon
// as they arrive and may throw, so a wrong kind of file is refused before it is read.
std::string ReadFile(const std::string& path, std::size_t max_bytes = std::size_t(1) << 30,
                     const std::function<void(std::string_view head)>& check_head = nullptr);
// Reads at most max_bytes of a file ("-" is standard input); *truncated tells if there
// was more. Throws mha::Error if it cannot be read.
std::string ReadFilePrefix(const std::string& path, std::size_t max_bytes, bool* truncated);

// One array read from a .npy / .npz: converted to float32, C order.
struct Array {
  std::vector<std::int64_t> shape;
  std::vector<float> data;
  std::string source_dtype;  // e.g. "<f8" if it was converted
  // An integer the array holds beyond float32's exact range (|v| >= 2^24), in decimal
  // as stored (a uint64 2^63 + 5 stays that, not a rounded float); "" if none.
  std::string big_integer;
};

// An array of any plain dtype, already in its little-endian bytes: '|u1' (a checkpoint's
// UTF-8 config), '<i4' (token ids), '<f4'.
struct RawArray {
  std::string name;
  std::string descr;
  std::vector<std::int64_t> shape;
  std::string data;
};

// What an .npy header says, read before the data.
struct NpyInfo {
  std::string descr;
  bool fortran = false;
  std::vector<std::int64_t> shape;
  std::int64_t count() const;
};
// How a reader of an .npz says what it needs, so the rest is never inflated.
struct NpzFilter {
  // Which keys to read (all if unset).
  std::function<bool(const std::string& key)> wanted;
  // Sees each wanted member's header before its data are inflated; throws mha::Error
  // to refuse the file (a shape the caller cannot use).
  std::function<void(const std::string& key, const NpyInfo& info)> check;
};

// Writes float32 arrays (and any raw arrays after them) as a .npz (an uncompressed zip
// of .npy files, the same as numpy.savez writes) into `out`, member by member from the
// arrays' own memory. `force_zip64` writes zip64 records even for small archives (the
// tests check readers accept them). Throws mha::Error on failure.
void WriteNpz(Sink& out, const std::vector<TensorView>& tensors, const std::vector<RawArray>& raw = {},
              bool force_zip64 = false);
std::string EncodeNpz(const std::vector<TensorView>& tensors, const std::vector<RawArray>& raw = {});
// Parses .npz bytes. float64 and integer arrays are converted to float32; anything
// else (strings, objects, complex) is refused with a clear mha::Error. Keys are numpy's:
// the member names without ".npy". Every member's header is checked (the caps, then
// `filter`) before its data are inflated; members the filter does not want are skipped.
std::map<std::string, Array> DecodeNpz(const std::string& bytes, const std::string& what, const NpzFilter& filter = {});
std::map<std::string, Array> LoadNpz(const std::string& path, const NpzFilter& filter = {});

// The .npy encoding of one array (header + data), and a header alone.
std::string EncodeNpy(const TensorView& t);
std::string NpyHeader(const std::string& descr, const std::vector<std::int64_t>& shape);
Array DecodeNpy(const std::string& bytes, const std::string& what);

// Input x (and memory, if present) from an .npz with key "x" of shape (seq, d_model)
// or (1, seq, d_model). Token labels become "#0", "#1", ...
Inputs InputsFromNpz(const std::map<std::string, Array>& npz, const std::string& path);
// Weights from an .npz: W_q, W_k, W_v, W_o required; b_*, ln_gamma, ln_beta optional
// (biases default to 0, gamma to 1, beta to 0). `cfg` gives the expected shapes;
// ln_eps in the file overrides cfg->ln_eps. With cfg->block == Encoder also ffn_W1,
// ffn_W2 (required) and ffn_b1, ffn_b2, ln2_gamma, ln2_beta (optional); cfg->d_ff is
// read from ffn_W1 if it is 0.
Weights WeightsFromNpz(const std::map<std::string, Array>& npz, const std::string& path, Config* cfg);
// The same, freeing each array of `npz` as soon as it is copied (peak memory: the
// weights plus one array, not the weights twice).
Weights WeightsFromNpz(std::map<std::string, Array>&& npz, const std::string& path, Config* cfg);

// What InputsFromNpz and WeightsFromNpz read of a file, for LoadNpz: only their keys,
// each refused at its header if it holds more numbers than the configuration (`cfg`,
// if known; else the largest accepted) can use.
NpzFilter InputsFilter(const std::string& path);
NpzFilter WeightsFilter(const std::string& path, const Config* cfg);
// LoadNpz with InputsFilter, then InputsFromNpz.
Inputs LoadInputs(const std::string& path);

// The JSON document of a trace: tokens, config, shape-flow table, attention weights,
// and, if given, the value-weighted norms (mha/influence.hpp) as "attn_norms".
// Throws mha::Error (see CheckJsonSize) if the attention weights are too many for JSON.
std::string TraceJson(const Trace& t, const std::string& notice, const Mat* attn_norms = nullptr);
// The attention weights as JSON text take ~25 bytes each, and the document tree more in
// memory, so --json is capped (1024 tokens x 4 heads fit); .npz has no such cap.
inline constexpr std::int64_t kMaxJsonAttention = std::int64_t(1) << 22;
// Throws mha::Error with a teaching message if a trace of this shape is over the cap.
void CheckJsonSize(const Config& cfg, int seq, int seq_kv);

}  // namespace mha::io
