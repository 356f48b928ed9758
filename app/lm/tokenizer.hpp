// The subword tokenizer of mhaviz's trained language model: a SentencePiece model
// (scripts/build_corpus.py trains it with spm_train), read with libsentencepiece.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace mha::lm {

// Unicode NFC (text::ToNfc, the app's one normaliser): the form the corpus and the
// tokenizer were built in, so a sentence typed in decomposed Hangul (as macOS file names
// are) meets the same pieces. Throws mha::Error naming the first bad byte for text that
// is not valid UTF-8 (SentencePiece would silently drop or replace it).
std::string Nfc(const std::string& utf8);

// A character that is not one of the pieces is spelled as its UTF-8 bytes, one byte
// piece each ("<0xEC>" "<0xA5>" "<0x90>" for 쥐). For each run of byte pieces in
// `pieces` (each distinct run once): the text those bytes make (bytes that do not form whole characters are shown
// as \xNN) and the run as written ("<0xEC><0xA5><0x90>"). Empty when there are none.
struct ByteSpelling {
  std::string text;
  std::string pieces;
};
std::vector<ByteSpelling> ByteSpellings(const std::vector<std::string>& pieces);

class Tokenizer {
 public:
  // Loads a .model file; throws mha::Error with a teaching message for a missing file,
  // a file that is not a SentencePiece model, or one too large to be one.
  static Tokenizer Load(const std::string& path);

  // The ids of NFC(text)'s pieces (no BOS). Throws mha::Error for invalid UTF-8.
  std::vector<int> Encode(const std::string& text) const;
  // The text of ids: pieces joined, "▁" back to spaces, byte pieces back to UTF-8;
  // control ids (BOS, EOS) are dropped.
  std::string Decode(const std::vector<int>& ids) const;
  // Each id's piece as the vocabulary spells it: "▁the", "에서", "<0xEC>", "<s>".
  std::vector<std::string> Pieces(const std::vector<int>& ids) const;
  // Every piece, by id: the model's vocabulary.
  std::vector<std::string> Vocab() const;

  int vocab_size() const;
  int bos() const;  // the id that starts every paragraph in training
  const std::string& path() const { return path_; }

 private:
  std::shared_ptr<const sentencepiece::SentencePieceProcessor> sp_;
  std::string path_;
};

}  // namespace mha::lm
