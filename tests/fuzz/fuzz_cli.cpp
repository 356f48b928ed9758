// libFuzzer target: the command-line parsers of the headless commands. The input is
// split into argv (on NUL if it has one, else on newlines); the first word picks the
// command. Parsing may only throw UsageError or mha::Error. A parse that succeeds is
// then prepared and run when it is small and reads no files; nothing is ever written.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/prepare.hpp"
#include "fuzz_common.hpp"

namespace {

using mha::options::RunOptions;

std::vector<std::string> SplitArgs(const std::uint8_t* data, std::size_t size) {
  const char* p = reinterpret_cast<const char*>(data);
  const char sep = std::memchr(p, '\0', size) ? '\0' : '\n';
  std::vector<std::string> out;
  std::string cur;
  for (std::size_t i = 0; i < size; ++i) {
    if (p[i] == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += p[i];
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Runs what the command would compute, if it is cheap and touches no file.
void PrepareAndRun(const RunOptions& o) {
  const mha::Config& c = o.cfg;
  if (!o.input_npz.empty() || !o.weights_npz.empty() || !o.sentence_file.empty()) return;
  if (c.d_model > 64 || c.num_heads > 64) return;
  // The attention maps grow as num_heads x seq x seq_kv: keep them small.
  const auto count = [](const std::string& s) { return mha::Tokenize(s, mha::Limits::kMaxTokens).tokens.size(); };
  if (count(o.sentence) > 64 || count(o.memory) > 64) return;
  try {
    const mha::cli::Prepared p = mha::cli::Prepare(o);
    const mha::Trace t = mha::Forward(p.cfg, p.weights, p.in);
    FUZZ_CHECK(t.attn.allFinite() && t.out.allFinite(), "non-finite attn/out");
    for (Eigen::Index r = 0; r < t.attn.rows(); ++r) {
      const float s = t.attn.row(r).sum();
      FUZZ_CHECK(std::abs(s - 1.0f) < 1e-4f, "attn row %ld sums to %g", static_cast<long>(r), double(s));
    }
  } catch (const mha::options::UsageError&) {
  } catch (const mha::Error&) {
  }
}

// One entry per command whose parser is fuzzed. Export is parsed and prepared but
// never rendered or written.
struct Command {
  const char* name;
  std::function<void(const std::vector<std::string>&)> parse_and_run;
};

const Command kCommands[] = {
    {"trace",
     [](const std::vector<std::string>& args) {
       const mha::cli::TraceArgs t = mha::cli::ParseTraceArgs(args);
       if (!t.help) PrepareAndRun(t.run);
     }},
    {"export",
     [](const std::vector<std::string>& args) {
       const mha::cli::ExportArgs e = mha::cli::ParseExportArgs(args);
       FUZZ_CHECK(e.help || !e.png_path.empty() || !e.svg_path.empty(), "export without an output parsed");
       FUZZ_CHECK(e.scale == 0 || (e.scale >= 1 && e.scale <= 8), "scale %d accepted", e.scale);
       if (!e.help) PrepareAndRun(e.run);
     }},
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  std::vector<std::string> args = SplitArgs(data, size);
  if (args.empty()) return 0;
  const std::string cmd = args[0];
  args.erase(args.begin());
  for (const Command& c : kCommands) {
    // An unknown first word still fuzzes the first parser, with that word as a flag.
    if (cmd != c.name && &c != &kCommands[0]) continue;
    std::vector<std::string> a = args;
    if (cmd != c.name) a.insert(a.begin(), cmd);
    try {
      c.parse_and_run(a);
    } catch (const mha::options::UsageError& e) {
      FUZZ_CHECK(std::strlen(e.what()) > 0, "empty usage message");
    } catch (const mha::Error& e) {
      FUZZ_CHECK(std::strlen(e.what()) > 0, "empty error message");
    }
  }
  return 0;
}
