// The Importance view's measurements (importance_worker.hpp): the worker, its cache.
#include "gui/views/lm/importance_worker.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <new>

#include "text/i18n.hpp"

namespace mha::gui {
namespace {

struct Cancelled {};

}  // namespace

// One measurement on a worker thread. The UI thread reads `step`, `stage` and `done`;
// the result is written before `done` is set and read only after.
struct ImportanceJob {
  ImportanceKey key;
  std::atomic<bool> cancel{false}, done{false};
  std::atomic<int> step{0}, total{1};
  std::mutex mutex;
  // What it measures now: a msgid (translated when drawn) with at most one %s.
  const char* stage = "";
  std::string stage_arg;
  std::shared_ptr<ImportanceResult> result;
  std::string error;

  void Stage(const char* what, const std::string& arg = "") {
    if (cancel) throw Cancelled{};
    std::lock_guard<std::mutex> lock(mutex);
    stage = what;
    stage_arg = arg;
  }
  std::string StageText() {
    std::lock_guard<std::mutex> lock(mutex);
    char b[160];
    std::snprintf(b, sizeof b, _(stage), stage_arg.c_str());
    return b;
  }
};

namespace {

std::vector<std::string> TargetNames(const lm::AblationSubject& sub) {
  std::vector<std::string> out;
  const int K = sub.model().cfg.num_targets;
  if (!sub.task || K < 2) return out;
  for (int k = 0; k < K; ++k)
    out.push_back(sub.task->kind == TaskKind::Offsets ? std::to_string(k + 1) + "-back"
                                                      : "target " + std::to_string(k));
  return out;
}

void Measure(const std::shared_ptr<ImportanceJob>& job, const ImportanceInput& in) {
  auto m = std::make_shared<ImportanceResult>();
  job->Stage(N_("loading the reference text"));
  lm::AblationSubject sub =
      in.lm_path.empty() ? lm::TaskSubject(in.task_model, in.name) : lm::LoadSubject(in.lm_path, job->key.windows);
  const int L = sub.layers(), H = sub.heads();
  job->total = 3 + L * H + L + 1;  // labels, the two repeat losses, each head, each layer, the intact model
  Trainer trainer(0);              // one thread per core: the numbers are the same on any count
  ContextMeans means;
  const ContextMeans* mp = nullptr;
  if (job->key.mode == AblationMode::Mean) {
    job->Stage(N_("each head's mean context"));
    means = MeanContexts(trainer, sub.model(), sub.reference);
    mp = &means;
  }
  job->Stage(N_("the heads' labels"));
  m->labels = lm::SubjectLabels(trainer, sub);
  ++job->step;
  // The in-context learning curve, as `mhaviz ablate --icl` measures it by default.
  job->Stage(N_("in-context learning"));
  const lm::IclShape shape = lm::IclShapeOf(sub);
  m->icl_heads = {lm::InductionHead(m->labels)};
  if (const HeadProfile* p = lm::FindProfile(m->labels, m->icl_heads[0])) m->icl_induction = p->induction;
  m->icl_span = shape.span;
  m->icl_sequences = lm::kIclSequences;
  if (shape.span >= 2) {
    const RepeatedSpans spans =
        MakeRepeatedSpans(shape.candidates, shape.prefix, shape.span, lm::kIclSequences, sub.model().cfg.layer.seed);
    const std::vector<HeadAblation> ab =
        LayerAblations(L, sub.model().cfg.LayerConfig(), job->key.mode, m->icl_heads, mp);
    m->plain = MeasureRepeatLoss(sub.model(), spans, nullptr);
    ++job->step;
    job->Stage(N_("in-context learning without %s"), HeadName(m->icl_heads[0]));
    m->knocked = MeasureRepeatLoss(sub.model(), spans, &ab);
  } else {
    ++job->step;
  }
  ++job->step;
  job->Stage(N_("the intact model"));
  m->table =
      MeasureImportance(L, sub.model().cfg.LayerConfig(), job->key.mode, mp, [&](const std::vector<HeadAblation>* ab) {
        // Which head this call knocks out: the first ablated one, or
        // a whole layer (MeasureImportance's order).
        const char* what = N_("the intact model");
        std::string arg;
        if (ab) {
          for (std::size_t l = 0; l < ab->size(); ++l) {
            const std::vector<int>& heads = (*ab)[l].heads;
            if (heads.empty()) continue;
            const bool all = static_cast<int>(heads.size()) == H && H > 1;
            what = all ? N_("every head of layer %s knocked out") : N_("%s knocked out");
            arg = all ? std::to_string(l) : HeadName({static_cast<int>(l), heads[0]});
          }
        }
        job->Stage(what, arg);
        // Cancelled between batches of 64 windows (a fraction of a second).
        StepStats st = lm::ReferenceLoss(trainer, sub, ab, [&] {
          if (job->cancel) throw Cancelled{};
        });
        ++job->step;
        return st;
      });
  m->model = sub.name;
  m->reference = sub.reference_text;
  m->layers = L;
  m->num_heads = H;
  m->targets = TargetNames(sub);
  job->result = std::move(m);
}

void Run(std::shared_ptr<ImportanceJob> job, ImportanceInput in) {
  try {
    Measure(job, in);
  } catch (const Cancelled&) {
  } catch (const std::bad_alloc&) {
    job->error = "Out of memory measuring the heads.";
  } catch (const std::exception& e) {
    job->error = e.what();
  }
  job->done = true;
}

}  // namespace

ImportanceWorker::~ImportanceWorker() {
  for (auto& t : threads_) {
    t.second->cancel = true;
    t.first.join();
  }
}

void ImportanceWorker::Update(const ImportanceKey& current) {
  if (job_ && job_->done) {
    if (!job_->cancel && (job_->result || !job_->error.empty())) {
      cache_.push_back({job_->key, job_->result, job_->error});
      if (cache_.size() > 8) cache_.erase(cache_.begin());
      ++finished_;
    }
    job_.reset();
  }
  if (job_ && !(job_->key == current)) {
    job_->cancel = true;
    job_.reset();
  }
  for (auto it = threads_.begin(); it != threads_.end();) {
    if (it->second->done) {
      it->first.join();
      it = threads_.erase(it);
    } else {
      ++it;
    }
  }
}

void ImportanceWorker::Start(const ImportanceKey& k, ImportanceInput in) {
  auto job = std::make_shared<ImportanceJob>();
  job->key = k;
  job_ = job;
  threads_.emplace_back(std::thread(Run, job, std::move(in)), job);
}

const ImportanceWorker::Entry* ImportanceWorker::Cached(const ImportanceKey& k) const {
  for (const auto& e : cache_)
    if (e.key == k) return &e;
  return nullptr;
}

int ImportanceWorker::step() const { return job_ ? job_->step.load() : 0; }
int ImportanceWorker::total() const { return job_ ? job_->total.load() : 0; }
std::string ImportanceWorker::StageText() const { return job_ ? job_->StageText() : std::string(); }

}  // namespace mha::gui
