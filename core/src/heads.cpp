#include "mha/heads.hpp"

#include <algorithm>

namespace mha {

namespace {

// Count slots per head: back 1..kMaxBack, self, first, reverse, induction.
constexpr int kSelf = kMaxBack, kFirst = kMaxBack + 1, kReverse = kMaxBack + 2, kInduction = kMaxBack + 3,
              kSorted = kMaxBack + 4, kSlots = kMaxBack + 5;

}  // namespace

void AddToProfile(const Trace& t, const std::vector<int>& tokens, int layer, std::vector<HeadProfile>& heads,
                  std::vector<std::vector<double>>& counts, const TaskSpec* task, int sequence) {
  const int H = t.cfg.num_heads, S = t.seq;
  for (int h = 0; h < H; ++h) {
    auto it =
        std::find_if(heads.begin(), heads.end(), [&](const HeadProfile& p) { return p.layer == layer && p.head == h; });
    if (it == heads.end()) {
      HeadProfile p;
      p.layer = layer;
      p.head = h;
      p.back.assign(kMaxBack, 0.0);
      heads.push_back(p);
      counts.emplace_back(kSlots, 0.0);
      it = heads.end() - 1;
    }
    HeadProfile& p = *it;
    std::vector<double>& c = counts[static_cast<std::size_t>(it - heads.begin())];
    const auto A = t.AttnHead(h, sequence);
    for (int i = 0; i < S; ++i) {
      for (int k = 1; k <= kMaxBack && i - k >= 0; ++k) {
        p.back[k - 1] += A(i, i - k);
        c[k - 1] += 1;
      }
      p.self += A(i, i);
      c[kSelf] += 1;
      if (i >= 1) {
        p.first += A(i, 0);
        c[kFirst] += 1;
      }
      p.reverse += A(i, S - 1 - i);
      c[kReverse] += 1;
      if (task && task->kind == TaskKind::Sort) {
        const int key = ExpectedKey(*task, 0, i, tokens);
        if (key >= 0) {
          p.sorted += A(i, key);
          c[kSorted] += 1;
        }
      }
      // induction: the latest earlier occurrence j < i of tokens[i]; its successor j+1
      for (int j = i - 1; j >= 0; --j) {
        if (tokens[j] != tokens[i]) continue;
        if (j + 1 < i) {  // j + 1 == i would be the previous token, not induction
          p.induction += A(i, j + 1);
          c[kInduction] += 1;
        }
        break;
      }
    }
  }
}

void FinishProfile(std::vector<HeadProfile>& heads, const std::vector<std::vector<double>>& counts) {
  for (std::size_t n = 0; n < heads.size(); ++n) {
    HeadProfile& p = heads[n];
    const std::vector<double>& c = counts[n];
    auto mean = [&](double& v, int slot) { v = c[slot] > 0 ? v / c[slot] : 0.0; };
    for (int k = 0; k < kMaxBack; ++k) mean(p.back[k], k);
    mean(p.self, kSelf);
    mean(p.first, kFirst);
    mean(p.reverse, kReverse);
    mean(p.induction, kInduction);
    mean(p.sorted, kSorted);
    LabelHead(p);
  }
}

void LabelHead(HeadProfile& p) {
  std::vector<std::pair<double, std::string>> cand;
  for (int k = 0; k < kMaxBack; ++k)
    cand.push_back({p.back[k], k == 0 ? "previous-token" : std::to_string(k + 1) + "-back"});
  cand.push_back({p.self, "self"});
  cand.push_back({p.first, "first"});
  cand.push_back({p.reverse, "reverse"});
  cand.push_back({p.induction, "induction"});
  cand.push_back({p.sorted, "sorted"});
  // The first best wins ties, so a head that attends to position 0 from position 1
  // is "previous-token" rather than "first".
  auto best = cand.begin();
  for (auto it = cand.begin(); it != cand.end(); ++it)
    if (it->first > best->first + 1e-12) best = it;
  p.score = best->first;
  p.label = best->first >= kMinLabelScore ? best->second : "spread";
}

namespace {

void AddBatch(Trainer& trainer, const Model& m, const Batch& b, const TaskSpec* task, std::vector<HeadProfile>& heads,
              std::vector<std::vector<double>>& counts) {
  trainer.Evaluate(m, b);
  std::vector<int> tokens(b.seq);
  for (int l = 0; l < m.cfg.num_layers; ++l)
    for (int s = 0; s < b.batch; ++s) {
      for (int i = 0; i < b.seq; ++i) tokens[i] = b.token(s, i);
      AddToProfile(trainer.LayerTrace(l), tokens, l, heads, counts, task, s);
    }
}

}  // namespace

std::vector<HeadProfile> ProfileHeads(Trainer& trainer, const Model& m, const Batch& heldout, const TaskSpec* task) {
  std::vector<HeadProfile> heads;
  std::vector<std::vector<double>> counts;
  AddBatch(trainer, m, heldout, task, heads, counts);
  FinishProfile(heads, counts);
  return heads;
}

std::vector<HeadProfile> ProfileHeads(Trainer& trainer, const Model& m, const std::vector<Batch>& heldout,
                                      const TaskSpec* task) {
  std::vector<HeadProfile> heads;
  std::vector<std::vector<double>> counts;
  for (const Batch& b : heldout) AddBatch(trainer, m, b, task, heads, counts);
  FinishProfile(heads, counts);
  return heads;
}

}  // namespace mha
