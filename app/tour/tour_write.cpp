// Writing a lesson file: the loader's inverse. A field is written only where the step
// sets it (a default the loader would supply is left out, as a teacher would leave it),
// so a file written in the app reads like the shipped ones and diffs cleanly.
#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "io/files.hpp"
#include "tour/tour_json.hpp"
#include "tour/tour_write.hpp"

namespace mha::tour {
namespace {

// Insertion order is the documented order of the fields.
using ojson = nlohmann::ordered_json;

ojson TextJson(const Text& t) { return ojson{{"ko", t.ko}, {"en", t.en}}; }

// A whole number is written as one (64, not 64.0): it is what a teacher types.
ojson NumberJson(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<long long>(v);
  return v;
}

ojson ConfigJson(const Config& c) {
  const Config d;
  ojson j = ojson::object();
  if (c.d_model != d.d_model) j["d_model"] = c.d_model;
  if (c.num_heads != d.num_heads) j["num_heads"] = c.num_heads;
  if (c.num_kv_heads != d.num_kv_heads) j["num_kv_heads"] = c.num_kv_heads;
  if (c.seed != d.seed) j["seed"] = c.seed;
  if (c.mask != d.mask) j["mask"] = c.mask == Mask::Causal ? "causal" : "none";
  if (c.norm != d.norm) j["norm"] = c.norm == Norm::Pre ? "pre" : c.norm == Norm::None ? "none" : "post";
  if (c.scale != d.scale) j["scale"] = c.scale;
  if (c.block != d.block) j["block"] = c.block == Block::Encoder ? "encoder" : "attention";
  return j;
}

const char* ComputeName(Compute c) {
  switch (c) {
    case Compute::TopNext: return "top_next";
    case Compute::AttnArgmax: return "attn_argmax";
    case Compute::RowMax: return "row_max";
    case Compute::HeadDim: return "head_dim";
    case Compute::KvBytes: return "kv_bytes";
    case Compute::Carrier: return "carrier";
    case Compute::Fixed: break;
  }
  return "";
}

ojson QuestionJson(const Question& q) {
  ojson j;
  j["kind"] = q.kind == QuestionKind::Choice ? "choice" : q.kind == QuestionKind::Number ? "number" : "cell";
  j["prompt"] = TextJson(q.prompt);
  if (q.kind == QuestionKind::Choice) {
    j["options"] = ojson::array();
    for (std::size_t i = 0; i < q.options.size(); ++i) {
      ojson o = TextJson(q.options[i]);
      if (static_cast<int>(i) == q.none_option) o["none"] = true;
      j["options"].push_back(std::move(o));
    }
  }
  if (q.compute == Compute::Fixed && q.kind == QuestionKind::Choice) j["answer"] = q.answer;
  if (q.compute == Compute::Fixed && q.kind == QuestionKind::Number) j["answer"] = NumberJson(q.number);
  if (q.compute != Compute::Fixed) j["compute"] = ComputeName(q.compute);
  if (!q.at.empty()) j["at"] = q.at;
  if (q.tolerance != 0) j["tolerance"] = NumberJson(q.tolerance);
  if (!q.reveal.ko.empty() || !q.reveal.en.empty()) j["reveal"] = TextJson(q.reveal);
  return j;
}

// The knocked-out heads named by index: those no job of the step resolves to (the
// loader keeps the heads, resolved and merged, and the jobs they were named by).
std::vector<HeadRef> IndexedKnockout(const StepState& st, const std::string& labels_path) {
  std::vector<HeadRef> heads = st.knockout;
  for (const std::string& job : st.knockout_jobs) {
    const std::vector<HeadRef> found = HeadsWithJob(job, labels_path);
    if (!found.empty()) heads.erase(std::remove(heads.begin(), heads.end(), found.front()), heads.end());
  }
  return heads;
}

ojson StepJson(const Step& step, const std::string& labels_path) {
  const StepState& st = step.state;
  ojson j;
  j["view"] = st.view;
  if (st.source == Source::SmallModel) j["model"] = "mhaviz-small";
  if (st.source == Source::Preset) j["preset"] = st.preset;
  if (!st.sentence.empty()) j["sentence"] = st.sentence;
  if (!st.memory.empty()) j["memory"] = st.memory;
  if (st.source == Source::Seeded) {
    ojson c = ConfigJson(st.cfg);
    if (!c.empty()) j["config"] = std::move(c);
  }
  // A head named by its job brings its own layer; else the layer, then the head's index in it.
  if (st.head_job.empty() && st.layer != 0) j["layer"] = st.layer;
  if (!st.head_job.empty())
    j["head"] = ojson{{"job", st.head_job}};
  else if (st.head != 0)
    j["head"] = st.head;
  if (st.query != 0) j["query"] = st.query;
  if (!st.knockout.empty()) {
    ojson k = ojson::array();
    for (const std::string& job : st.knockout_jobs) k.push_back(ojson{{"job", job}});
    for (const HeadRef& h : IndexedKnockout(st, labels_path)) k.push_back(HeadName(h));
    j["knockout"] = std::move(k);
  }
  if (st.flash_tile >= 0) j["flash"] = ojson{{"br", st.flash_br}, {"bc", st.flash_bc}, {"tile", st.flash_tile}};
  if (st.generate_pieces >= 0) j["generate"] = ojson{{"pieces", st.generate_pieces}};
  if (st.flow_batch != 1) j["batch"] = st.flow_batch;
  if (st.patch_set) {
    ojson p{{"clean", st.patch_clean}, {"corrupt", st.patch_corrupt}};
    if (!st.patch_target.empty()) p["target"] = st.patch_target;
    j["patch"] = std::move(p);
  }
  j["caption"] = TextJson(step.caption);
  if (step.question) j["question"] = QuestionJson(*step.question);
  return j;
}

}  // namespace

std::string LessonJson(const Lesson& lesson, const std::string& labels_path) {
  ojson j;
  j["format"] = "mhaviz-lesson";
  j["title"] = TextJson(lesson.title);
  j["steps"] = ojson::array();
  for (const Step& s : lesson.steps) j["steps"].push_back(StepJson(s, labels_path));
  try {
    return j.dump(1, ' ', false, ojson::error_handler_t::strict) + "\n";
  } catch (const nlohmann::json::exception&) {
    // A text cut mid-character is refused here rather than written.
    throw LessonError("a caption, option or title of the lesson is not valid UTF-8; retype it.");
  }
}

void SaveLesson(const Lesson& lesson, const std::string& path, const LoadContext& ctx) {
  io::CheckOutputs({{"the lesson file", path}});
  const std::string text = LessonJson(lesson, ctx.labels_path);
  ParseLesson(text, path, ctx);
  io::WriteFileAtomic(path, text);
}

}  // namespace mha::tour
