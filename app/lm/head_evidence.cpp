#include "lm/head_evidence.hpp"

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "io/assets.hpp"
#include "io/files.hpp"
#include "io/json_parse.hpp"
#include "lm/corpus.hpp"
#include "lm/head_labels.hpp"
#include "lm/head_names.hpp"

namespace mha::lm {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A labels file is a few kilobytes per phenomenon; anything near this is not one.
constexpr std::size_t kMaxEvidenceFile = std::size_t(4) << 20;
constexpr const char* kFormat = "mhaviz-head-labels";

MeasuredFile Measured(const std::string& path) { return {fs::path(path).filename().string(), FileHash(path)}; }

json FileJson(const MeasuredFile& f) { return {{"name", f.name}, {"hash", f.hash}}; }
MeasuredFile FileFrom(const json& j) { return {j.at("name").get<std::string>(), j.at("hash").get<std::string>()}; }

json ProfileJson(const HeadProfile& p) {
  return {{"layer", p.layer},         {"head", p.head},    {"label", p.label}, {"score", p.score},
          {"back", p.back},           {"self", p.self},    {"first", p.first}, {"reverse", p.reverse},
          {"induction", p.induction}, {"sorted", p.sorted}};
}
HeadProfile ProfileFrom(const json& j) {
  HeadProfile p;
  p.layer = j.at("layer").get<int>();
  p.head = j.at("head").get<int>();
  p.label = j.at("label").get<std::string>();
  p.score = j.at("score").get<double>();
  p.back = j.at("back").get<std::vector<double>>();
  p.self = j.at("self").get<double>();
  p.first = j.at("first").get<double>();
  p.reverse = j.at("reverse").get<double>();
  p.induction = j.at("induction").get<double>();
  p.sorted = j.at("sorted").get<double>();
  return p;
}

json PhenomenonJson(const PhenomenonScore& p) {
  return {{"phenomenon", p.phenomenon},
          {"pairs", p.pairs},
          {"correct", p.correct},
          {"accuracy", p.accuracy},
          {"attention_pairs", p.attention_pairs},
          {"mean_weight", p.mean_weight},
          {"uniform", p.uniform},
          {"best", {{"layer", p.best_layer}, {"head", p.best_head}, {"weight", p.best_weight}}}};
}
PhenomenonScore PhenomenonFrom(const json& j) {
  PhenomenonScore p;
  p.phenomenon = j.at("phenomenon").get<std::string>();
  p.pairs = j.at("pairs").get<int>();
  p.correct = j.at("correct").get<int>();
  p.accuracy = j.at("accuracy").get<double>();
  p.attention_pairs = j.at("attention_pairs").get<int>();
  p.mean_weight = j.at("mean_weight").get<std::vector<double>>();
  p.uniform = j.at("uniform").get<double>();
  const json& b = j.at("best");
  p.best_layer = b.at("layer").get<int>();
  p.best_head = b.at("head").get<int>();
  p.best_weight = b.at("weight").get<double>();
  return p;
}

HeadRef HeadFrom(const json& j, int L, int H) {
  const HeadRef h{j.at("layer").get<int>(), j.at("head").get<int>()};
  if (h.layer < 0 || h.layer >= L || h.head < 0 || h.head >= H)
    throw Error("it names head " + HeadName(h) + ", which a model of " + std::to_string(L) + " x " + std::to_string(H) +
                " heads does not have");
  return h;
}

// The table as TableJson wrote it, and the intact report's phenomena beside it.
KnockoutTable TableFrom(const json& j, const json& phenomena, int L, int H) {
  KnockoutTable t;
  t.num_layers = L;
  t.num_heads = H;
  t.mode = j.at("mode").get<std::string>() == "mean" ? AblationMode::Mean : AblationMode::Zero;
  for (const json& h : j.at("heads")) t.heads.push_back(HeadFrom(h, L, H));
  t.level = j.at("test").at("level").get<double>();
  t.plain.num_layers = L;
  t.plain.num_heads = H;
  for (const json& p : phenomena) {
    t.plain.phenomena.push_back(PhenomenonFrom(p));
    if (t.plain.phenomena.back().mean_weight.size() != static_cast<std::size_t>(L * H))
      throw Error("a phenomenon's cue weights are not one per head");
  }
  for (const json& r : j.at("rows")) {
    PhenomenonRow row;
    row.phenomenon = r.at("phenomenon").get<std::string>();
    row.pairs = r.at("pairs").get<int>();
    row.correct = r.at("correct").get<int>();
    row.accuracy = r.at("accuracy").get<double>();
    row.band = CoinBand(row.pairs);  // a function of the count: recomputed, not trusted
    row.learned = r.at("learned").get<bool>();
    for (const json& c : r.at("knocked_out")) {
      KnockoutCell cell;
      cell.head = HeadFrom(c, L, H);
      cell.correct = c.at("correct").get<int>();
      cell.accuracy = c.at("accuracy").get<double>();
      cell.lost = c.at("lost").get<int>();
      cell.gained = c.at("gained").get<int>();
      cell.p = c.at("p").get<double>();
      cell.significant = c.at("significant").get<bool>();
      cell.to_chance = c.at("to_chance").get<bool>();
      row.cells.push_back(cell);
    }
    if (row.cells.size() != t.heads.size()) throw Error("a row of the table does not have one cell per head");
    for (const json& name : r.at("carriers"))
      for (const KnockoutCell& c : row.cells)
        if (HeadName(c.head) == name.get<std::string>()) row.carriers.push_back(c.head);
    row.sole = r.at("sole_carrier").get<bool>();
    if (const json& e = r.at("example"); !e.is_null()) {
      row.example.line = e.at("line").get<int>();
      row.example.good = e.at("good").get<std::string>();
      row.example.bad = e.at("bad").get<std::string>();
      row.example.cue = e.at("cue").get<std::string>();
      row.example.margin = e.at("margin").get<double>();
      row.example.margin_without = e.at("margin_without").get<std::vector<double>>();
    }
    t.rows.push_back(std::move(row));
  }
  if (t.rows.size() != t.plain.phenomena.size()) throw Error("the table's rows are not the phenomena");
  return t;
}

std::string Hex(std::uint64_t v, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%0*llx", digits, static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string FileHash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("Cannot read '" + path + "' to hash it.");
  std::uint64_t fnv = 1469598103934665603ull;
  uLong crc = crc32(0L, Z_NULL, 0);
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize n = in.gcount();
    for (std::streamsize i = 0; i < n; ++i) {
      fnv ^= static_cast<unsigned char>(buf[static_cast<std::size_t>(i)]);
      fnv *= 1099511628211ull;
    }
    crc = crc32(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<uInt>(n));
  }
  return Hex(fnv, 16) + Hex(crc, 8);
}

std::string FindPairsFile(const std::string& checkpoint) {
  std::error_code ec;
  const fs::path beside = fs::path(checkpoint).parent_path().parent_path() / "corpus" / "pairs.jsonl";
  if (fs::is_regular_file(beside, ec)) return beside.string();
  const std::string shipped = io::FindAsset("corpus", "pairs.jsonl");
  if (!shipped.empty()) return shipped;
  throw Error("No pairs.jsonl in " + beside.parent_path().string() +
              " or in the app's assets/corpus: a head's job is measured on the minimal pairs.");
}

std::string ShippedEvidencePath(const std::string& checkpoint) {
  fs::path p(checkpoint);
  return (p.parent_path() / (p.stem().string() + ".labels.json")).string();
}

std::string EvidenceCacheDir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/mhaviz/head-labels";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/mhaviz/head-labels";
}

HeadEvidence MeasureHeadEvidence(const LanguageModel& lm, const TableProgress& progress) {
  HeadEvidence e;
  const std::string valid = FindValidationText(lm.path), pairs_path = FindPairsFile(lm.path);
  e.checkpoint = Measured(lm.path);
  e.pairs = Measured(pairs_path);
  e.validation = Measured(valid);
  e.windows = kLabelWindows;
  e.profiles = ProfileOnValidation(lm, EncodeParagraphs(lm.tokenizer, ReadText(valid)), kLabelWindows);
  const std::vector<MinimalPair> pairs = LoadMinimalPairs(pairs_path);
  e.table = KnockOutHeads(lm, pairs, EveryHead(lm), AblationMode::Zero, nullptr, nullptr, progress);
  return e;
}

nlohmann::json EvidenceJson(const HeadEvidence& e) {
  json profiles = json::array(), phenomena = json::array(), labels = json::array();
  for (const HeadProfile& p : e.profiles) profiles.push_back(ProfileJson(p));
  // The names every view shows (lm/head_names.hpp), for readers without the code; read
  // back, they are made again from the evidence.
  for (const HeadLabel& l : NameEveryHead(e)) labels.push_back(LabelJson(l));
  for (const PhenomenonScore& p : e.table.plain.phenomena) phenomena.push_back(PhenomenonJson(p));
  return {{"format", kFormat},
          {"version", 1},
          {"checkpoint", FileJson(e.checkpoint)},
          {"pairs_file", FileJson(e.pairs)},
          {"validation_text", FileJson(e.validation)},
          {"validation_windows", e.windows},
          {"num_layers", e.table.num_layers},
          {"num_heads", e.table.num_heads},
          {"profiles", profiles},
          {"phenomena", phenomena},
          {"table", TableJson(e.table)},
          {"labels", labels}};
}

HeadEvidence EvidenceFromJson(const nlohmann::json& j, int num_layers, int num_heads) {
  try {
    if (!j.is_object() || j.value("format", "") != kFormat || j.value("version", 0) != 1)
      throw Error("it is not an mhaviz head-labels file of version 1");
    if (j.at("num_layers").get<int>() != num_layers || j.at("num_heads").get<int>() != num_heads)
      throw Error("it was measured on a model of another shape");
    HeadEvidence e;
    e.checkpoint = FileFrom(j.at("checkpoint"));
    e.pairs = FileFrom(j.at("pairs_file"));
    e.validation = FileFrom(j.at("validation_text"));
    e.windows = j.at("validation_windows").get<int>();
    for (const json& p : j.at("profiles")) {
      e.profiles.push_back(ProfileFrom(p));
      HeadFrom(p, num_layers, num_heads);
    }
    if (e.profiles.size() != static_cast<std::size_t>(num_layers * num_heads))
      throw Error("it does not have one pattern per head");
    e.table = TableFrom(j.at("table"), j.at("phenomena"), num_layers, num_heads);
    return e;
  } catch (const json::exception& x) {
    throw Error(std::string("a field is missing or of the wrong kind (") + io::Excerpt(x.what(), 120) + ")");
  }
}

HeadEvidence LoadEvidence(const std::string& path, int num_layers, int num_heads) {
  try {
    return EvidenceFromJson(io::ParseJson(io::ReadFile(path, kMaxEvidenceFile)), num_layers, num_heads);
  } catch (const Error& x) {
    throw Error("'" + path + "' cannot be read as head labels: " + x.what() + ".");
  }
}

void SaveEvidence(const HeadEvidence& e, const std::string& path) {
  io::WriteFileAtomic(path, EvidenceJson(e).dump(1, ' ', false, json::error_handler_t::replace) + "\n");
}

std::optional<HeadEvidence> FindHeadEvidence(const LanguageModel& lm, std::string* where) {
  const int L = lm.model.cfg.num_layers, H = lm.model.cfg.layer.num_heads;
  std::string why;
  try {
    const MeasuredFile checkpoint = Measured(lm.path), pairs = Measured(FindPairsFile(lm.path)),
                       validation = Measured(FindValidationText(lm.path));
    for (const std::string& path :
         {ShippedEvidencePath(lm.path), EvidenceCacheDir() + "/" + checkpoint.hash + ".json"}) {
      std::error_code ec;
      if (!fs::is_regular_file(path, ec)) continue;
      try {
        HeadEvidence e = LoadEvidence(path, L, H);
        if (e.checkpoint.hash == checkpoint.hash && e.pairs == pairs && e.validation == validation) {
          if (where) *where = path;
          return e;
        }
        why = "'" + path + "' was measured on other files (the checkpoint, the pairs or the validation text changed)";
      } catch (const Error& x) {
        why = x.what();
      }
    }
  } catch (const Error& x) {
    why = x.what();
  }
  if (where) *where = why.empty() ? "no measured labels for this checkpoint" : why;
  return std::nullopt;
}

HeadEvidence MeasureAndCache(const LanguageModel& lm, const TableProgress& progress) {
  HeadEvidence e = MeasureHeadEvidence(lm, progress);
  try {
    std::error_code ec;
    fs::create_directories(EvidenceCacheDir(), ec);
    SaveEvidence(e, EvidenceCacheDir() + "/" + e.checkpoint.hash + ".json");
  } catch (const Error&) {
    // A read-only home still gets the labels, measured again next time.
  }
  return e;
}

}  // namespace mha::lm
