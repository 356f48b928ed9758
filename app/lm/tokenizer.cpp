#include "lm/tokenizer.hpp"

#include <sentencepiece_processor.h>
#include <utf8proc.h>

#include <cstdlib>

#include "io/files.hpp"
#include "mha/config.hpp"

namespace mha::lm {

std::string Nfc(const std::string& utf8) {
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data()), static_cast<utf8proc_ssize_t>(utf8.size()),
                   &out, static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) throw Error("the text is not valid UTF-8 (" + std::string(utf8proc_errmsg(n)) + ").");
  std::string s(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
  std::free(out);
  return s;
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
