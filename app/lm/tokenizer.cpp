#include "lm/tokenizer.hpp"

#include <sentencepiece_processor.h>
#include <cstdio>
#include <string_view>

#include "io/files.hpp"
#include "mha/config.hpp"
#include "text/normalize.hpp"

namespace mha::lm {

std::string Nfc(const std::string& utf8) {
  const std::size_t bad = text::FirstInvalidUtf8(utf8);
  if (bad != std::string_view::npos) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(utf8[bad]));
    throw Error("the text is not valid UTF-8: byte " + std::to_string(bad) + " (" + byte +
                ") does not begin or "
                "continue a character. Save the text as UTF-8 (English and Korean both are) and try again.");
  }
  return text::ToNfc(utf8).text;  // the same NFC the word tokenizer's sentences get
}

namespace {

// The byte of a piece spelled "<0xNN>" (SentencePiece's byte fallback), or -1.
int BytePiece(const std::string& piece) {
  if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>') return -1;
  int v = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = piece[static_cast<std::size_t>(i)];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

}  // namespace

std::vector<ByteSpelling> ByteSpellings(const std::vector<std::string>& pieces) {
  std::vector<ByteSpelling> out;
  for (std::size_t i = 0; i < pieces.size();) {
    if (BytePiece(pieces[i]) < 0) {
      ++i;
      continue;
    }
    std::string bytes, written;
    for (; i < pieces.size() && BytePiece(pieces[i]) >= 0; ++i) {
      bytes += static_cast<char>(BytePiece(pieces[i]));
      written += pieces[i];
    }
    if (text::FirstInvalidUtf8(bytes) != std::string_view::npos) {
      std::string shown;
      for (unsigned char b : bytes) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "\\x%02X", b);
        shown += hex;
      }
      bytes = shown;
    }
    bool seen = false;
    for (const ByteSpelling& b : out) seen |= b.pieces == written;
    if (!seen) out.push_back({bytes, written});
  }
  return out;
}

Tokenizer Tokenizer::Load(const std::string& path) {
  // SentencePiece models of a few thousand pieces are well under 1 MB; 64 MB is room for
  // any real one without reading a wrong multi-gigabyte file whole.
  const std::string bytes = io::ReadFile(path, std::size_t(64) << 20);
  auto sp = std::make_shared<sentencepiece::SentencePieceProcessor>();
  const auto status = sp->LoadFromSerializedProto(bytes);
  if (!status.ok() || sp->GetPieceSize() <= 0)
    throw Error("'" + path + "' is not a SentencePiece tokenizer model (" + status.ToString() +
                "). The model's tokenizer is the .model file spm_train writes; scripts/build_corpus.py "
                "--tokenizer PREFIX builds one from the corpus.");
  Tokenizer t;
  t.sp_ = std::move(sp);
  t.path_ = path;
  return t;
}

std::vector<int> Tokenizer::Encode(const std::string& text) const {
  std::vector<int> ids;
  const auto status = sp_->Encode(Nfc(text), &ids);
  if (!status.ok()) throw Error("the tokenizer could not encode the text: " + status.ToString());
  return ids;
}

std::string Tokenizer::Decode(const std::vector<int>& ids) const {
  for (int id : ids)
    if (id < 0 || id >= vocab_size())
      throw Error("token id " + std::to_string(id) + " is outside the tokenizer's " + std::to_string(vocab_size()) +
                  " pieces.");
  std::string text;
  const auto status = sp_->Decode(ids, &text);
  if (!status.ok()) throw Error("the tokenizer could not decode the ids: " + status.ToString());
  return text;
}

std::vector<std::string> Tokenizer::Pieces(const std::vector<int>& ids) const {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (int id : ids) {
    if (id < 0 || id >= vocab_size())
      throw Error("token id " + std::to_string(id) + " is outside the tokenizer's " + std::to_string(vocab_size()) +
                  " pieces.");
    out.push_back(sp_->IdToPiece(id));
  }
  return out;
}

std::vector<std::string> Tokenizer::Vocab() const {
  std::vector<std::string> v(static_cast<std::size_t>(vocab_size()));
  for (int i = 0; i < vocab_size(); ++i) v[static_cast<std::size_t>(i)] = sp_->IdToPiece(i);
  return v;
}

int Tokenizer::vocab_size() const { return sp_->GetPieceSize(); }
int Tokenizer::bos() const { return sp_->bos_id(); }

}  // namespace mha::lm
