#include "checkpoint.hpp"

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <type_traits>
#include <nlohmann/json.hpp>

#include "json_parse.hpp"

namespace mha::io {
namespace {

using nlohmann::json;

[[noreturn]] void Fail(const std::string& m) { throw Error(m); }

// One of an enum's spellings (its ToString), or a teaching error listing them.
template <typename E>
E Choose(const std::string& what, const std::string& key, const std::string& v, std::initializer_list<E> options) {
  std::string names;
  for (E e : options) {
    if (v == ToString(e)) return e;
    names += std::string(names.empty() ? "" : ", ") + ToString(e);
  }
  Fail(what + ": config field '" + key + "' is \"" + Excerpt(v) + "\"; it must be one of " + names + ".");
}

const json& Field(const json& j, const std::string& key, const std::string& what) {
  const auto it = j.find(key);
  if (it == j.end())
    Fail(what + ": the config has no '" + key +
         "'. A checkpoint written by 'mhaviz train --out' has every field; "
         "see the README's \"Training files\".");
  return *it;
}

template <typename T>
T Get(const json& j, const std::string& key, const std::string& what) {
  const json& v = Field(j, key, what);
  try {
    if constexpr (std::is_same_v<T, int>) {
      if (!v.is_number_integer()) throw std::invalid_argument("not an integer");
      const auto n = v.get<std::int64_t>();
      if (n < -(std::int64_t(1) << 30) || n > (std::int64_t(1) << 30)) throw std::invalid_argument("out of range");
      return static_cast<int>(n);
    } else if constexpr (std::is_same_v<T, float>) {
      if (!v.is_number()) throw std::invalid_argument("not a number");
      return v.get<float>();
    } else {
      return v.get<T>();
    }
  } catch (const std::exception&) {
    Fail(what + ": config field '" + key + "' has the wrong type (" + JsonExcerpt(v) + ").");
  }
}

// A string of bytes from a uint8 array (DecodeNpz has turned each byte into a float).
std::string BytesOf(const Array& a, const std::string& what) {
  if (a.source_dtype != "|u1" && a.source_dtype != "<u1" && a.source_dtype != "|i1")
    Fail(what + ": 'config' has dtype '" + a.source_dtype +
         "'; it must be uint8 bytes of UTF-8 JSON, as "
         "numpy.frombuffer(json.dumps(cfg).encode(), dtype=numpy.uint8) gives.");
  if (a.shape.size() != 1) Fail(what + ": 'config' must be a 1-D uint8 array of UTF-8 JSON.");
  std::string s(a.data.size(), '\0');
  for (std::size_t i = 0; i < a.data.size(); ++i) s[i] = static_cast<char>(static_cast<unsigned char>(a.data[i]));
  return s;
}

std::string ShapeText(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Token ids and targets: integer dtypes only, every value whole.
std::vector<std::int32_t> Ids(const Array& a, const std::string& what, const std::string& key) {
  const char kind = a.source_dtype.size() > 1 ? a.source_dtype[1] : '?';
  if (kind != 'i' && kind != 'u')
    Fail(what + ": '" + key + "' has dtype '" + a.source_dtype +
         "'; token ids must be integers (int32 or int64), "
         "e.g. numpy.asarray(ids, dtype=numpy.int64).");
  std::vector<std::int32_t> v(a.data.size());
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    const float x = a.data[i];
    if (!(std::fabs(x) < 16777216.0f))  // 2^24: beyond it float32 no longer holds every integer
      Fail(what + ": '" + key + "' holds " + (a.big_integer.empty() ? std::to_string(x) : a.big_integer) +
           ", far outside any vocabulary (ids are 0 to vocab-1, targets may be -1).");
    v[i] = static_cast<std::int32_t>(x);
  }
  return v;
}

}  // namespace

std::string ModelConfigJson(const ModelConfig& cfg) {
  const Config& c = cfg.layer;
  json j;
  j["format"] = kModelFormat;
  j["version"] = kModelVersion;
  j["d_model"] = c.d_model;
  j["num_heads"] = c.num_heads;
  j["num_kv_heads"] = c.kv_heads();
  j["mask"] = ToString(c.mask);
  j["norm"] = ToString(c.norm);
  j["scale"] = c.scale;
  j["temperature"] = c.temperature;
  j["ln_eps"] = c.ln_eps;
  j["block"] = ToString(c.block);
  j["d_ff"] = c.block == Block::Encoder ? c.ffn_dim() : 0;
  j["activation"] = ToString(c.activation);
  j["seed"] = c.seed;
  j["num_layers"] = cfg.num_layers;
  j["positional"] = ToString(cfg.positional);
  j["max_seq"] = cfg.max_seq;
  j["vocab"] = cfg.vocab;
  j["num_targets"] = cfg.num_targets;
  j["task"] = cfg.task.empty() ? json(nullptr) : ParseJson(cfg.task);
  return j.dump();
}

ModelConfig ParseModelConfigJson(const std::string& text, const std::string& what) {
  json j;
  try {
    j = ParseJson(text);
  } catch (const Error& e) {
    Fail(what + ": 'config' is not JSON that mhaviz can read (" + e.what() +
         "). It must be the UTF-8 JSON text 'mhaviz train' writes.");
  }
  if (!j.is_object()) Fail(what + ": 'config' must be a JSON object.");
  if (!j.contains("format") || j["format"] != kModelFormat)
    Fail(what + " is not an mhaviz model: its config's format is " +
         (j.contains("format") ? JsonExcerpt(j["format"]) : "missing") + ", not \"" + kModelFormat + "\".");
  const int version = Get<int>(j, "version", what);
  if (version != kModelVersion)
    Fail(what + " is a version " + std::to_string(version) + " model; this mhaviz reads version " +
         std::to_string(kModelVersion) + ". Retrain it, or use the mhaviz that wrote it.");
  ModelConfig m;
  Config& c = m.layer;
  c.d_model = Get<int>(j, "d_model", what);
  c.num_heads = Get<int>(j, "num_heads", what);
  c.num_kv_heads = Get<int>(j, "num_kv_heads", what);
  c.mask = Choose(what, "mask", Get<std::string>(j, "mask", what), {Mask::None, Mask::Causal});
  c.norm = Choose(what, "norm", Get<std::string>(j, "norm", what), {Norm::Post, Norm::Pre, Norm::None});
  c.scale = Get<bool>(j, "scale", what);
  c.temperature = Get<float>(j, "temperature", what);
  c.ln_eps = Get<float>(j, "ln_eps", what);
  c.block = Choose(what, "block", Get<std::string>(j, "block", what), {Block::Attention, Block::Encoder});
  c.d_ff = Get<int>(j, "d_ff", what);
  c.activation =
      Choose(what, "activation", Get<std::string>(j, "activation", what), {Activation::Relu, Activation::Gelu});
  if (j.contains("seed")) c.seed = Get<std::uint64_t>(j, "seed", what);
  c.positional_encoding = false;
  m.num_layers = Get<int>(j, "num_layers", what);
  m.positional = Choose(what, "positional", Get<std::string>(j, "positional", what),
                        {Positional::Sinusoidal, Positional::Learned, Positional::None});
  m.max_seq = Get<int>(j, "max_seq", what);
  const json& vocab = Field(j, "vocab", what);
  if (!vocab.is_array() || vocab.size() > static_cast<std::size_t>(ModelLimits::kMaxVocab))
    Fail(what + ": config field 'vocab' must be a list of at most " + std::to_string(ModelLimits::kMaxVocab) +
         " token strings.");
  for (const json& t : vocab) {
    if (!t.is_string()) Fail(what + ": config field 'vocab' must hold strings only.");
    m.vocab.push_back(t.get<std::string>());
  }
  m.num_targets = Get<int>(j, "num_targets", what);
  const json& task = Field(j, "task", what);
  if (!task.is_null()) {
    m.task = task.dump();
    if (task.is_object() && task.contains("name") && task["name"] == kTextTaskName) {
      // Checked here, at load, or a bad id surfaces later as a token the sentence never
      // had ("token id 99999") or as an empty sentence.
      const int bos = ParseTextTaskJson(m.task, what).bos;
      if (bos < 0 || bos >= static_cast<int>(m.vocab.size()))
        Fail(what + ": the text task's bos = " + std::to_string(bos) + " is not a token of the model's vocabulary of " +
             std::to_string(m.vocab.size()) + " (ids 0 to " + std::to_string(static_cast<int>(m.vocab.size()) - 1) +
             "); it must be the tokenizer's id that starts each paragraph.");
    } else {
      ParseTaskJson(m.task, what);
    }
  }
  if (c.temperature <= 0 || !std::isfinite(c.temperature) || !(c.ln_eps > 0))
    Fail(what + ": temperature and ln_eps must be positive numbers.");
  try {
    Validate(m);
  } catch (const Error& e) {
    Fail(what + ": " + e.what());
  }
  return m;
}

std::string TextTaskJson(const TextTaskInfo& t) {
  return json{{"name", kTextTaskName}, {"tokenizer", t.tokenizer}, {"bos", t.bos}}.dump();
}

bool IsTextTask(const std::string& task_json) {
  if (task_json.empty()) return false;
  try {
    const json j = ParseJson(task_json);
    return j.is_object() && j.contains("name") && j["name"] == kTextTaskName;
  } catch (const Error&) {
    return false;
  }
}

TextTaskInfo ParseTextTaskJson(const std::string& text, const std::string& what) {
  json j;
  try {
    j = ParseJson(text);
  } catch (const Error& e) {
    Fail(what + ": the task is not JSON (" + e.what() + ").");
  }
  if (!j.is_object()) Fail(what + ": the task is not a JSON object.");
  TextTaskInfo t;
  t.tokenizer = Get<std::string>(j, "tokenizer", what + " (task)");
  t.bos = Get<int>(j, "bos", what + " (task)");
  // A file name only: the tokenizer is looked up beside the checkpoint, so a path could
  // point anywhere on the reader's machine.
  if (t.tokenizer.empty() || t.tokenizer.find('/') != std::string::npos ||
      t.tokenizer.find('\\') != std::string::npos || t.tokenizer == "." || t.tokenizer == "..")
    Fail(what + ": the text task's tokenizer must be a file name such as \"mhaviz-small.model\", not '" +
         Excerpt(t.tokenizer) + "'.");
  return t;
}

TaskSpec ParseTaskJson(const std::string& text, const std::string& what) {
  json j;
  try {
    j = ParseJson(text);
  } catch (const Error& e) {
    Fail(what + ": the task is not JSON (" + e.what() + ").");
  }
  if (!j.is_object()) Fail(what + ": the task must be a JSON object such as {\"name\": \"offsets\", ...}.");
  TaskSpec t;
  try {
    t.kind = ParseTask(Get<std::string>(j, "name", what + " (task)"));
  } catch (const Error& e) {
    Fail(what + ": " + e.what());
  }
  t.offsets = Get<int>(j, "offsets", what + " (task)");
  t.vocab = Get<int>(j, "vocab", what + " (task)");
  t.seq = Get<int>(j, "seq", what + " (task)");
  try {
    Validate(t);
  } catch (const Error& e) {
    Fail(what + ": " + e.what());
  }
  return t;
}

std::string EncodeModel(const Model& m) {
  CheckModel(m);  // what LoadModel checks: nothing is written that mhaviz would refuse to read
  std::vector<TensorView> views;
  ForEachTensor(m, [&](const char* name, int index, const auto& t) {
    using T = std::decay_t<decltype(t)>;
    std::vector<std::int64_t> shape{t.size()};
    if constexpr (T::RowsAtCompileTime != 1) shape = {t.rows(), t.cols()};
    views.push_back({ParamKey(name, index), std::move(shape), t.data()});
  });
  RawArray cfg{"config", "|u1", {}, ModelConfigJson(m.cfg)};
  cfg.shape = {static_cast<std::int64_t>(cfg.data.size())};
  return EncodeNpz(views, {cfg});
}

Model DecodeModel(const std::map<std::string, Array>& npz, const std::string& what) {
  const auto it = npz.find("config");
  if (it == npz.end())
    Fail(what + " has no 'config' array, so it is not an mhaviz model. Write one with 'mhaviz train --out model.npz'.");
  const ModelConfig cfg = ParseModelConfigJson(BytesOf(it->second, what), what);
  Model m = InitModel(cfg);  // every shape; the values are overwritten below
  std::map<std::string, bool> used;
  for (ParamView& p : Parameters(m)) {
    const auto t = npz.find(p.name);
    if (t == npz.end())
      Fail(what + " has no '" + p.name + "', which its configuration needs (shape " + ShapeText(p.shape) + ").");
    if (t->second.shape != p.shape)
      Fail(what + ": '" + p.name + "' has shape " + ShapeText(t->second.shape) + " but the configuration needs " +
           ShapeText(p.shape) + ".");
    std::memcpy(p.data, t->second.data.data(), sizeof(float) * static_cast<std::size_t>(p.size()));
    used[p.name] = true;
  }
  for (const auto& [name, a] : npz)
    if (name != "config" && !used.count(name))
      Fail(what + " holds '" + name + "', which this model's configuration does not use (" +
           std::to_string(cfg.num_layers) + " layers, norm " + ToString(cfg.layer.norm) + ", block " +
           ToString(cfg.layer.block) + ", positional " + ToString(cfg.positional) +
           "). Is the config from another model?");
  try {
    CheckModel(m);
  } catch (const Error& e) {
    Fail(what + ": " + e.what());
  }
  return m;
}

// Read in two passes, so no member is inflated before its shape is known to be right:
// the config first, then only the tensors it names, each checked at its header.
Model LoadModel(const std::string& path) {
  const std::string what = "'" + path + "'";
  constexpr std::int64_t kMaxConfigBytes = std::int64_t(1) << 24;
  NpzFilter config_only;
  config_only.wanted = [](const std::string& key) { return key == "config"; };
  config_only.check = [&](const std::string&, const NpyInfo& info) {
    if (info.count() > kMaxConfigBytes)
      Fail(what + ": 'config' holds " + std::to_string(info.count()) + " bytes; a model's config JSON is far smaller.");
  };
  const auto head = LoadNpz(path, config_only);
  if (!head.count("config")) return DecodeModel(head, what);  // which explains what is missing
  std::map<std::string, std::vector<std::int64_t>> shapes;
  {
    Model shaped = InitModel(ParseModelConfigJson(BytesOf(head.at("config"), what), what));
    for (const ParamView& p : Parameters(shaped)) shapes[p.name] = p.shape;
  }
  NpzFilter params;
  params.check = [&](const std::string& key, const NpyInfo& info) {
    if (key == "config") return;
    const auto it = shapes.find(key);
    if (it == shapes.end())
      Fail(what + " holds '" + key +
           "', which this model's configuration does not use. Is the config from another "
           "model?");
    if (info.shape != it->second)
      Fail(what + ": '" + key + "' has shape " + ShapeText(info.shape) + " but the configuration needs " +
           ShapeText(it->second) + ".");
  };
  return DecodeModel(LoadNpz(path, params), what);
}

Batch DecodeBatch(const std::map<std::string, Array>& npz, const std::string& what) {
  const auto tok = npz.find("tokens"), tgt = npz.find("targets");
  if (tok == npz.end() || tgt == npz.end())
    Fail(what + " needs two arrays, 'tokens' (batch, seq) and 'targets' (batch, seq) or (batch, seq, K); it has " +
         std::string(tok == npz.end() ? "no 'tokens'" : "no 'targets'") + ".");
  for (const auto& [name, a] : npz)
    if (name != "tokens" && name != "targets")
      Fail(what + " holds '" + name + "'; a batch file has only 'tokens' and 'targets'.");
  const Array &x = tok->second, &y = tgt->second;
  if (x.shape.size() != 2 || x.shape[0] < 1 || x.shape[1] < 1)
    Fail(what + ": 'tokens' has shape " + ShapeText(x.shape) + "; it must be (batch, seq) with both at least 1.");
  const bool flat = y.shape.size() == 2;
  if ((y.shape.size() != 2 && y.shape.size() != 3) || y.shape[0] != x.shape[0] || y.shape[1] != x.shape[1] ||
      (!flat && y.shape[2] < 1))
    Fail(what + ": 'targets' has shape " + ShapeText(y.shape) + " but 'tokens' is " + ShapeText(x.shape) +
         "; targets must be (batch, seq) or (batch, seq, K) with the same batch and seq.");
  if (x.shape[1] > ModelLimits::kMaxSeq || (!flat && y.shape[2] > ModelLimits::kMaxTargets))
    Fail(what + ": sequences of " + std::to_string(x.shape[1]) + " tokens or " + std::to_string(flat ? 1 : y.shape[2]) +
         " targets are over the limits (" + std::to_string(ModelLimits::kMaxSeq) + ", " +
         std::to_string(ModelLimits::kMaxTargets) + ").");
  Batch b;
  b.batch = static_cast<int>(x.shape[0]);
  b.seq = static_cast<int>(x.shape[1]);
  b.num_targets = flat ? 1 : static_cast<int>(y.shape[2]);
  b.tokens = Ids(x, what, "tokens");
  b.targets = Ids(y, what, "targets");
  for (std::size_t i = 0; i < x.data.size(); ++i)
    if (x.data[i] != static_cast<float>(b.tokens[i]))
      Fail(what + ": 'tokens' holds a value that is not a whole number.");
  for (std::size_t i = 0; i < y.data.size(); ++i)
    if (y.data[i] != static_cast<float>(b.targets[i]))
      Fail(what + ": 'targets' holds a value that is not a whole number.");
  return b;
}

Batch LoadBatch(const std::string& path) {
  const std::string what = "'" + path + "'";
  NpzFilter f;
  f.check = [&](const std::string& key, const NpyInfo& info) {
    if (key != "tokens" && key != "targets")
      Fail(what + " holds '" + key + "'; a batch file has only 'tokens' and 'targets'.");
    constexpr std::int64_t kMaxIds = std::int64_t(1) << 24;  // 64 MiB as float32, again as int32
    if (info.count() > kMaxIds)
      Fail(what + ": '" + key + "' holds " + std::to_string(info.count()) + " ids, over the cap of " +
           std::to_string(kMaxIds) + " that keeps memory bounded. Split the data into smaller batches.");
  };
  return DecodeBatch(LoadNpz(path, f), what);
}

std::string EncodeBatch(const Batch& b) {
  auto raw = [](const std::string& name, std::vector<std::int64_t> shape, const std::vector<std::int32_t>& v) {
    RawArray a{name, "<i4", std::move(shape), std::string(v.size() * sizeof(std::int32_t), '\0')};
    std::memcpy(a.data.data(), v.data(), a.data.size());
    return a;
  };
  return EncodeNpz(
      {}, {raw("tokens", {b.batch, b.seq}, b.tokens), raw("targets", {b.batch, b.seq, b.num_targets}, b.targets)});
}

std::string EncodeGradients(double loss, Model& grads) {
  const float l = static_cast<float>(loss);
  std::vector<TensorView> views{{"loss", {}, &l}};
  for (const ParamView& p : Parameters(grads)) views.push_back({"grad." + p.name, p.shape, p.data});
  return EncodeNpz(views);
}

}  // namespace mha::io
