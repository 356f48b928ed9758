// The text a language model trains on: a UTF-8 file of one paragraph a line (plain or
// gzip-compressed), tokenized paragraph by paragraph with BOS before each, into one
// stream of ids (core's text_task.hpp cuts it into windows).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "lm/tokenizer.hpp"
#include "mha/config.hpp"

namespace mha::lm {

// A file's text; ".gz" files are decompressed (zlib). Throws mha::Error with a teaching
// message for a missing, unreadable, corrupt or over-large (> 256 MB of text) file.
std::string ReadText(const std::string& path);

// Thrown when `stop` was set while a corpus was being tokenized (a Ctrl-C in set-up).
struct Stopped : Error {
  Stopped() : Error("stopped while the corpus was being tokenized") {}
};

// BOS, the pieces of line 1, BOS, the pieces of line 2, ...; empty lines are skipped.
// A paragraph longer than 64 KiB is encoded in chunks cut between words, which bounds
// SentencePiece's working memory (about 230 bytes per byte it encodes at once). At most
// 64 M pieces (mha::Error beyond). `stop`, if set, is polled between chunks (Stopped).
std::vector<std::int32_t> EncodeParagraphs(const Tokenizer& tok, const std::string& text,
                                           const std::atomic<bool>* stop = nullptr);

// The training and validation text of --corpus: a directory holding train.txt[.gz] and
// valid.txt[.gz] (as scripts/build_corpus.py writes), or one file whose every 20th line
// is held out for validation. A directory's train-*.txt[.gz] files (the designed teaching
// text scripts/make_teaching_corpus.py writes) are more training text, read after
// train.txt in name order; validation stays valid.txt alone.
struct CorpusFiles {
  std::string train, valid;             // file names; valid empty when held out from train
  std::vector<std::string> more_train;  // train-*.txt[.gz], sorted
};
CorpusFiles FindCorpus(const std::string& dir_or_file);

struct EncodedCorpus {
  std::vector<std::int32_t> train, valid;
  std::string description;  // "train.txt.gz (1.77 M pieces), valid.txt.gz (0.11 M pieces)"
};
EncodedCorpus LoadCorpus(const std::string& dir_or_file, const Tokenizer& tok, const std::atomic<bool>* stop = nullptr);

}  // namespace mha::lm
