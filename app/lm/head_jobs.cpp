#include "lm/head_jobs.hpp"

#include <algorithm>
#include <cmath>

namespace mha::lm {
namespace {

const std::string kSpace = "\xe2\x96\x81";  // SentencePiece's word-start mark

bool StartsWord(const std::string& piece) { return piece.compare(0, kSpace.size(), kSpace) == 0; }

std::string Bare(const std::string& piece) { return StartsWord(piece) ? piece.substr(kSpace.size()) : piece; }

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool IsParticle(const std::string& piece) {
  static const char* kParticles[] = {"이", "가", "을", "를", "은", "는", "과", "와", "로", "으로"};
  for (const char* p : kParticles)
    if (piece == p) return true;
  return false;
}

bool IsNumeral(const std::string& piece) {
  static const char* kNumerals[] = {"한", "두", "세", "네", "다섯", "여섯", "일곱", "여덟", "아홉", "열"};
  if (!StartsWord(piece)) return false;
  for (const char* n : kNumerals)
    if (Bare(piece) == n) return true;
  return false;
}

bool EndsSentence(const std::string& piece) {
  const std::string b = Bare(piece);
  return !b.empty() && (b.back() == '.' || b.back() == '?' || b.back() == '!');
}

// A word: pieces [begin, end), the first starting with the word-start mark (or <s>'s
// successor). A lone mark piece ("▁" before 쥐) spells only the space and is no part
// of the word's cue, as in ScoreMinimalPair.
struct Word {
  int begin = 0, end = 0;
};

std::vector<int> WordCue(const std::vector<std::string>& pieces, int begin, int end) {
  std::vector<int> cue;
  for (int i = begin; i < end; ++i)
    if (pieces[static_cast<std::size_t>(i)] != kSpace) cue.push_back(i);
  return cue;
}

}  // namespace

double LearnedAccuracy(int pairs) { return 0.5 + 1.5 / std::sqrt(static_cast<double>(std::max(1, pairs))); }

std::string JobOfPhenomenon(const std::string& phenomenon) {
  if (phenomenon.compare(0, 9, "particle ") == 0) return "particle-noun";
  if (phenomenon == "numeral classifier") return "classifier-noun";
  if (phenomenon == "honorific agreement") return "verb-subject";
  if (phenomenon == "agreement across an attractor") return "agreement";
  return "";
}

bool BeatsChance(double weight, double uniform) {
  return weight >= kJobRatio * uniform && weight - uniform >= kJobMargin;
}

std::vector<HeadJob> HeadJobs(const PairsReport& r) {
  std::vector<HeadJob> out;
  for (const PhenomenonScore& p : r.phenomena) {
    const std::string job = JobOfPhenomenon(p.phenomenon);
    if (job.empty() || p.attention_pairs == 0 || !BeatsChance(p.best_weight, p.uniform)) continue;
    HeadJob j;
    j.layer = p.best_layer;
    j.head = p.best_head;
    j.job = job;
    j.phenomenon = p.phenomenon;
    j.weight = p.best_weight;
    j.uniform = p.uniform;
    j.accuracy = p.accuracy;
    j.learned = p.accuracy >= LearnedAccuracy(p.pairs);
    if (job == "particle-noun")
      j.text = "particle → noun";
    else if (job == "classifier-noun")
      j.text = "classifier → noun";
    // Looking at the subject is what the weight shows; agreement is a claim about the
    // form the model then chooses, made only where it chooses it.
    else if (!j.learned)
      j.text = "looks at the subject";
    else if (job == "verb-subject")
      j.text = "verb → subject";
    else
      j.text = "agreement";
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<CueSite> FindCues(const std::vector<std::string>& pieces) {
  std::vector<CueSite> out;
  const int n = static_cast<int>(pieces.size());
  // Words: a new one at every word-start piece (position 0 is <s>, its own).
  std::vector<Word> words;
  for (int i = 1; i < n; ++i) {
    if (words.empty() || StartsWord(pieces[static_cast<std::size_t>(i)])) words.push_back({i, i});
    words.back().end = i + 1;
  }
  for (std::size_t w = 0; w < words.size(); ++w) {
    const Word& word = words[w];
    // A particle after the noun's pieces in the same word.
    for (int i = word.begin + 1; i < word.end; ++i)
      if (IsParticle(pieces[static_cast<std::size_t>(i)])) {
        std::vector<int> cue = WordCue(pieces, word.begin, i);
        if (!cue.empty()) out.push_back({"particle-noun", i, i - 1, cue});
        break;
      }
    // A numeral after its noun: 책 세 (권).
    if (w > 0 && word.end - word.begin == 1 && IsNumeral(pieces[static_cast<std::size_t>(word.begin)])) {
      std::vector<int> cue = WordCue(pieces, words[w - 1].begin, words[w - 1].end);
      if (!cue.empty() && !IsNumeral(pieces[static_cast<std::size_t>(cue.back())]))
        out.push_back({"classifier-noun", word.begin, word.begin, cue});
    }
  }
  // Verb -> subject, sentence by sentence: the subject is the first word ending in a
  // subject particle, the verb the sentence's last word (Korean is verb-final).
  std::size_t first = 0;
  for (std::size_t w = 0; w < words.size(); ++w) {
    const Word& last = words[w];
    const bool ends = EndsSentence(pieces[static_cast<std::size_t>(last.end - 1)]) || w + 1 == words.size();
    if (!ends) continue;
    // The verb word without its full stop (".", or "다." in one piece is still the verb).
    int verb_begin = last.begin;
    if (last.end - last.begin == 1 && Bare(pieces[static_cast<std::size_t>(last.begin)]) == "." && w > first)
      verb_begin = words[w - 1].begin;
    // A last word with a particle in it (고양이가 쥐를) is no verb: the sentence is not finished.
    bool verb = true;
    for (int i = verb_begin + 1; i < words[w].end; ++i) verb &= !IsParticle(pieces[static_cast<std::size_t>(i)]);
    for (std::size_t s = first; verb && s < w; ++s) {
      const Word& subj = words[s];
      if (subj.end > verb_begin) break;
      const std::string tail = pieces[static_cast<std::size_t>(subj.end - 1)];
      const bool particle = subj.end - subj.begin >= 2 && (tail == "이" || tail == "가" || tail == "은" ||
                                                           tail == "는" || tail == "께서" || tail == "께서는");
      const bool honoured = EndsWith(Bare(tail), "께서") || EndsWith(Bare(tail), "께서는");
      if (particle || honoured) {
        out.push_back({"verb-subject", verb_begin - 1, verb_begin - 1, WordCue(pieces, subj.begin, subj.end)});
        break;
      }
    }
    first = w + 1;
  }
  std::stable_sort(out.begin(), out.end(), [](const CueSite& a, const CueSite& b) { return a.query < b.query; });
  return out;
}

double SiteWeight(const Trace& t, int h, const CueSite& site) {
  double w = 0;
  for (int j : site.cue) w += t.attn(h * t.seq + site.query, j);
  return w;
}

double SiteUniform(const CueSite& site) { return static_cast<double>(site.cue.size()) / (site.query + 1); }

}  // namespace mha::lm
