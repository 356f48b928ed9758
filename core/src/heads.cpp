#include "mha/heads.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "mha/teach.hpp"

namespace mha {

namespace {

// Count slots per head: back 1..kMaxBack, self, first, reverse, induction, sorted, next.
constexpr int kSelf = kMaxBack, kFirst = kMaxBack + 1, kReverse = kMaxBack + 2, kInduction = kMaxBack + 3,
              kSorted = kMaxBack + 4, kNext = kMaxBack + 5, kSlots = kMaxBack + 6;

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
      if (i + 1 < S) {  // under a causal mask this key is hidden: 0, never a label
        p.next += A(i, i + 1);
        c[kNext] += 1;
      }
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
    mean(p.next, kNext);
    mean(p.induction, kInduction);
    mean(p.sorted, kSorted);
    LabelHead(p);
  }
}

void LabelHead(HeadProfile& p) {
  // Self and first name a key for (nearly) every query, k >= 2 back for fewer: an exact
  // tie (hand-made or toy maps) goes to the broader pattern. On 3 tokens a head on the
  // first token scores 1 for "first" over 2 rows and for "2-back" over 1.
  std::vector<std::pair<double, std::string>> cand;
  cand.push_back({p.back[0], "previous-token"});
  cand.push_back({p.self, "self"});
  cand.push_back({p.first, "first"});
  for (int k = 1; k < kMaxBack; ++k) cand.push_back({p.back[k], std::to_string(k + 1) + "-back"});
  cand.push_back({p.reverse, "reverse"});
  cand.push_back({p.next, "next"});
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

LabelChance ChanceOfLabel(const HeadProfile& p, int seq, bool causal, const std::vector<int>& tokens) {
  LabelChance c;
  // The key the label names from query i, or -1 (the same rows as AddToProfile's sums).
  auto key = [&](int i) -> int {
    const std::string& l = p.label;
    if (l == "self") return i;
    if (l == "first") return i >= 1 ? 0 : -1;
    if (l == "reverse") return seq - 1 - i;
    if (l == "next") return i + 1;
    if (l == "previous-token") return i - 1;
    if (l == "induction") {
      if (static_cast<int>(tokens.size()) != seq) return -1;
      for (int j = i - 1; j >= 0; --j)
        if (tokens[static_cast<std::size_t>(j)] == tokens[static_cast<std::size_t>(i)]) return j + 1 < i ? j + 1 : -1;
      return -1;
    }
    const std::size_t dash = l.find("-back");
    if (dash != std::string::npos) return i - std::atoi(l.substr(0, dash).c_str());
    return -1;  // "spread", "sorted" (a task's own order, not a sentence's)
  };
  std::vector<double> hit;
  for (int i = 0; i < seq; ++i) {
    const int j = key(i);
    if (j < 0 || j >= seq) continue;
    const int seen = causal ? i + 1 : seq;
    hit.push_back(j < seen ? 1.0 / seen : 0.0);  // a masked key: no pick reaches it
  }
  c.rows = static_cast<int>(hit.size());
  if (c.rows == 0 || p.label == "spread") return c;
  for (double x : hit) c.chance += x;
  c.chance /= c.rows;
  if (c.chance >= 1.0 - 1e-12) return c;  // every row sees one key: nothing was chosen
  c.lift = (p.score - c.chance) / (1.0 - c.chance);
  c.chance_p = TailAtLeast(hit, static_cast<int>(std::ceil(p.score * c.rows - 1e-9)));
  c.claimed = c.lift >= kMinLift && c.chance_p < kMaxChanceP;
  return c;
}

}  // namespace mha
