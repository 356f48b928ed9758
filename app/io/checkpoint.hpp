// The files of training: a model checkpoint, a batch of token sequences, and the
// gradients of one pass. All are .npz archives numpy opens directly; the formats are
// described in the README ("Training files").
//
//   checkpoint  config (uint8: UTF-8 JSON, format "mhaviz-model", version 1) and every
//               parameter under its Parameters(model) name, float32, C order
//   batch       tokens (batch, seq) integers; targets (batch, seq) or (batch, seq, K)
//               integers, -1 for "nothing to predict"
//   gradients   loss (a scalar) and grad.<name> for every parameter
#pragma once

#include <map>
#include <string>

#include "files.hpp"
#include "mha/model.hpp"
#include "mha/tasks.hpp"
#include "mha/train.hpp"

namespace mha::io {

inline constexpr const char* kModelFormat = "mhaviz-model";
inline constexpr int kModelVersion = 1;

// The config JSON of a checkpoint (the trace JSON's config names, plus the model's).
std::string ModelConfigJson(const ModelConfig& cfg);
// Parses and validates a checkpoint's config JSON; throws mha::Error naming what is
// wrong (not JSON, another format, an unknown version, a missing or bad field) before
// anything is allocated.
ModelConfig ParseModelConfigJson(const std::string& text, const std::string& what);
// The task of TaskJson's text; throws mha::Error if it is not one.
TaskSpec ParseTaskJson(const std::string& text, const std::string& what);

// A language model's task: next-piece prediction on text tokenized by a SentencePiece
// model. The checkpoint records the tokenizer's file name (looked up beside the
// checkpoint) and the id that starts each paragraph.
inline constexpr const char* kTextTaskName = "text";
struct TextTaskInfo {
  std::string tokenizer;  // a file name, e.g. "mhaviz-small.model"
  int bos = 1;
};
std::string TextTaskJson(const TextTaskInfo& t);
bool IsTextTask(const std::string& task_json);
// Throws mha::Error naming what is missing or wrong.
TextTaskInfo ParseTextTaskJson(const std::string& text, const std::string& what);

std::string EncodeModel(Model& m);
// Every parameter of the configuration must be present with its exact shape, and
// nothing else may be: a checkpoint with missing, extra or misshapen tensors is refused.
Model DecodeModel(const std::map<std::string, Array>& npz, const std::string& what);
Model LoadModel(const std::string& path);

// A batch from tokens/targets arrays: integers only (whole numbers), shapes that agree.
// The model check (vocabulary, max_seq, targets) is CheckBatch's.
Batch DecodeBatch(const std::map<std::string, Array>& npz, const std::string& what);
Batch LoadBatch(const std::string& path);
std::string EncodeBatch(const Batch& b);

// loss and grad.<name> for every parameter of `grads`.
std::string EncodeGradients(double loss, Model& grads);

}  // namespace mha::io
