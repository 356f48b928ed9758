// The language model's text side: the SentencePiece wrapper round-trips English and
// Korean (decode(encode(s)) == NFC(s), with NFC written out here as the composed code
// points, not computed by the code under test), refuses bad tokenizer files, and the
// corpus reader gives BOS + pieces per paragraph; core's text windows are the stream
// shifted by one.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <cmath>

#include "lm/corpus.hpp"
#include "lm/language_model.hpp"
#include "lm/minimal_pairs.hpp"
#include "lm/tokenizer.hpp"
#include "mha/config.hpp"
#include "mha/text_task.hpp"
#include "../temp_dir.hpp"

namespace {

const std::string kTokenizer = std::string(MHAVIZ_ASSETS) + "/models/mhaviz-small.model";

std::string TempPath(const char* name) {
  return "/tmp/mhaviz_lm_test_" + std::to_string(static_cast<long>(getpid())) + "_" + name;
}

}  // namespace

TEST_CASE("Tokenizer: decode(encode(s)) == NFC(s) for English and Korean", "[lm]") {
  const mha::lm::Tokenizer tok = mha::lm::Tokenizer::Load(kTokenizer);
  REQUIRE(tok.vocab_size() == 4000);
  const std::vector<std::string> sentences = {"The cat sat on the mat.",
                                              "Select the cells, then choose Format - Cells.",
                                              "고양이가 쥐를 잡았다.",
                                              "뷁",  // 뷁 is in no piece: it falls back to its UTF-8 bytes
                                              "셀을 선택한 다음 서식 - 셀을 선택합니다.",
                                              "LibreOffice Calc에서 표를 만듭니다 (2024년)."};
  for (const std::string& s : sentences) {
    const std::vector<int> ids = tok.Encode(s);
    CHECK(!ids.empty());
    CHECK(tok.Decode(ids) == s);
  }
  // "한글" typed as conjoining jamo (NFD: U+1112 U+1161 U+11AB U+1100 U+1173 U+11AF)
  // encodes as the composed syllables U+D55C U+AE00 would.
  const std::string nfd = "\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB\xE1\x84\x80\xE1\x85\xB3\xE1\x86\xAF";
  const std::string nfc = "\xED\x95\x9C\xEA\xB8\x80";
  CHECK(tok.Encode(nfd) == tok.Encode(nfc));
  CHECK(tok.Decode(tok.Encode(nfd)) == nfc);
  // Pieces as the vocabulary spells them, BOS as a control id dropped by Decode.
  const std::vector<int> the = tok.Encode("The");
  CHECK(tok.Pieces(the) == std::vector<std::string>{"\xE2\x96\x81The"});
  std::vector<int> with_bos = the;
  with_bos.insert(with_bos.begin(), tok.bos());
  CHECK(tok.Decode(with_bos) == "The");
  CHECK_THROWS_WITH(tok.Pieces({4000}), Catch::Contains("outside the tokenizer's 4000 pieces"));
  CHECK_THROWS_WITH(tok.Encode("\xFF\xFE"), Catch::Contains("not valid UTF-8: byte 0 (0xFF)"));
  // A bad byte after valid Korean is found where it is; a cut-off character too.
  CHECK_THROWS_WITH(tok.Encode("\xEA\xB3\xA0\xEC\x96\x91 \xC3("), Catch::Contains("byte 7 (0xC3)"));
  CHECK_THROWS_WITH(tok.Encode("cat \xEA\xB3"), Catch::Contains("byte 4 (0xEA)"));
  CHECK(mha::lm::Nfc("\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB") == "\xED\x95\x9C");
}

TEST_CASE("Tokenizer: characters spelled as byte pieces are named with their bytes", "[lm]") {
  const mha::lm::Tokenizer tok = mha::lm::Tokenizer::Load(kTokenizer);
  // 뷁 is a syllable the corpus never has; 쥐, from the teaching text, is a piece.
  const auto spelled = mha::lm::ByteSpellings(tok.Pieces(tok.Encode("고양이가 뷁를 잡았다. 뷁")));
  REQUIRE(spelled.size() == 1);  // twice in the text, named once
  CHECK(spelled[0].text == "뷁");
  CHECK(spelled[0].pieces == "<0xEB><0xB7><0x81>");
  CHECK(mha::lm::ByteSpellings(tok.Pieces(tok.Encode("The cat sat on the mat."))).empty());
  CHECK(mha::lm::ByteSpellings(tok.Pieces(tok.Encode("고양이가 쥐를 잡았다"))).empty());
  // Bytes that do not make whole characters are shown as escapes; other pieces break runs.
  const auto cut = mha::lm::ByteSpellings({"<0xEC>", "<0xA5>", "\xE2\x96\x81the", "<0x41>", "<0xZZ>", "<0x41>"});
  REQUIRE(cut.size() == 2);
  CHECK(cut[0].text == "\\xEC\\xA5");
  CHECK(cut[0].pieces == "<0xEC><0xA5>");
  CHECK(cut[1].text == "A");
}

TEST_CASE("Tokenizer: a missing or corrupt model file is refused with a teaching message", "[lm]") {
  CHECK_THROWS_WITH(mha::lm::Tokenizer::Load("/nonexistent/mhaviz-small.model"), Catch::Contains("Cannot read"));
  const std::string bad = TempPath("bad.model");
  std::ofstream(bad) << "this is not a protobuf";
  CHECK_THROWS_WITH(mha::lm::Tokenizer::Load(bad), Catch::Contains("is not a SentencePiece tokenizer model"));
  std::remove(bad.c_str());
}

TEST_CASE("Corpus: BOS then the pieces of each paragraph, gzip read, truncated gzip refused", "[lm]") {
  const mha::lm::Tokenizer tok = mha::lm::Tokenizer::Load(kTokenizer);
  const std::vector<std::int32_t> ids = mha::lm::EncodeParagraphs(tok, "The cat.\n\n고양이\n");
  std::vector<std::int32_t> want = {tok.bos()};
  for (int id : tok.Encode("The cat.")) want.push_back(id);
  want.push_back(tok.bos());
  for (int id : tok.Encode("고양이")) want.push_back(id);
  CHECK(ids == want);
  const std::string valid = mha::lm::ReadText(std::string(MHAVIZ_ASSETS) + "/corpus/valid.txt.gz");
  CHECK(valid.size() > 100000);
  CHECK(valid.back() == '\n');
  const std::string cut = TempPath("cut.txt.gz");
  {
    std::ifstream in(std::string(MHAVIZ_ASSETS) + "/corpus/valid.txt.gz", std::ios::binary);
    std::string head(4096, '\0');
    in.read(&head[0], 4096);
    std::ofstream(cut, std::ios::binary) << head;
  }
  CHECK_THROWS_WITH(mha::lm::ReadText(cut), Catch::Contains("truncated"));
  std::remove(cut.c_str());
}

TEST_CASE("Corpus: a directory's train-*.txt files are more training text, after train.txt, in name order", "[lm]") {
  const mha::lm::Tokenizer tok = mha::lm::Tokenizer::Load(kTokenizer);
  TempDir d;
  std::ofstream(d / "train.txt") << "The cat.\n";
  std::ofstream(d / "valid.txt") << "The dog.\n";
  std::ofstream(d / "train-b.txt") << "고양이\n";
  std::ofstream(d / "train-a.txt") << "쥐\n";
  std::ofstream(d / "other.txt") << "not read\n";
  const mha::lm::CorpusFiles f = mha::lm::FindCorpus(d.path);
  CHECK(f.more_train == std::vector<std::string>{d / "train-a.txt", d / "train-b.txt"});
  const mha::lm::EncodedCorpus c = mha::lm::LoadCorpus(d.path, tok);
  CHECK(c.train == mha::lm::EncodeParagraphs(tok, "The cat.\n쥐\n고양이\n"));
  CHECK(c.valid == mha::lm::EncodeParagraphs(tok, "The dog.\n"));
}

TEST_CASE("Minimal pairs: each line is checked, naming the line", "[lm]") {
  const std::string good = R"({"phenomenon": "p", "good": "고양이가 쥐를 잡았다.", "bad": "고양이이 쥐를 잡았다.", )"
                           R"("cue": "고양이", "prefix": "고양이"})";
  const auto pairs = mha::lm::ParseMinimalPairs(good + "\n\n" + good + "\n", "f");
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[1].line == 3);
  CHECK(pairs[0].cue == "고양이");
  CHECK_THROWS_WITH(mha::lm::ParseMinimalPairs(good + "\n[1]\n", "f"), Catch::Contains("f line 2: not a JSON object"));
  CHECK_THROWS_WITH(mha::lm::ParseMinimalPairs(R"({"good": "a", "bad": "b", "cue": "a", "prefix": "a"})", "f"),
                    Catch::Contains("\"phenomenon\" is missing"));
  CHECK_THROWS_WITH(
      mha::lm::ParseMinimalPairs(R"({"phenomenon": "p", "good": "a b", "bad": "a b", "cue": "a", "prefix": "a"})", "f"),
      Catch::Contains("the same sentence"));
  CHECK_THROWS_WITH(
      mha::lm::ParseMinimalPairs(R"({"phenomenon": "p", "good": "a b", "bad": "a c", "cue": "z", "prefix": "a"})", "f"),
      Catch::Contains("not in the good sentence"));
  CHECK_THROWS_WITH(mha::lm::ParseMinimalPairs("\n \n", "f"), Catch::Contains("no pairs"));
}

TEST_CASE("Minimal pairs: the control head is the found head's layer's head that looks least at the cue", "[lm]") {
  mha::lm::PairsReport r;
  r.num_layers = 2;
  r.num_heads = 3;
  mha::lm::PhenomenonScore p;
  p.mean_weight = {0.1, 0.6, 0.05, 0.0, 0.3, 0.2};  // L0H0 L0H1 L0H2 L1H0 L1H1 L1H2
  p.best_layer = 0;
  p.best_head = 1;
  // L1H0 looks least of all, but a control of another layer would not say whether the
  // found head's own layer could do without it.
  CHECK(mha::lm::ControlHead(r, p) == mha::HeadRef{0, 2});
  p.best_layer = 1;
  p.best_head = 1;
  CHECK(mha::lm::ControlHead(r, p) == mha::HeadRef{1, 0});
  // One head a layer: the least-looking head of another layer; one head in all: none.
  r.num_layers = 3;
  r.num_heads = 1;
  p.mean_weight = {0.5, 0.2, 0.1};
  p.best_layer = 0;
  p.best_head = 0;
  CHECK(mha::lm::ControlHead(r, p) == mha::HeadRef{2, 0});
  r.num_layers = 1;
  p.mean_weight = {0.5};
  CHECK(mha::lm::ControlHead(r, p).layer == -1);
}

TEST_CASE("Minimal pairs: knocking out a head scores every phenomenon without it, the same as a knocked-out run",
          "[lm]") {
  const mha::lm::LanguageModel lm = mha::lm::LoadLanguageModel(std::string(MHAVIZ_ASSETS) + "/models/mhaviz-small.npz");
  const std::string text =
      R"({"phenomenon": "a", "good": "고양이가 쥐를 잡았다.", "bad": "고양이이 쥐를 잡았다.", "cue": "고양이", "prefix": "고양이"})"
      "\n"
      R"({"phenomenon": "b", "good": "고양이 두 마리가 잔다.", "bad": "고양이 두 권이 잔다.", "cue": "고양이", "prefix": "고양이 두"})"
      "\n";
  const auto pairs = mha::lm::ParseMinimalPairs(text, "f");
  const mha::lm::PairsReport plain = mha::lm::ScoreMinimalPairs(lm, pairs);
  const mha::lm::PairsKnockouts k = mha::lm::KnockOutFoundHeads(lm, pairs, plain);
  REQUIRE(k.found.size() == 2);
  REQUIRE(k.control.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const mha::lm::KnockoutRun& f = k.runs[static_cast<std::size_t>(k.found[i])];
    CHECK(f.head == mha::HeadRef{plain.phenomena[i].best_layer, plain.phenomena[i].best_head});
    CHECK(k.runs[static_cast<std::size_t>(k.control[i])].head == mha::lm::ControlHead(plain, plain.phenomena[i]));
  }
  for (std::size_t r = 0; r < k.runs.size(); ++r) {
    if (r > 0) CHECK(k.runs[r - 1].head < k.runs[r].head);  // each head once, in order
    const auto a = mha::LayerAblations(lm.model.cfg.num_layers, lm.model.cfg.LayerConfig(), mha::AblationMode::Zero,
                                       {k.runs[r].head}, nullptr);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const mha::lm::PairScore s = mha::lm::ScoreMinimalPair(lm, pairs[i], &a);
      CHECK(k.runs[r].accuracy[i] == (s.correct() ? 1.0 : 0.0));
    }
  }
  // The knock-out reaches the scores: without L0H0 the pair's log-probabilities change.
  const auto a = mha::LayerAblations(lm.model.cfg.num_layers, lm.model.cfg.LayerConfig(), mha::AblationMode::Zero,
                                     {{0, 0}}, nullptr);
  const mha::lm::PairScore with = mha::lm::ScoreMinimalPair(lm, pairs[1]);
  const mha::lm::PairScore without = mha::lm::ScoreMinimalPair(lm, pairs[1], &a);
  CHECK(std::abs(with.logp_good - without.logp_good) > 1e-3);
}

TEST_CASE("Text windows: targets are the tokens shifted by one, deterministic per (seed, index)", "[lm]") {
  std::vector<std::int32_t> ids(100);
  for (int i = 0; i < 100; ++i) ids[static_cast<std::size_t>(i)] = (i * 7) % 13;
  mha::Batch a, b, c;
  mha::MakeWindowBatch(ids, 8, 7, 3, 16, a);
  mha::MakeWindowBatch(ids, 8, 7, 3, 16, b);
  mha::MakeWindowBatch(ids, 8, 7, 4, 16, c);
  CHECK(a.tokens == b.tokens);
  CHECK(a.tokens != c.tokens);
  for (int w = 0; w < 16; ++w) {
    // Find the window's start from its first two tokens' positions: every window is a
    // slice ids[s .. s+8] of the stream.
    bool found = false;
    for (int s = 0; s + 8 < 100 && !found; ++s) {
      bool same = true;
      for (int i = 0; i < 8; ++i)
        same &= a.token(w, i) == ids[static_cast<std::size_t>(s + i)] &&
                a.target(w, i, 0) == ids[static_cast<std::size_t>(s + i + 1)];
      found = same;
    }
    CHECK(found);
  }
  CHECK(mha::CountWindows(ids, 8) == 12);  // (100 - 1) / 8
  mha::MakeConsecutiveBatch(ids, 8, 2, 3, a);
  CHECK(a.token(0, 0) == ids[16]);
  CHECK(a.target(2, 7, 0) == ids[2 * 8 + 2 * 8 + 8]);
  CHECK_THROWS_WITH(mha::CheckTokenStream(ids, 13, 100, "the text"), Catch::Contains("fewer than one window"));
  CHECK_THROWS_WITH(mha::CheckTokenStream(ids, 12, 8, "the text"), Catch::Contains("outside the vocabulary"));
}

TEST_CASE("LanguageModel: RunOnSentence puts BOS first, caps at the context, ranks next pieces", "[lm]") {
  const mha::lm::LanguageModel lm = mha::lm::LoadLanguageModel(std::string(MHAVIZ_ASSETS) + "/models/mhaviz-small.npz");
  const int ctx = lm.model.cfg.max_seq;
  const mha::lm::SentenceRun r = mha::lm::RunOnSentence(lm, "고양이가 쥐를 잡았다", 5);
  REQUIRE(r.ids.size() >= 2);
  CHECK(r.ids[0] == lm.bos);
  CHECK(r.pieces[0] == "<s>");
  CHECK(r.notice.empty());
  REQUIRE(r.next.size() == r.ids.size());
  REQUIRE(r.trace.layers.size() == static_cast<std::size_t>(lm.model.cfg.num_layers));
  for (std::size_t i = 0; i < r.next.size(); ++i) {
    REQUIRE(r.next[i].size() == 5);
    // The softmax of the row, in double, written out here.
    const auto row = r.trace.logits[0].row(static_cast<Eigen::Index>(i));
    const double mx = row.maxCoeff();
    double sum = 0;
    for (Eigen::Index v = 0; v < row.size(); ++v) sum += std::exp(static_cast<double>(row[v]) - mx);
    for (std::size_t j = 0; j < 5; ++j) {
      const mha::lm::NextPiece& p = r.next[i][j];
      CHECK(p.probability == Approx(std::exp(static_cast<double>(row[p.id]) - mx) / sum).epsilon(1e-12));
      CHECK(p.piece == lm.model.cfg.vocab[static_cast<std::size_t>(p.id)]);
      if (j > 0) CHECK(p.probability <= r.next[i][j - 1].probability);
    }
    // At most 4 pieces are likelier than the 5th.
    int above = 0;
    for (Eigen::Index v = 0; v < row.size(); ++v) above += row[v] > row[r.next[i][4].id];
    CHECK(above <= 4);
  }
  std::string long_text;
  for (int i = 0; i < ctx; ++i) long_text += "the cat ";
  const mha::lm::SentenceRun capped = mha::lm::RunOnSentence(lm, long_text, 0);
  CHECK(static_cast<int>(capped.ids.size()) == ctx);
  CHECK(capped.total_pieces > ctx);
  CHECK_THAT(capped.notice, Catch::Contains("at most " + std::to_string(ctx)));
  CHECK(capped.next.empty());
  CHECK_THROWS_WITH(mha::lm::RunOnSentence(lm, "", 5), Catch::Contains("empty"));
  mha::Model plain = lm.model;
  plain.cfg.task.clear();
  CHECK_THROWS_WITH(mha::lm::WrapLanguageModel(plain, lm.tokenizer.path()), Catch::Contains("not a language model"));
}

TEST_CASE("Text windows with --repeat: a span, the same span again, then what followed it", "[lm]") {
  std::vector<std::int32_t> ids(500);
  for (int i = 0; i < 500; ++i) ids[static_cast<std::size_t>(i)] = i;  // every id tells its position
  mha::Batch plain, none, rep;
  mha::MakeWindowBatch(ids, 16, 3, 0, 32, plain);
  mha::MakeWindowBatch(ids, 16, 3, 0, 32, none, 0.0);
  CHECK(plain.tokens == none.tokens);  // repeat 0 draws exactly the plain windows
  mha::MakeWindowBatch(ids, 16, 3, 0, 32, rep, 1.0);
  for (int w = 0; w < 32; ++w) {
    const int s = rep.token(w, 0);
    int len = 1;
    while (len < 16 && rep.token(w, len) == s + len) ++len;  // the span A
    CHECK(len >= 4);
    CHECK(len <= 8);
    for (int i = len; i < 16; ++i) CHECK(rep.token(w, i) == s + (i - len));  // A again, then what followed A
    for (int i = 0; i + 1 < 16; ++i) CHECK(rep.target(w, i, 0) == rep.token(w, i + 1));
  }
}

TEST_CASE("Corpus: a long paragraph is encoded in chunks and keeps the pieces of the whole", "[lm]") {
  // Chunks bound SentencePiece's working memory (~230 bytes per byte encoded at once).
  // Cut before a space, they give the whole paragraph's pieces, up to ties the unigram
  // model breaks either way ("!!" "!" or "!" "!!": one such swap in this text).
  const mha::lm::Tokenizer tok = mha::lm::Tokenizer::Load(kTokenizer);
  const std::string valid = mha::lm::ReadText(std::string(MHAVIZ_ASSETS) + "/corpus/valid.txt.gz");
  std::string paragraph;
  for (std::size_t start = 0; paragraph.size() < 300000;) {  // the held-out text's lines joined: one 300 KB paragraph
    const std::size_t end = valid.find('\n', start);
    paragraph += valid.substr(start, end - start) + " ";
    start = end + 1;
  }
  paragraph.pop_back();
  const std::vector<std::int32_t> ids = mha::lm::EncodeParagraphs(tok, paragraph + "\n");
  std::vector<std::int32_t> whole = {tok.bos()};
  for (int id : tok.Encode(paragraph)) whole.push_back(id);
  REQUIRE(ids.size() == whole.size());
  CHECK(ids.front() == tok.bos());
  const std::vector<int> text_ids(ids.begin() + 1, ids.end()), whole_ids(whole.begin() + 1, whole.end());
  CHECK(tok.Decode(text_ids) == tok.Decode(whole_ids));
  std::size_t differ = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) differ += ids[i] != whole[i];
  CHECK(differ * 1000 < ids.size());
}
