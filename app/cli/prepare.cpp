#include "prepare.hpp"

#include "io/files.hpp"
#include "text/normalize.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {

namespace {
// Text as the learner typed it, composed (NFC); a note in *notice if that changed it.
std::string Nfc(const std::string& s, const char* what, std::string* notice) {
  text::Nfc n = text::ToNfc(s);
  if (n.changed) *notice += (notice->empty() ? "" : " ") + text::NfcNotice(what);
  return std::move(n.text);
}

// A configuration that cannot work is a usage error: the flags must change.
void ValidateFlags(const Config& cfg, int seq, int seq_kv) {
  try {
    Validate(cfg, seq, seq_kv);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}
}  // namespace

Prepared Prepare(const RunOptions& o) {
  Prepared p;
  p.cfg = o.cfg;
  // Sizes first, before anything is allocated (with --input, d_model comes from the file,
  // so checking the default 512 against --heads would mislead).
  if (o.input_npz.empty() || o.d_model_given) ValidateFlags(p.cfg, 1, 1);
  CheckRunOptions(o);
  if (!o.input_npz.empty()) {
    p.in = LoadInputNpz(o);
    p.cfg.d_model = static_cast<int>(p.in.x.cols());
    p.cfg.positional_encoding = false;  // x already holds whatever encoding it had
    ValidateFlags(p.cfg, 1, 1);
    if (!o.memory.empty()) {
      if (p.in.cross()) throw UsageError("'" + o.input_npz + "' already holds a memory array; leave out --memory.");
      // MakeInputs calls whatever it embeds "the sentence"; here that is the memory.
      std::string nfc_notice;
      const std::string memory = Nfc(o.memory, "The memory sentence", &nfc_notice);
      if (Tokenize(memory, Limits::kMaxTokens).tokens.empty())
        throw UsageError(
            "The memory sentence has no tokens: cross-attention needs at least one key. "
            "Leave out --memory for self-attention.");
      Inputs m = MakeInputs(memory, "", p.cfg, &p.notice);
      if (!nfc_notice.empty()) p.notice += (p.notice.empty() ? "" : " ") + nfc_notice;
      p.in.memory_tokens = m.tokens;
      p.in.memory = m.x;
    }
  } else {
    std::string sentence = o.sentence_given ? o.sentence : kDefaultSentence;
    if (!o.sentence_file.empty()) sentence = ReadSentenceFile(o.sentence_file);
    std::string nfc_notice;
    sentence = Nfc(sentence, "The sentence", &nfc_notice);
    const std::string memory = Nfc(o.memory, "The memory sentence", &nfc_notice);
    p.sentence = sentence;
    try {
      p.in = MakeInputs(sentence, memory, p.cfg, &p.notice);
      if (!nfc_notice.empty()) p.notice += (p.notice.empty() ? "" : " ") + nfc_notice;
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }
  if (!o.weights_npz.empty()) {
    auto npz = io::LoadNpz(o.weights_npz, io::WeightsFilter(o.weights_npz, &p.cfg));
    p.weights = std::make_shared<const Weights>(io::WeightsFromNpz(std::move(npz), o.weights_npz, &p.cfg));
  }
  ValidateFlags(p.cfg, static_cast<int>(p.in.x.rows()),
                static_cast<int>(p.in.cross() ? p.in.memory.rows() : p.in.x.rows()));
  if (p.in.cross() && p.cfg.mask == Mask::Causal)
    throw UsageError(
        "a causal mask hides later positions of the same sequence, but with --memory the keys come "
        "from another sentence, so there is no 'later' to hide. Use --mask none with --memory.");
  if (!p.weights) p.weights = std::make_shared<const Weights>(InitWeights(p.cfg));
  return p;
}

}  // namespace mha::cli
