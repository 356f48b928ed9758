#include "lm_trace.hpp"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/ablate_apply.hpp"
#include "cli/trace_norms.hpp"
#include "io/checkpoint.hpp"
#include "io/files.hpp"
#include "lm/language_model.hpp"
#include "mha/trace.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {
namespace {

// The trace JSON with the pieces, their ids and the next-piece predictions added.
std::string LanguageModelJson(const Trace& t, const lm::SentenceRun& r, int layer, const TraceNorms& norms) {
  nlohmann::json j =
      nlohmann::json::parse(io::TraceJson(t, r.notice, norms.json && norms.norms.size() > 0 ? &norms.norms : nullptr));
  j["model_layer"] = layer;
  j["ids"] = r.ids;
  j["pieces"] = r.pieces;
  nlohmann::json next = nlohmann::json::array();
  for (const auto& row : r.next) {
    nlohmann::json a = nlohmann::json::array();
    for (const lm::NextPiece& p : row) a.push_back({{"id", p.id}, {"piece", p.piece}, {"probability", p.probability}});
    next.push_back(a);
  }
  j["next"] = next;
  return j.dump();
}

// The layer's tensors, then what the model predicts from the whole stack: logits
// (seq, vocab) and, for pre-LN, final_ln (seq, d_model).
std::vector<TensorView> LanguageModelTensors(const Trace& t, const lm::SentenceRun& r, const TraceNorms& norms) {
  std::vector<TensorView> v = Tensors(t);
  AppendNorms(t, norms, v);
  const Mat& logits = r.trace.logits[0];
  v.push_back({"logits", {logits.rows(), logits.cols()}, logits.data()});
  if (r.trace.final_ln.size() > 0)
    v.push_back({"final_ln", {r.trace.final_ln.rows(), r.trace.final_ln.cols()}, r.trace.final_ln.data()});
  return v;
}

void PrintNext(const lm::SentenceRun& r) {
  std::cout << "\nnext-piece predictions (top " << (r.next.empty() ? 0 : r.next[0].size()) << "):\n";
  for (std::size_t i = 0; i < r.next.size(); ++i) {
    char head[32];
    std::snprintf(head, sizeof head, "%3zu ", i);
    std::cout << head << "[" << r.pieces[i] << "] ->";
    for (const lm::NextPiece& p : r.next[i]) {
      char prob[32];
      std::snprintf(prob, sizeof prob, " %.3f", p.probability);
      std::cout << "  [" << p.piece << "]" << prob;
    }
    std::cout << "\n";
  }
}

}  // namespace

bool WantsLanguageModel(const TraceArgs& ta) {
  if (ta.run.sentence_given || ta.source.top_k > 0) return true;
  if (!ta.source.tokens.empty()) return false;
  return io::IsTextTask(io::LoadModel(ta.source.model).cfg.task);
}

lm::LanguageModel LoadLanguageModelArg(const std::string& path, const std::string& command) {
  const std::string needs = " mhaviz " + command +
                            " reads sentences with a language model's tokenizer: give mhaviz-small or a checkpoint "
                            "of mhaviz train --task text.";
  Model m;
  try {
    m = io::LoadModel(path);
  } catch (const Error& e) {
    throw UsageError(e.what() + needs);
  }
  if (!lm::IsLanguageModel(m.cfg))
    throw UsageError("'" + path + "' is not a language model (it was trained on a task, not with --task text)." +
                     needs);
  try {
    return lm::WrapLanguageModel(std::move(m), "", path);
  } catch (const Error& e) {
    throw UsageError(e.what() + needs);
  }
}

int TraceLanguageModel(const TraceArgs& ta) {
  lm::LanguageModel model = lm::LoadLanguageModel(ta.source.model);
  model.model.cfg.layer.attention = ta.run.cfg.attention;  // --attention flash: every layer tiled
  const int layers = model.model.cfg.num_layers;
  if (ta.source.layer >= layers)
    throw Error("--layer " + std::to_string(ta.source.layer) + " does not exist: the model has " +
                std::to_string(layers) + " layers (0 to " + std::to_string(layers - 1) + ").");
  const std::vector<HeadAblation> ab = AblateModel(ta.run, ta.source.model, model.model, {});
  const std::vector<HeadAblation>* ablate = ab.empty() ? nullptr : &ab;
  const lm::SentenceRun r = ta.source.tokens.empty()
                                ? lm::RunOnSentence(model, ta.run.sentence_given ? ta.run.sentence : kDefaultSentence,
                                                    ta.source.top_k, ablate)
                                : lm::RunOnIds(model, lm::ParseTokenIds(ta.source.tokens), ta.source.top_k, ablate);
  const std::string banner = AblationBanner(ta.run, layers, model.model.cfg.layer.num_heads);
  if (!banner.empty() && !ta.quiet) std::cout << banner << "\n";
  if (!r.notice.empty()) std::cerr << "mhaviz trace: note: " << r.notice << "\n";
  const Trace& t = r.trace.layers[static_cast<std::size_t>(ta.source.layer)];
  TraceNorms norms;
  if (!ta.npz_path.empty() || !ta.json_path.empty()) {
    norms = NormsFor(t, EstimateModelRun(model.model.cfg, t.seq).total());
    if (!norms.note.empty()) std::cerr << "mhaviz trace: note: " << norms.note << "\n";
  }
  std::vector<std::pair<std::string, std::string>> files;
  if (!ta.npz_path.empty()) files.emplace_back(ta.npz_path, io::EncodeNpz(LanguageModelTensors(t, r, norms)));
  if (!ta.json_path.empty()) files.emplace_back(ta.json_path, LanguageModelJson(t, r, ta.source.layer, norms));
  io::WriteFilesAtomic(files);
  if (ta.quiet) return 0;
  std::cout << "pieces (" << r.ids.size() << "):";
  for (const auto& p : r.pieces) std::cout << " [" << p << "]";
  const Config& c = t.cfg;
  std::cout << "\nlanguage model " << ta.source.model << ": layer " << ta.source.layer << " of " << layers
            << ", d_model = " << c.d_model << ", num_heads = " << c.num_heads << ", head_dim = d_k = " << c.head_dim()
            << ", mask " << ToString(c.mask) << ", norm " << ToString(c.norm) << ", context " << model.model.cfg.max_seq
            << " pieces, tokenizer " << model.tokenizer.path() << "\n";
  if (c.attention == Attention::Flash)
    std::cout << FlashNote(c, t.seq, t.seq_kv, !ta.npz_path.empty() || !ta.json_path.empty());
  if (!r.next.empty()) PrintNext(r);
  if (!ta.npz_path.empty()) std::cout << "wrote " << ta.npz_path << "\n";
  if (!ta.json_path.empty()) std::cout << "wrote " << ta.json_path << "\n";
  return 0;
}

}  // namespace mha::cli
