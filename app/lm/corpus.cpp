#include "lm/corpus.hpp"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "io/files.hpp"
#include "mha/config.hpp"

namespace mha::lm {
namespace {

// A corpus is held whole while it is tokenized (and a .gz file beside its text), then
// only its pieces: 256 MB of text, and at most 64 M pieces (256 MB of ids, what 256 MB
// of text gives at worst one piece per byte), keep the set-up under 1 GB and
// leave the training step its share of the 1.5 GB budget.
constexpr std::size_t kMaxText = std::size_t(256) << 20;
constexpr std::size_t kMaxPieces = std::size_t(64) << 20;
// SentencePiece's working memory is about 230 bytes per input byte (measured: an 8 MB
// paragraph peaked at 1.86 GB), so a paragraph is encoded in chunks of at most 64 KiB
// (about 15 MB of working memory), cut between words where it can be.
constexpr std::size_t kEncodeChunk = std::size_t(64) << 10;
constexpr std::size_t kTokenizerBytesPerByte = 230;
static_assert(kEncodeChunk * kTokenizerBytesPerByte < (std::size_t(32) << 20), "the tokenizer's share of the budget");

// Where to cut [start, end) so the piece before the cut is at most kEncodeChunk bytes:
// after a space if there is one in the chunk's last quarter, else at a character boundary.
std::size_t ChunkEnd(const std::string& text, std::size_t start, std::size_t end) {
  if (end - start <= kEncodeChunk) return end;
  std::size_t cut = start + kEncodeChunk;
  for (std::size_t i = cut; i > start + kEncodeChunk * 3 / 4; --i)
    if (text[i] == ' ') return i;  // the space starts the next chunk, as "▁word" does
  while (cut > start && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut > start ? cut : start + kEncodeChunk;
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool IsFile(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool IsDir(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string Gunzip(const std::string& path) {
  const std::string packed = io::ReadFile(path, kMaxText);
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw Error("zlib could not start to read '" + path + "'.");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&z, inflateEnd);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  z.avail_in = static_cast<uInt>(packed.size());
  std::string text;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END)
      throw Error("'" + path + "' is not a valid gzip file (" + (z.msg ? z.msg : "zlib error " + std::to_string(rc)) +
                  "). Rebuild the corpus with scripts/build_corpus.py, or give plain UTF-8 text.");
    text.append(buf, sizeof buf - z.avail_out);
    if (text.size() > kMaxText)
      throw Error("'" + path + "' holds more than " + std::to_string(kMaxText >> 20) +
                  " MB of text, more than a model this small can use.");
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0)
      throw Error("'" + path + "' ends in the middle of its gzip stream (a truncated file?).");
  }
  return text;
}

}  // namespace

std::string ReadText(const std::string& path) {
  return EndsWith(path, ".gz") ? Gunzip(path) : io::ReadFile(path, kMaxText);
}

namespace {

void EncodeParagraph(const Tokenizer& tok, const std::string& text, std::size_t start, std::size_t end,
                     std::vector<std::int32_t>& ids, const std::atomic<bool>* stop) {
  ids.push_back(tok.bos());
  while (start < end) {
    if (stop && stop->load()) throw Stopped();
    const std::size_t cut = ChunkEnd(text, start, end);
    const std::vector<int> chunk = tok.Encode(text.substr(start, cut - start));
    if (ids.size() + chunk.size() > kMaxPieces)  // before the vector grows past the cap
      throw Error("the corpus makes more than " + std::to_string(kMaxPieces >> 20) +
                  " M pieces, more than the training memory holds beside a step. Use a smaller corpus.");
    ids.insert(ids.end(), chunk.begin(), chunk.end());
    start = cut;
  }
}

}  // namespace

std::vector<std::int32_t> EncodeParagraphs(const Tokenizer& tok, const std::string& text,
                                           const std::atomic<bool>* stop) {
  std::vector<std::int32_t> ids;
  ids.reserve(std::min(text.size() / 3, kMaxPieces));
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) EncodeParagraph(tok, text, start, end, ids, stop);
    start = end + 1;
  }
  ids.shrink_to_fit();  // held for the whole run
  return ids;
}

namespace {

// train-*.txt and train-*.txt.gz in `dir`, sorted, so the stream's order is fixed.
std::vector<std::string> MoreTrainFiles(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("train-", 0) == 0 && (EndsWith(name, ".txt") || EndsWith(name, ".txt.gz")) &&
        IsFile(e.path().string()))
      out.push_back(dir + "/" + name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

CorpusFiles FindCorpus(const std::string& dir_or_file) {
  if (IsFile(dir_or_file)) return {dir_or_file, "", {}};
  struct stat st {};
  if (stat(dir_or_file.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    throw Error("--corpus '" + dir_or_file + "' is " +
                (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                 : S_ISFIFO(st.st_mode)                     ? "a pipe (FIFO)"
                                                            : "neither a file nor a directory") +
                ", not text: it may never end. Give a directory with train.txt and valid.txt, or one text file, "
                "one paragraph a line.");
  if (stat(dir_or_file.c_str(), &st) != 0 && errno != ENOENT && errno != ENOTDIR)
    throw Error("--corpus '" + dir_or_file + "' cannot be read: " + std::strerror(errno) + ".");
  if (!IsDir(dir_or_file))
    throw Error("--corpus '" + dir_or_file +
                "' does not exist. Give a directory with train.txt and valid.txt "
                "(plain or .gz; scripts/build_corpus.py writes them) or one text file, one paragraph a line.");
  CorpusFiles f;
  for (const char* name : {"train.txt", "train.txt.gz"})
    if (IsFile(dir_or_file + "/" + name)) f.train = dir_or_file + "/" + name;
  for (const char* name : {"valid.txt", "valid.txt.gz"})
    if (IsFile(dir_or_file + "/" + name)) f.valid = dir_or_file + "/" + name;
  if (f.train.empty())
    throw Error("--corpus '" + dir_or_file +
                "' has no train.txt or train.txt.gz. scripts/build_corpus.py --out DIR "
                "writes both splits.");
  if (f.valid.empty())
    throw Error("--corpus '" + dir_or_file +
                "' has train text but no valid.txt or valid.txt.gz: the validation "
                "loss needs held-out text.");
  f.more_train = MoreTrainFiles(dir_or_file);
  return f;
}

EncodedCorpus LoadCorpus(const std::string& dir_or_file, const Tokenizer& tok, const std::atomic<bool>* stop) {
  const CorpusFiles f = FindCorpus(dir_or_file);
  EncodedCorpus c;
  if (!f.valid.empty()) {
    c.train = EncodeParagraphs(tok, ReadText(f.train), stop);
    for (const std::string& more : f.more_train) {
      const std::vector<std::int32_t> ids = EncodeParagraphs(tok, ReadText(more), stop);
      c.train.insert(c.train.end(), ids.begin(), ids.end());
    }
    c.valid = EncodeParagraphs(tok, ReadText(f.valid), stop);
  } else {
    // One file: every 20th paragraph held out, as the corpus script splits documents;
    // each encoded where it lies (no copies of the text).
    const std::string text = ReadText(f.train);
    std::size_t start = 0, line = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      if (end > start) EncodeParagraph(tok, text, start, end, line % 20 == 19 ? c.valid : c.train, stop);
      ++line;
      start = end + 1;
    }
  }
  c.train.shrink_to_fit();
  c.valid.shrink_to_fit();
  if (c.train.size() + c.valid.size() > kMaxPieces)
    throw Error("the corpus makes more than " + std::to_string(kMaxPieces >> 20) +
                " M pieces, more than the training memory holds beside a step. Use a smaller corpus.");
  char buf[256];
  std::snprintf(buf, sizeof buf, "%zu pieces of training text, %zu held out", c.train.size(), c.valid.size());
  c.description = buf;
  return c;
}

}  // namespace mha::lm
