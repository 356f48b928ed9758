#include "lm/model_trace.hpp"

#include <cerrno>
#include <cstdlib>

#include "io/checkpoint.hpp"

namespace mha::lm {

std::vector<int> ParseTokenIds(const std::string& text) {
  std::vector<int> ids;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == ',' || text[i] == '\t' || text[i] == '\n') {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != ',' && text[j] != '\t' && text[j] != '\n') ++j;
    const std::string word = text.substr(i, j - i);
    // Digits with at most a leading '-', as every integer flag (strtoll alone takes a '+').
    const std::size_t sign = word[0] == '-' ? 1 : 0;
    const bool digits = word.size() > sign && word.find_first_not_of("0123456789", sign) == std::string::npos;
    errno = 0;
    const long long v = digits ? std::strtoll(word.c_str(), nullptr, 10) : 0;
    if (!digits || errno == ERANGE || v < -(1LL << 30) || v > (1LL << 30))
      throw Error("--tokens takes token ids, whole numbers separated by spaces, such as \"3 1 4 1 5\"; '" + word +
                  "' is not one. The ids index the model's vocabulary (its config's 'vocab').");
    ids.push_back(static_cast<int>(v));
    if (ids.size() > static_cast<std::size_t>(ModelLimits::kMaxSeq))
      throw Error("--tokens has more than " + std::to_string(ModelLimits::kMaxSeq) + " ids, over any model's max_seq.");
    i = j;
  }
  if (ids.empty()) throw Error("--tokens is empty; give token ids such as \"3 1 4 1 5\".");
  return ids;
}

LoadedModelTrace LoadForTrace(const std::string& path, const std::string& tokens_text, int example, int layer,
                              const TraceHow& how) {
  LoadedModelTrace r;
  r.model = io::LoadModel(path);
  if (how.attention) r.model.cfg.layer.attention = *how.attention;
  const ModelConfig& c = r.model.cfg;
  if (layer < 0 || layer >= c.num_layers)
    throw Error("--layer " + std::to_string(layer) + " does not exist: the model has " + std::to_string(c.num_layers) +
                " layer" + (c.num_layers == 1 ? "" : "s") + " (0 to " + std::to_string(c.num_layers - 1) + ").");
  r.layer = layer;
  std::vector<int> tokens;
  if (!tokens_text.empty()) {
    tokens = ParseTokenIds(tokens_text);
  } else {
    if (c.task.empty())
      throw Error("'" + path + "' was not trained on a task, so it has no examples; give --tokens \"3 1 4 ...\".");
    if (example < 0) throw Error("--example " + std::to_string(example) + " must be 0 or more.");
    if (io::IsTextTask(c.task))
      throw Error("'" + path +
                  "' is a language model: give a sentence with --sentence \"...\" (trace), or its "
                  "piece ids with --tokens.");
    const TaskSpec t = io::ParseTaskJson(c.task, "'" + path + "'");
    Batch b;
    HeldOutBatch(t, c.layer.seed, static_cast<std::uint64_t>(example), 1, b);
    tokens.assign(b.tokens.begin(), b.tokens.end());
  }
  const std::vector<HeadAblation> ablate = how.ablate ? how.ablate(r.model, tokens) : std::vector<HeadAblation>();
  // checks the ids against the vocabulary and max_seq
  RunModel(r.model, tokens, r.trace, ablate.empty() ? nullptr : &ablate);
  return r;
}

}  // namespace mha::lm
