// `mhaviz trace`: run the core and print the shape-flow table; optionally export
// every tensor (.npz) and the attention weights (JSON).
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "cli/ablate_apply.hpp"
#include "cli/trace_norms.hpp"
#include "lm/model_trace.hpp"
#include "io/files.hpp"
#include "options/terminal.hpp"
#include "options/table.hpp"
#include "lm_trace.hpp"
#include "mha/flash.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {
namespace {

const char* kTraceAbout =
    "Runs one multi-head attention layer on a sentence and prints the shape-flow table:\n"
    "every step with its shape (batch axis first), its parameters and its FLOPs.";
const char* kTraceFooter =
    "Exit status: 0 ok, 1 runtime error (files), 2 usage error (flags). Outputs are written\n"
    "atomically: on failure no file is left behind.";

std::string FlowTable(const std::vector<FlowRow>& rows) {
  std::vector<std::vector<std::string>> cells;
  cells.push_back({"step", "computes", "shape (batch, ...)", "parameters", "FLOPs"});
  long long flops = 0, params = 0;
  for (const auto& r : rows) {
    cells.push_back({r.step, r.formula, ShapeString(r.shape), r.params, Thousands(r.flops)});
    flops += r.flops;
    params += r.param_count;
  }
  cells.push_back({"total", "", "", Thousands(params) + " learned numbers", Thousands(flops)});
  TextTable table{cells, {false, false, false, false, true}, /*rule_above_last=*/true};
  return table.Str();
}

}  // namespace

std::string FlashNote(const Config& c, int seq, int seq_kv, bool files) {
  std::ostringstream os;
  os << "attention flash: every head's scores were computed in tiles of Br x Bc = " << FlashBr(c) << " x " << FlashBc(c)
     << " (query rows x keys) with an online softmax; no seq x seq_kv tensor was kept (the standard "
        "path keeps "
     << Thousands(static_cast<long long>(StandardAttentionBytes(c, seq, seq_kv))) << " bytes of scores and attn here)"
     << (files ? ", so the files hold no scores and no attn.\n" : ".\n");
  return os.str();
}

std::string Thousands(long long n) {
  std::string s = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return n < 0 ? "-" + s : s;
}

void DeclareTraceFlags(CLI::App& app, TraceArgs& t) {
  AddRunFlags(app, t.run);
  TextFlag(app, "--npz", t.npz_path,
           "every tensor as float32 C-order arrays (x, W_q, ..., q, k, v, scores, attn,\n"
           "context, concat, attn_out, out; with --block encoder also ffn_W1, ffn_b1, ffn_W2,\n"
           "ffn_b2, ln2_gamma, ln2_beta, ffn_hidden, ffn_out, ffn_residual, block_out);\n"
           "numpy.load opens it",
           "--npz needs a file name, e.g. --npz out.npz.")
      ->type_name("OUT.npz")
      ->group(kOutputGroup);
  TextFlag(app, "--json", t.json_path, "tokens, config, shape-flow table and attention weights",
           "--json needs a file name, e.g. --json out.json.")
      ->type_name("OUT.json")
      ->group(kOutputGroup);
  app.add_flag("-q,--quiet", t.quiet, "do not print the table")->group(kOutputGroup);
  AttentionFlag(app, [&t](Attention a) {
    t.run.cfg.attention = a;
    t.run.cfg_edits.push_back([a](Config& c) { c.attention = a; });
    t.attention_given = true;
  })->group(kComputeGroup);
  options::AddModelFlags(app, t.source);
  IntFlag(
      app, "--top-k", 1, 100, [&t](int v) { t.source.top_k = v; },
      "a language model's K likeliest next pieces at every position (with --model)")
      ->group("A trained model (mhaviz train)");
}

TraceArgs ParseTraceArgs(const std::vector<std::string>& argv) {
  TraceArgs t = ParseCommandArgs("trace", kTraceAbout, kTraceFooter, DeclareTraceFlags, argv);
  if (!t.help)
    options::CheckModelFlags(argv, t.source,
                             {"--npz", "--json", "-q", "--quiet", "--sentence", "-s", "--top-k", "--attention"});
  if (!t.help && t.run.ablate_given && !t.source.model.empty() && !t.run.input_npz.empty())
    throw UsageError("--input gives a seeded layer its input; with --model the checkpoint reads tokens.");
  // Both are staged, then renamed one after the other: the second would silently win,
  // however the same file is spelled (./o.x, a symlink, a hard link).
  if (!t.help) {
    try {
      io::CheckDistinctOutputs({{"--npz", t.npz_path}, {"--json", t.json_path}});
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }
  return t;
}

namespace {

// --npz and --json, all or none. The .npz is streamed from the trace's own memory into
// the temporary file: a 2 GiB trace is never copied into an archive in memory.
// `held`: the bytes of traces alive beside t (all layers of a model), for the norms' room.
void WriteTraceFiles(const TraceArgs& ta, const Trace& t, const std::string& notice, double held) {
  if (ta.npz_path.empty() && ta.json_path.empty()) return;
  const TraceNorms norms = NormsFor(t, held);
  if (!norms.note.empty()) std::cerr << "mhaviz trace: note: " << norms.note << "\n";
  std::vector<TensorView> tensors = Tensors(t);
  AppendNorms(t, norms, tensors);
  std::vector<io::Output> files;
  if (!ta.npz_path.empty()) files.push_back({ta.npz_path, [&tensors](io::Sink& s) { io::WriteNpz(s, tensors); }});
  std::string json;
  if (!ta.json_path.empty()) {
    json = io::TraceJson(t, notice, norms.json && norms.norms.size() > 0 ? &norms.norms : nullptr);
    files.push_back({ta.json_path, [&json](io::Sink& s) { s.Write(json.data(), json.size()); }});
  }
  io::WriteOutputsAtomic(files);
}

// trace --model: the chosen layer's Trace of a trained model, written and printed as a
// sentence's trace is.
int TraceModel(const TraceArgs& ta) {
  if (WantsLanguageModel(ta)) return TraceLanguageModel(ta);
  lm::LoadedModelTrace m = lm::LoadForTrace(ta.source.model, ta.source.tokens, ta.source.example, ta.source.layer,
                                            TraceHowFor(ta.run, ta.source.model));
  const Trace& t = m.Layer();
  if (!ta.json_path.empty() && t.cfg.attention == Attention::Standard) io::CheckJsonSize(t.cfg, t.seq, t.seq_kv);
  WriteTraceFiles(ta, t, "", EstimateModelRun(m.model.cfg, t.seq).total());
  if (ta.quiet) return 0;
  std::cout << "tokens (" << t.seq << "):";
  for (const auto& tok : t.in.tokens) std::cout << " [" << TerminalToken(tok) << "]";
  const Config& c = t.cfg;
  std::cout << "\ntrained model " << TerminalSafe(ta.source.model) << ": layer " << m.layer << " of "
            << m.model.cfg.num_layers << ", d_model = " << c.d_model << ", num_heads = " << c.num_heads
            << ", num_kv_heads = " << c.kv_heads() << ", head_dim = d_k = " << c.head_dim() << ", mask "
            << ToString(c.mask) << ", norm " << ToString(c.norm) << ", positional " << ToString(m.model.cfg.positional)
            << "\n"
            << "(x is the layer's input: "
            << (m.layer == 0 ? "tok_embed + positional encoding" : "the previous layer's output") << ")\n";
  const std::string banner = AblationBanner(ta.run, m.model.cfg.num_layers, c.num_heads);
  if (!banner.empty()) std::cout << banner << "\n";
  std::cout << "\n" << FlowTable(t.flow);
  if (c.attention == Attention::Flash)
    std::cout << FlashNote(c, t.seq, t.seq_kv, !ta.npz_path.empty() || !ta.json_path.empty());
  if (!ta.npz_path.empty()) std::cout << "wrote " << TerminalSafe(ta.npz_path) << "\n";
  if (!ta.json_path.empty()) std::cout << "wrote " << TerminalSafe(ta.json_path) << "\n";
  return 0;
}

}  // namespace

int TraceCommand(const std::vector<std::string>& argv) {
  return Guard("trace", [&] {
    const TraceArgs ta = ParseTraceArgs(argv);
    if (ta.help) {
      std::cout << ta.help_text;
      return 0;
    }
    const std::string& npz_path = ta.npz_path;
    const std::string& json_path = ta.json_path;
    const bool quiet = ta.quiet;
    io::CheckOutputs({{"--npz", npz_path}, {"--json", json_path}});  // before the model is read or run
    if (!ta.source.model.empty()) return TraceModel(ta);
    Prepared p = Prepare(ta.run);
    if (!p.notice.empty()) std::cerr << "mhaviz trace: note: " << TerminalSafe(p.notice, true) << "\n";
    if (!json_path.empty() && p.cfg.attention == Attention::Standard) {
      // Refused before computing anything: the flags must change.
      try {
        io::CheckJsonSize(p.cfg, static_cast<int>(p.in.x.rows()),
                          static_cast<int>(p.in.cross() ? p.in.memory.rows() : p.in.x.rows()));
      } catch (const Error& e) {
        throw UsageError(e.what());
      }
    }
    AblateOwnLayer(ta.run, p.cfg, p.weights, p.in);
    const Trace t = Forward(p.cfg, p.weights, p.in);
    // Files first (all or none): if a write fails, nothing is printed as if it had worked.
    WriteTraceFiles(ta, t, p.notice, static_cast<double>(EstimateTraceBytes(t.cfg, t.seq, t.seq_kv)));
    if (!quiet) {
      std::cout << "tokens (" << t.seq << "):";
      for (const auto& tok : t.in.tokens) std::cout << " [" << TerminalToken(tok) << "]";
      std::cout << "\n";
      if (t.in.cross()) {
        std::cout << "memory tokens (" << t.seq_kv << "):";
        for (const auto& tok : t.in.memory_tokens) std::cout << " [" << TerminalToken(tok) << "]";
        std::cout << "\n";
      }
      const Config& c = t.cfg;
      std::cout << (t.in.cross() ? "cross" : "self") << "-attention: d_model = " << c.d_model
                << ", num_heads = " << c.num_heads << ", num_kv_heads = " << c.kv_heads()
                << ", head_dim = d_k = " << c.head_dim() << ", mask " << ToString(c.mask) << ", norm "
                << ToString(c.norm) << (c.scale ? "" : ", no scaling") << ", seed " << c.seed << "\n";
      const std::string banner = AblationBanner(ta.run, 1, c.num_heads);
      if (!banner.empty()) std::cout << banner << "\n";
      std::cout << "\n";
      std::cout << FlowTable(t.flow);
      if (c.attention == Attention::Flash)
        std::cout << FlashNote(c, t.seq, t.seq_kv, !npz_path.empty() || !json_path.empty());
      if (!npz_path.empty()) std::cout << "wrote " << TerminalSafe(npz_path) << "\n";
      if (!json_path.empty()) std::cout << "wrote " << TerminalSafe(json_path) << "\n";
    }
    return 0;
  });
}

}  // namespace mha::cli
