#include "lm/corpus.hpp"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "io/files.hpp"
#include "mha/config.hpp"

namespace mha::lm {
namespace {

constexpr std::size_t kMaxText = std::size_t(512) << 20;

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

std::vector<std::int32_t> EncodeParagraphs(const Tokenizer& tok, const std::string& text) {
  std::vector<std::int32_t> ids;
  ids.reserve(text.size() / 3);
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) {
      ids.push_back(tok.bos());
      for (int id : tok.Encode(text.substr(start, end - start))) ids.push_back(id);
    }
    start = end + 1;
  }
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
  if (!IsDir(dir_or_file))
    throw Error("--corpus '" + dir_or_file + "' does not exist. Give a directory with train.txt and valid.txt "
                "(plain or .gz; scripts/build_corpus.py writes them) or one text file, one paragraph a line.");
  CorpusFiles f;
  for (const char* name : {"train.txt", "train.txt.gz"})
    if (IsFile(dir_or_file + "/" + name)) f.train = dir_or_file + "/" + name;
  for (const char* name : {"valid.txt", "valid.txt.gz"})
    if (IsFile(dir_or_file + "/" + name)) f.valid = dir_or_file + "/" + name;
  if (f.train.empty())
    throw Error("--corpus '" + dir_or_file + "' has no train.txt or train.txt.gz. scripts/build_corpus.py --out DIR "
                "writes both splits.");
  if (f.valid.empty())
    throw Error("--corpus '" + dir_or_file + "' has train text but no valid.txt or valid.txt.gz: the validation "
                "loss needs held-out text.");
  f.more_train = MoreTrainFiles(dir_or_file);
  return f;
}

EncodedCorpus LoadCorpus(const std::string& dir_or_file, const Tokenizer& tok) {
  const CorpusFiles f = FindCorpus(dir_or_file);
  EncodedCorpus c;
  if (!f.valid.empty()) {
    c.train = EncodeParagraphs(tok, ReadText(f.train));
    for (const std::string& more : f.more_train) {
      const std::vector<std::int32_t> ids = EncodeParagraphs(tok, ReadText(more));
      c.train.insert(c.train.end(), ids.begin(), ids.end());
    }
    c.valid = EncodeParagraphs(tok, ReadText(f.valid));
  } else {
    // One file: every 20th paragraph held out, as the corpus script splits documents.
    const std::string text = ReadText(f.train);
    std::string train, valid;
    std::size_t start = 0, line = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      (line++ % 20 == 19 ? valid : train).append(text, start, end - start).push_back('\n');
      start = end + 1;
    }
    c.train = EncodeParagraphs(tok, train);
    c.valid = EncodeParagraphs(tok, valid);
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "%zu pieces of training text, %zu held out", c.train.size(), c.valid.size());
  c.description = buf;
  return c;
}

}  // namespace mha::lm
