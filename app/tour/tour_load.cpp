// Reading a lesson file: bounded before it is parsed, its nesting bounded while it is,
// then every field checked where it stands, so a teacher's typo is reported as the file,
// the place (line and column, or the JSON pointer of the field) and what it should be.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "io/assets.hpp"
#include "io/files.hpp"
#include "mha/teach.hpp"
#include "tour/tour.hpp"
#include "tour/tour_json.hpp"

namespace mha::tour {
namespace {

using nlohmann::json;

// mhaviz-small's shape and its heads' jobs, from its labels file.
struct ModelLabels {
  int num_layers = 0, num_heads = 0;
  // Every (head, job) claim, the head a step means first for each job: the heads whose name
  // (label) is the job before those that only list it under "also"; among those, the
  // higher measured score for a pattern job (a profile's field of that name, such as
  // "induction": a retrained model may have two induction heads, and the stronger one is
  // the one a sentence shows); else in the file's order (layer, then head).
  std::vector<std::pair<HeadRef, std::string>> jobs;
  // The proof table's rows (phenomenon, the heads whose knock-out alone takes it to
  // chance: "carriers"), in the file's order; `table` false when the file has none.
  bool table = false;
  std::vector<std::pair<std::string, std::vector<HeadRef>>> carriers;
};

// "L1H0" as a head; {-1, -1} when it is not written so.
HeadRef ParseHeadName(const std::string& s) {
  int l = 0, h = 0;
  char tail = 0;
  if (std::sscanf(s.c_str(), "L%dH%d%c", &l, &h, &tail) != 2) return {-1, -1};
  return {l, h};
}

// The proof table's carriers per phenomenon (lm::TableJson's "table": rows of
// "phenomenon" and "carriers", each carrier a head's name).
void ReadCarriers(const json& j, ModelLabels& m) {
  if (!j.contains("table")) return;
  m.table = true;
  for (const json& r : j.at("table").at("rows")) {
    std::vector<HeadRef> heads;
    for (const json& c : r.at("carriers")) heads.push_back(ParseHeadName(c.get<std::string>()));
    m.carriers.emplace_back(r.at("phenomenon").get<std::string>(), heads);
  }
}

ModelLabels ReadLabels(const std::string& name, const std::string& path) {
  const std::string file = path.empty() ? io::FindAsset("models", "mhaviz-small.labels.json") : path;
  if (file.empty())
    throw LessonError(name +
                      ": a step names a head of mhaviz-small by its job, but mhaviz-small.labels.json "
                      "(the heads' measured jobs) is not in assets/models.");
  ModelLabels m;
  try {
    const json j = json::parse(io::ReadFile(file, kMaxLessonBytes * 4));
    m.num_layers = j.at("num_layers").get<int>();
    m.num_heads = j.at("num_heads").get<int>();
    struct Claim {
      HeadRef head;
      std::string job;
      bool named = false;  // the head's label, not an "also"
      double score = 0;    // the profile's score of a pattern job, else 0
    };
    const json no_profiles = json::array();
    const json& profiles = j.contains("profiles") ? j.at("profiles") : no_profiles;
    auto score = [&](const HeadRef& h, const std::string& job) {
      for (const json& p : profiles)
        if (p.value("layer", -1) == h.layer && p.value("head", -1) == h.head && p.contains(job) &&
            p.at(job).is_number())
          return p.at(job).get<double>();
      return 0.0;
    };
    std::vector<Claim> claims;
    for (const json& l : j.at("labels")) {
      const HeadRef h{l.at("layer").get<int>(), l.at("head").get<int>()};
      const std::string name = l.at("label").at("job").get<std::string>();
      claims.push_back({h, name, true, score(h, name)});
      for (const json& a : l.value("also", json::array())) {
        const std::string job = a.at("job").get<std::string>();
        claims.push_back({h, job, false, score(h, job)});
      }
    }
    std::stable_sort(claims.begin(), claims.end(), [](const Claim& a, const Claim& b) {
      if (a.named != b.named) return a.named;
      return a.score > b.score;
    });
    for (const Claim& c : claims) m.jobs.emplace_back(c.head, c.job);
    ReadCarriers(j, m);
  } catch (const json::exception& e) {
    throw LessonError(file + ": not a head-labels file mhaviz can read (" + e.what() + ").");
  }
  return m;
}

class StepReader {
 public:
  StepReader(JsonReader& r, const LoadContext& ctx) : r_(r), ctx_(ctx) {}

  Step Read(const json& j, const std::string& at) {
    r_.Object(j, at,
              {"view", "model", "preset", "sentence", "memory", "config", "layer", "head", "query", "knockout", "flash",
               "generate", "batch", "patch", "caption", "question"});
    Step step;
    StepState& st = step.state;
    st.view = r_.Str(j, at, "view", true);
    if (!ctx_.views.empty() && std::find(ctx_.views.begin(), ctx_.views.end(), st.view) == ctx_.views.end())
      r_.Fail(at + "/view", "there is no view '" + st.view + "'; the views are " + Join(ctx_.views) + ".");
    ReadSource(j, at, st);
    st.sentence = r_.Str(j, at, "sentence", false);
    st.memory = r_.Str(j, at, "memory", false);
    if (st.source == Source::SmallModel && st.sentence.empty())
      r_.Fail(at + "/sentence", "a step on mhaviz-small needs the sentence the model reads.");
    ReadPlace(j, at, st);
    ReadViewSteps(j, at, st);
    step.caption = r_.TextOf(j, at, "caption", true);
    if (j.contains("question")) step.question = ReadQuestion(j["question"], at + "/question");
    return step;
  }

 private:
  JsonReader& r_;
  const LoadContext& ctx_;
  std::optional<ModelLabels> labels_;
  int num_layers_ = 1, num_heads_ = 8;
  bool small_ = false;

  static std::string Join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  }

  const ModelLabels& Labels() {
    if (!labels_) labels_ = ReadLabels(r_.name(), ctx_.labels_path);
    return *labels_;
  }

  void ReadSource(const json& j, const std::string& at, StepState& st) {
    const std::string model = r_.Str(j, at, "model", false);
    st.preset = r_.Str(j, at, "preset", false);
    if (!model.empty() && !st.preset.empty())
      r_.Fail(at + "/preset", "a step runs either a model or a preset, not both.");
    if (!st.preset.empty()) {
      static const std::vector<std::string> kPresets = {"lesson", "hand", "heads"};
      const auto it = std::find(kPresets.begin(), kPresets.end(), st.preset);
      if (it == kPresets.end()) r_.Fail(at + "/preset", "'" + st.preset + "' is not a preset: lesson, hand or heads.");
      st.source = Source::Preset;
      // The positional heads are four, whatever the sentence; the worked examples bring their own.
      num_heads_ = st.preset == "heads" ? 4 : LessonPresets()[st.preset == "hand" ? 1 : 0].cfg.num_heads;
      if (j.contains("config")) r_.Fail(at + "/config", "a preset sets its own configuration; leave config out.");
    } else if (model == "mhaviz-small") {
      st.source = Source::SmallModel;
      small_ = true;
      num_layers_ = Labels().num_layers;
      num_heads_ = Labels().num_heads;
      if (j.contains("config")) r_.Fail(at + "/config", "mhaviz-small has its own configuration; leave config out.");
    } else if (model.empty() || model == "seeded") {
      st.source = Source::Seeded;
      if (j.contains("config")) st.cfg = r_.ConfigOf(j["config"], at + "/config");
      num_heads_ = st.cfg.num_heads;
    } else {
      r_.Fail(at + "/model", "'" + model + "' is not a model a lesson can run: seeded or mhaviz-small.");
    }
  }

  HeadRef Head(const json& j, const std::string& at, int layer, std::string* job) {
    if (j.is_object()) {
      r_.Object(j, at, {"job"});
      *job = r_.Str(j, at, "job", true);
      if (!small_) r_.Fail(at + "/job", "only mhaviz-small's heads have jobs; name a head of this model by its index.");
      std::vector<HeadRef> found;
      for (const auto& [h, name] : Labels().jobs)
        if (name == *job && std::find(found.begin(), found.end(), h) == found.end()) found.push_back(h);
      if (found.empty())
        r_.Fail(at + "/job", "no head of mhaviz-small carries the job '" + *job +
                                 "' in its labels file (mhaviz-small.labels.json): retrained, it may have none.");
      return found.front();
    }
    if (j.is_string()) {
      const HeadRef h = ParseHeadName(j.get<std::string>());
      if (h.layer < 0) r_.Fail(at, "a head is written L1H0 (layer 1, head 0), an index or {\"job\": ...}.");
      return Check(at, h);
    }
    return Check(at, {layer, r_.Int(j, at, 0, Limits::kMaxHeads - 1)});
  }

  HeadRef Check(const std::string& at, HeadRef h) {
    if (h.layer < 0 || h.layer >= num_layers_)
      r_.Fail(at, "layer " + std::to_string(h.layer) + " does not exist: this model has " +
                      std::to_string(num_layers_) + " (0 to " + std::to_string(num_layers_ - 1) + ").");
    if (h.head < 0 || h.head >= num_heads_)
      r_.Fail(at, "head " + std::to_string(h.head) + " does not exist: with num_heads = " + std::to_string(num_heads_) +
                      " the heads are numbered 0 to " + std::to_string(num_heads_ - 1) + ".");
    return h;
  }

  void ReadPlace(const json& j, const std::string& at, StepState& st) {
    if (j.contains("layer")) st.layer = r_.Int(j["layer"], at + "/layer", 0, num_layers_ - 1);
    if (j.contains("head")) {
      const HeadRef h = Head(j["head"], at + "/head", st.layer, &st.head_job);
      st.head = h.head;
      if (!st.head_job.empty()) st.layer = h.layer;  // a job's head shows on its own layer
    }
    if (j.contains("query")) st.query = r_.Int(j["query"], at + "/query", 0, Limits::kMaxTokens - 1);
    if (!j.contains("knockout")) return;
    const json& k = j["knockout"];
    if (!k.is_array()) r_.Fail(at + "/knockout", "a list of heads: [\"L1H0\"] or [{\"job\": \"verb-subject\"}].");
    for (std::size_t i = 0; i < k.size(); ++i) {
      std::string job;
      st.knockout.push_back(Head(k[i], at + "/knockout/" + std::to_string(i), 0, &job));
      if (!job.empty()) st.knockout_jobs.push_back(job);
    }
    std::sort(st.knockout.begin(), st.knockout.end());
    st.knockout.erase(std::unique(st.knockout.begin(), st.knockout.end()), st.knockout.end());
    if (st.source != Source::SmallModel && !st.knockout.empty())
      r_.Fail(at + "/knockout", "heads are knocked out of a trained model: set \"model\": \"mhaviz-small\".");
  }

  void ReadViewSteps(const json& j, const std::string& at, StepState& st) {
    if (j.contains("batch")) st.flow_batch = r_.Int(j["batch"], at + "/batch", 1, 4096);
    if (j.contains("flash")) {
      const json& f = j["flash"];
      const std::string p = at + "/flash";
      r_.Object(f, p, {"br", "bc", "tile"});
      st.flash_br = f.contains("br") ? r_.Int(f["br"], p + "/br", 1, Limits::kMaxFlashTile) : 4;
      st.flash_bc = f.contains("bc") ? r_.Int(f["bc"], p + "/bc", 1, Limits::kMaxFlashTile) : 4;
      st.flash_tile = f.contains("tile") ? r_.Int(f["tile"], p + "/tile", 0, 1 << 20) : 0;
    }
    if (j.contains("generate")) {
      const json& g = j["generate"];
      r_.Object(g, at + "/generate", {"pieces"});
      st.generate_pieces = r_.Int(g.value("pieces", json(0)), at + "/generate/pieces", 0, 64);
      if (st.source != Source::SmallModel)
        r_.Fail(at + "/generate",
                "the Generate view continues with a language model: set \"model\": \"mhaviz-small\".");
    }
    if (j.contains("patch")) ReadPatch(j["patch"], at + "/patch", st);
  }

  // The Patch view's two sentences and its target piece, each bounded: a sentence a class
  // patches, not a text. Whether they have as many pieces is the view's to say (it needs
  // the tokenizer), in its own error.
  void ReadPatch(const json& p, const std::string& at, StepState& st) {
    r_.Object(p, at, {"clean", "corrupt", "target"});
    auto field = [&](const char* key, bool required) {
      const std::string v = r_.Str(p, at, key, required);
      if (required && v.empty())
        r_.Fail(at + "/" + key, "an empty sentence: patching runs the model on a clean and a corrupt sentence.");
      if (v.size() > kMaxPatchBytes)
        r_.Fail(at + "/" + key, std::to_string(v.size()) + " bytes is more than a patched sentence may hold (" +
                                    std::to_string(kMaxPatchBytes) + ").");
      return v;
    };
    st.patch_clean = field("clean", true);
    st.patch_corrupt = field("corrupt", true);
    st.patch_target = field("target", false);
    st.patch_set = true;
    if (st.source != Source::SmallModel)
      r_.Fail(at, "activation patching runs a language model: set \"model\": \"mhaviz-small\".");
  }

  Question ReadQuestion(const json& j, const std::string& at) {
    r_.Object(j, at, {"kind", "prompt", "options", "answer", "compute", "at", "tolerance", "reveal"});
    Question q;
    const std::string kind = r_.Str(j, at, "kind", true);
    if (kind == "choice")
      q.kind = QuestionKind::Choice;
    else if (kind == "number")
      q.kind = QuestionKind::Number;
    else if (kind == "cell")
      q.kind = QuestionKind::Cell;
    else
      r_.Fail(at + "/kind", "'" + kind + "' is not a kind of question: choice, number or cell.");
    q.prompt = r_.TextOf(j, at, "prompt", true);
    q.reveal = r_.TextOf(j, at, "reveal", false);
    q.at = r_.Str(j, at, "at", false);
    q.compute = ComputeOf(r_.Str(j, at, "compute", false), at + "/compute");
    if (j.contains("tolerance")) q.tolerance = r_.Number(j["tolerance"], at + "/tolerance", 0, 1e12);
    ReadOptions(j, at, q);
    CheckAnswer(j, at, q);
    if (q.compute == Compute::Carrier) ReadCarrier(at, q);
    return q;
  }

  Compute ComputeOf(const std::string& c, const std::string& at) {
    static const std::vector<std::pair<std::string, Compute>> kNames = {
        {"", Compute::Fixed},         {"top_next", Compute::TopNext}, {"attn_argmax", Compute::AttnArgmax},
        {"row_max", Compute::RowMax}, {"head_dim", Compute::HeadDim}, {"kv_bytes", Compute::KvBytes},
        {"carrier", Compute::Carrier}};
    for (const auto& [name, v] : kNames)
      if (name == c) return v;
    r_.Fail(at, "'" + c +
                    "' is not an answer mhaviz computes: top_next, attn_argmax, row_max, head_dim, kv_bytes or "
                    "carrier.");
  }

  void ReadOptions(const json& j, const std::string& at, Question& q) {
    if (q.kind != QuestionKind::Choice) {
      if (j.contains("options")) r_.Fail(at + "/options", "only a choice question has options.");
      return;
    }
    const json* o = j.contains("options") ? &j["options"] : nullptr;
    if (!o || !o->is_array() || o->size() < 2 || o->size() > static_cast<std::size_t>(kMaxOptions))
      r_.Fail(at + "/options", "a choice question lists 2 to " + std::to_string(kMaxOptions) + " options.");
    for (std::size_t i = 0; i < o->size(); ++i) {
      const std::string p = at + "/options/" + std::to_string(i);
      const json& opt = (*o)[i];
      r_.Object(opt, p, {"ko", "en", "none"});
      q.options.push_back({r_.Str(opt, p, "ko", true), r_.Str(opt, p, "en", true)});
      if (!opt.contains("none")) continue;
      if (!opt["none"].is_boolean() || !opt["none"].get<bool>())
        r_.Fail(p + "/none", "true marks the option that says no single head carries it; leave it out otherwise.");
      if (q.none_option >= 0)
        r_.Fail(p + "/none",
                "only one option says no single head (option " + std::to_string(q.none_option) + " already does).");
      q.none_option = static_cast<int>(i);
    }
    if (q.none_option >= 0 && q.compute != Compute::Carrier)
      r_.Fail(at + "/options/" + std::to_string(q.none_option) + "/none",
              "\"none\" marks the answer of a carrier question (\"compute\": \"carrier\").");
  }

  // A carrier question asks which head, knocked out alone, takes a phenomenon to chance:
  // its answer is the proof table's (mhaviz-small's labels file), read here as a head
  // named by its job is; its options name heads (L0H0) or say "no single head".
  void ReadCarrier(const std::string& at, Question& q) {
    if (!small_)
      r_.Fail(at + "/compute", "carrier is measured on mhaviz-small: set the step's \"model\": \"mhaviz-small\".");
    const ModelLabels& m = Labels();
    if (!m.table)
      r_.Fail(at + "/compute", "mhaviz-small's labels file has no proof table (\"table\") to take the carrier from.");
    std::vector<std::string> names;
    bool found = false;
    for (const auto& [phenomenon, heads] : m.carriers) {
      names.push_back("'" + phenomenon + "'");
      if (phenomenon != q.at) continue;
      q.carriers = heads;
      found = true;
    }
    if (!found)
      r_.Fail(at + "/at", "the proof table has no phenomenon '" + q.at + "'; its phenomena are " + Join(names) + ".");
    for (std::size_t i = 0; i < q.options.size(); ++i) {
      if (static_cast<int>(i) == q.none_option) continue;
      const std::string p = at + "/options/" + std::to_string(i);
      const HeadRef h = ParseHeadName(q.options[i].en);
      if (h.layer < 0)
        r_.Fail(p + "/en", "an option of a carrier question names a head (L0H0), or is marked \"none\": true.");
      Check(p + "/en", h);
    }
  }

  void CheckAnswer(const json& j, const std::string& at, Question& q) {
    const bool fixed = q.compute == Compute::Fixed;
    if (!fixed && j.contains("answer"))
      r_.Fail(at + "/answer", "this answer is computed from the live model (compute); do not type it in.");
    if (fixed && !j.contains("answer"))
      r_.Fail(at + "/answer", "a question needs its answer, or \"compute\" to take it from the live model.");
    if (fixed && q.kind == QuestionKind::Cell)
      r_.Fail(at + "/compute", "a cell question's answer is computed: attn_argmax.");
    if (fixed && q.kind == QuestionKind::Choice)
      q.answer = r_.Int(j["answer"], at + "/answer", 0, static_cast<int>(q.options.size()) - 1);
    if (fixed && q.kind == QuestionKind::Number) q.number = r_.Number(j["answer"], at + "/answer", -1e15, 1e15);
    const bool wants_at =
        q.compute == Compute::TopNext || q.compute == Compute::AttnArgmax || q.compute == Compute::RowMax;
    if (wants_at && q.at.empty())
      r_.Fail(at + "/at", "this answer is computed at a token: name it (its text or index).");
    if (q.compute == Compute::Carrier && q.at.empty())
      r_.Fail(at + "/at", "a carrier is of a phenomenon: name it as the proof table does (\"honorific agreement\").");
    if (q.compute == Compute::Carrier && q.kind != QuestionKind::Choice)
      r_.Fail(at + "/kind", "carrier is asked as a choice among heads.");
    const bool numeric = q.compute == Compute::RowMax || q.compute == Compute::HeadDim || q.compute == Compute::KvBytes;
    if (numeric && q.kind != QuestionKind::Number) r_.Fail(at + "/kind", "a computed number is asked as kind number.");
    if (q.compute == Compute::TopNext && q.kind != QuestionKind::Choice)
      r_.Fail(at + "/kind", "top_next is asked as a choice among pieces.");
    if (q.compute == Compute::AttnArgmax && q.kind == QuestionKind::Number)
      r_.Fail(at + "/kind", "attn_argmax is asked as a cell or a choice among tokens.");
  }
};

}  // namespace

std::vector<HeadRef> HeadsWithJob(const std::string& job, const std::string& labels_path) {
  std::vector<HeadRef> found;
  for (const auto& [h, name] : ReadLabels("the lesson", labels_path).jobs)
    if (name == job && std::find(found.begin(), found.end(), h) == found.end()) found.push_back(h);
  return found;
}

int Lesson::Questions() const {
  return static_cast<int>(
      std::count_if(steps.begin(), steps.end(), [](const Step& s) { return s.question.has_value(); }));
}

Lesson ParseLesson(const std::string& text, const std::string& name, const LoadContext& ctx) {
  if (text.size() > kMaxLessonBytes)
    throw LessonError(name + ": " + std::to_string(text.size()) + " bytes is more than a lesson file may hold (" +
                      std::to_string(kMaxLessonBytes) + "): a lesson is captions and settings, not data.");
  JsonReader r(name);
  const json j = r.Parse(text);
  r.Object(j, "", {"format", "title", "steps"});
  if (r.Str(j, "", "format", true) != "mhaviz-lesson")
    r.Fail("/format", "a lesson file starts with \"format\": \"mhaviz-lesson\".");
  Lesson lesson;
  lesson.path = name;
  lesson.title = r.TextOf(j, "", "title", true);
  if (!j.contains("steps") || !j["steps"].is_array() || j["steps"].empty())
    r.Fail("/steps", "a lesson needs a list of steps (at least one).");
  if (j["steps"].size() > static_cast<std::size_t>(kMaxSteps))
    r.Fail("/steps", "at most " + std::to_string(kMaxSteps) + " steps.");
  for (std::size_t i = 0; i < j["steps"].size(); ++i) {
    StepReader sr(r, ctx);
    lesson.steps.push_back(sr.Read(j["steps"][i], "/steps/" + std::to_string(i)));
  }
  return lesson;
}

Lesson LoadLesson(const std::string& path, const LoadContext& ctx) {
  std::string text;
  try {
    text = io::ReadFile(path, kMaxLessonBytes);
  } catch (const Error& e) {
    throw LessonError(std::string(e.what()) + " (a lesson file holds at most " + std::to_string(kMaxLessonBytes) +
                      " bytes)");
  }
  Lesson l = ParseLesson(text, path, ctx);
  l.id = std::filesystem::path(path).stem().string();
  const std::string stem = l.id;
  if (stem.size() >= 3 && std::all_of(stem.begin(), stem.begin() + 3, ::isdigit)) l.id = stem.substr(0, 3);
  return l;
}

std::vector<std::string> BuiltinLessonIds() {
  std::vector<std::string> ids;
  std::set<std::string> seen;
  for (const std::string& dir : io::AssetDirs("lessons")) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      const std::string f = e.path().filename().string();
      if (e.path().extension() == ".json" && f.size() > 4 && std::all_of(f.begin(), f.begin() + 3, ::isdigit) &&
          seen.insert(f.substr(0, 3)).second)
        ids.push_back(f.substr(0, 3));
    }
    if (!ids.empty()) break;  // the most specific directory that has lessons
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string FindLesson(const std::string& id_or_path) {
  std::error_code ec;
  if (id_or_path.find('/') != std::string::npos || id_or_path.find(".json") != std::string::npos ||
      std::filesystem::is_regular_file(id_or_path, ec))
    return id_or_path;
  for (const std::string& dir : io::AssetDirs("lessons")) {
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      const std::string f = e.path().filename().string();
      if (e.path().extension() == ".json" && f.rfind(id_or_path, 0) == 0 &&
          (f.size() == id_or_path.size() + 5 || f[id_or_path.size()] == '_'))
        return e.path().string();
    }
  }
  std::string ids;
  for (const auto& i : BuiltinLessonIds()) ids += (ids.empty() ? "" : ", ") + i;
  throw LessonError("there is no lesson '" + id_or_path + "': the built-in lessons are " +
                    (ids.empty() ? std::string("(none found in assets/lessons)") : ids) +
                    "; or give a lesson file's path.");
}

}  // namespace mha::tour
