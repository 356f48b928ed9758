#include "lm/generation.hpp"

#include <algorithm>
#include <cmath>

#include "options/timing.hpp"

namespace mha::lm {
namespace {

const Sampling& Checked(const Sampling& s, int vocab) {
  CheckSampling(s, vocab);
  return s;
}

}  // namespace

void CheckCanGenerate(const LanguageModel& lm) {
  const int context = lm.model.cfg.max_seq;
  if (context < 2)
    throw Error("the model reads at most " + std::to_string(context) +
                " piece (its context, max_seq), and <s> alone fills it: there is no room for the prompt or for a new "
                "piece. Generating needs a model with a context of at least 2 pieces.");
}

std::vector<int> PromptIds(const LanguageModel& lm, const std::string& text, std::string* notice) {
  std::vector<int> ids = lm.tokenizer.Encode(text);
  ids.insert(ids.begin(), lm.bos);
  if (notice) notice->clear();
  const int context = lm.model.cfg.max_seq;
  CheckCanGenerate(lm);
  if (static_cast<int>(ids.size()) >= context) {
    // As trace does, the start is kept; one position is left for the first new piece.
    const int kept = context - 1;
    if (notice)
      *notice = "the prompt is " + std::to_string(ids.size()) + " pieces long with <s>, but the model reads at most " +
                std::to_string(context) + " (its context, max_seq): " +
                (kept == 1 ? std::string("only <s> is kept")
                           : "only its first " + std::to_string(kept) + " (with <s>) are kept") +
                ", leaving room for one new piece.";
    ids.resize(static_cast<std::size_t>(kept));
  }
  return ids;
}

Generation::Generation(const LanguageModel& lm, std::vector<int> prompt_ids, const Sampling& sampling, bool use_cache)
    : lm_(&lm),
      ids_(std::move(prompt_ids)),
      prompt_size_(static_cast<int>(ids_.size())),
      use_cache_(use_cache),
      decoder_(lm.model),
      sampler_(Checked(sampling, lm.model.cfg.vocab_size())),
      no_repeat_ngram_(sampling.no_repeat_ngram) {
  if (ids_.empty()) throw Error("Generation needs at least one piece to start from, such as <s>.");
}

bool Generation::EndedText() const { return !steps_.empty() && ids_.back() == lm_->bos; }

bool Generation::AtContext() const { return static_cast<int>(ids_.size()) >= lm_->model.cfg.max_seq; }

int Generation::CacheRows() const { return static_cast<int>(ids_.size()) - (steps_.empty() ? 0 : 1); }

std::int64_t Generation::CacheBytes() const {
  const Config c = lm_->model.cfg.LayerConfig();
  return KvCache::Bytes(lm_->model.cfg.num_layers, c.kv_heads(), c.head_dim(), CacheRows());
}

const GeneratedPiece& Generation::Next() {
  using options::BenchClock;
  const ModelConfig& cfg = lm_->model.cfg;
  if (AtContext())
    throw Error("The text already fills the model's context of " + std::to_string(cfg.max_seq) +
                " pieces (max_seq): there is no position for another piece.");
  const int vocab = cfg.vocab_size();
  GeneratedPiece r;
  const float* logits = nullptr;
  if (use_cache_) {
    const double c0 = options::ThreadCpuMs();
    const auto t0 = BenchClock::now();
    const DecodeStep& s = steps_.empty() ? decoder_.Prefill(ids_) : decoder_.Step(ids_.back());
    r.ms_cached = options::Ms(BenchClock::now() - t0);
    r.cpu_cached = options::ThreadCpuMs() - c0;
    logits = s.logits.data();
  }
  // Without a cache: the whole sequence again, every layer, every row.
  const double c0 = options::ThreadCpuMs();
  const auto t0 = BenchClock::now();
  RunModel(lm_->model, ids_, full_);
  r.ms_full = options::Ms(BenchClock::now() - t0);
  r.cpu_full = options::ThreadCpuMs() - c0;
  const Mat& fl = full_.logits[0];
  const float* full_logits = fl.data() + (fl.rows() - 1) * fl.cols();
  if (use_cache_) {
    double d = 0;
    for (int v = 0; v < vocab; ++v) d = std::max(d, std::abs(double(logits[v]) - double(full_logits[v])));
    r.logit_diff = d;
  } else {
    logits = full_logits;
  }
  r.flops = DecodeFlops(cfg, static_cast<int>(ids_.size()));
  if (no_repeat_ngram_ > 0) {
    blocked_logits_.assign(logits, logits + vocab);
    r.blocked = BlockRepeatedNgrams(ids_, no_repeat_ngram_, blocked_logits_.data(), vocab);
    logits = blocked_logits_.data();
  }
  r.id = sampler_.Next(logits, vocab);
  ids_.push_back(r.id);
  r.position = static_cast<int>(ids_.size());
  r.piece = lm_->tokenizer.Pieces({r.id})[0];
  steps_.push_back(std::move(r));
  return steps_.back();
}

}  // namespace mha::lm
