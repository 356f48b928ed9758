#include "tour/tour_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mha::tour {

using nlohmann::json;

namespace {

// Line and column (1-based) of byte `pos` of `text`, as an editor counts them.
std::string LineColumn(const std::string& text, std::size_t pos) {
  pos = std::min(pos, text.size());
  const long line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n');
  const std::size_t nl = text.rfind('\n', pos == 0 ? 0 : pos - 1);
  const std::size_t col = nl == std::string::npos ? pos + 1 : pos - nl;
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

}  // namespace

json JsonReader::Parse(const std::string& text) {
  // Checked while parsing: a file of a million '[' would otherwise be parsed whole into
  // nested values (and their destructors recurse) before any check ran.
  const json::parser_callback_t depth = [&](int d, json::parse_event_t, json&) {
    if (d > kMaxDepth) {
      throw LessonError(name_ + ": nested " + std::to_string(d) + " levels deep; a lesson file needs at most " +
                        std::to_string(kMaxDepth) + ".");
    }
    return true;
  };
  try {
    return json::parse(text, depth);
  } catch (const json::parse_error& e) {
    std::string why = e.what();
    const std::size_t p = why.find("; last read");
    const bool utf8 = why.find("UTF-8") != std::string::npos || why.find("ill-formed") != std::string::npos;
    throw LessonError(name_ + ", " + LineColumn(text, e.byte == 0 ? 0 : e.byte - 1) + ": " +
                      (utf8 ? std::string("the text is not valid UTF-8; save the file as UTF-8.")
                            : "not valid JSON (" + why.substr(0, p) + ")."));
  }
}

void JsonReader::Fail(const std::string& pointer, const std::string& why) const {
  throw LessonError(name_ + ", at " + (pointer.empty() ? std::string("the top") : pointer) + ": " + why);
}

void JsonReader::Object(const json& j, const std::string& at, std::initializer_list<const char*> known) const {
  if (!j.is_object()) Fail(at, "expected an object { ... }, found " + std::string(j.type_name()) + ".");
  for (const auto& item : j.items()) {
    const std::string& key = item.key();
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) {
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      Fail(at + "/" + key.substr(0, 64), "unknown field; the fields here are " + list + ".");
    }
  }
}

std::string JsonReader::Str(const json& j, const std::string& at, const char* key, bool required) const {
  const std::string p = at + "/" + key;
  if (!j.contains(key)) {
    if (required) Fail(p, "missing: this field is required.");
    return {};
  }
  const json& v = j[key];
  if (!v.is_string()) Fail(p, "expected a string, found " + std::string(v.type_name()) + ".");
  const std::string& s = v.get_ref<const std::string&>();
  if (s.size() > kMaxTextBytes)
    Fail(p, std::to_string(s.size()) + " bytes; a text here holds at most " + std::to_string(kMaxTextBytes) + ".");
  return s;
}

int JsonReader::Int(const json& j, const std::string& at, int lo, int hi) const {
  if (!j.is_number_integer())
    Fail(at, "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ".");
  const auto v = j.get<long long>();
  if (v < lo || v > hi)
    Fail(at, std::to_string(v) + " is out of range: from " + std::to_string(lo) + " to " + std::to_string(hi) + ".");
  return static_cast<int>(v);
}

double JsonReader::Number(const json& j, const std::string& at, double lo, double hi) const {
  if (!j.is_number()) Fail(at, "expected a number.");
  const double v = j.get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) Fail(at, "the number is out of range.");
  return v;
}

Text JsonReader::TextAt(const json& j, const std::string& at) const {
  Object(j, at, {"ko", "en"});
  return {Str(j, at, "ko", true), Str(j, at, "en", true)};
}

Text JsonReader::TextOf(const json& j, const std::string& at, const char* key, bool required) const {
  if (!j.contains(key)) {
    if (required) Fail(at + "/" + key, "missing: give it in both languages, {\"ko\": \"...\", \"en\": \"...\"}.");
    return {};
  }
  return TextAt(j[key], at + "/" + key);
}

Config JsonReader::ConfigOf(const json& j, const std::string& at) const {
  Object(j, at, {"d_model", "num_heads", "num_kv_heads", "seed", "mask", "norm", "scale", "block"});
  Config c;
  if (j.contains("d_model")) c.d_model = Int(j["d_model"], at + "/d_model", 1, Limits::kMaxDModel);
  if (j.contains("num_heads")) c.num_heads = Int(j["num_heads"], at + "/num_heads", 1, Limits::kMaxHeads);
  if (j.contains("num_kv_heads")) c.num_kv_heads = Int(j["num_kv_heads"], at + "/num_kv_heads", 0, Limits::kMaxHeads);
  if (j.contains("seed")) c.seed = static_cast<std::uint64_t>(Int(j["seed"], at + "/seed", 0, 1 << 30));
  if (j.contains("scale")) {
    if (!j["scale"].is_boolean()) Fail(at + "/scale", "true (divide the scores by sqrt(d_k)) or false.");
    c.scale = j["scale"].get<bool>();
  }
  const std::string mask = Str(j, at, "mask", false), norm = Str(j, at, "norm", false),
                    block = Str(j, at, "block", false);
  if (mask == "causal")
    c.mask = Mask::Causal;
  else if (!mask.empty() && mask != "none")
    Fail(at + "/mask", "none or causal.");
  if (norm == "pre")
    c.norm = Norm::Pre;
  else if (norm == "none")
    c.norm = Norm::None;
  else if (!norm.empty() && norm != "post")
    Fail(at + "/norm", "post, pre or none.");
  if (block == "encoder")
    c.block = Block::Encoder;
  else if (!block.empty() && block != "attention")
    Fail(at + "/block", "attention or encoder (with the FFN).");
  try {
    Validate(c, 1, 1);
  } catch (const Error& e) {
    Fail(at, e.what());
  }
  return c;
}

}  // namespace mha::tour
