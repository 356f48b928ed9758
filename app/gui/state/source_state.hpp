// What the model source (sources/model_source.hpp) keeps in the app's state: which
// weights the views run (seeded, the positional heads, or a trained model) and what
// the trained model computed on the current tokens.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lm/language_model.hpp"
#include "mha/ablation.hpp"
#include "mha/model.hpp"

namespace mha::gui {

enum class ModelSourceKind { Seeded, PositionalHeads, Trained };

struct ModelSource {
  ModelSourceKind kind = ModelSourceKind::Seeded;
  std::shared_ptr<const Model> model;  // Trained: the weights the views run
  std::string name;                    // Trained: "offsets K=2 run 1, step 800" or the checkpoint's path
  int run_id = 0;                      // Trained: the Train view run it follows (0: a loaded file)
  int layer = 0;                       // which layer's Trace the views show
  ModelTrace pass;                     // the model on the current tokens, every layer
  std::string seeded_sentence;         // the sentence to give back when leaving the trained model
  // A language model (lm_source.hpp): the typed text is cut into its pieces; `model`
  // points into it. Null for the other trained models, which read token ids.
  std::shared_ptr<const lm::LanguageModel> lm;
  std::vector<std::vector<lm::NextPiece>> next;  // lm: the likeliest next pieces per position
  std::vector<lm::ByteSpelling> byte_spelled;    // lm: characters spelled as byte pieces
  std::string load_error;                        // the last failed load of the shipped model
  // Heads knocked out (gui --ablate, the Model view's switches): every view shows the
  // ablated pass. Zero ablation; mean ablation only from --ablate-mode mean.
  std::vector<HeadRef> knocked;
  AblationMode knock_mode = AblationMode::Zero;
  ContextMeans knock_means;  // mean ablation: each head's mean context (empty for zero)
  // lm with heads knocked out: P(the sentence's next piece) at each position, from the
  // plain pass and the ablated one, and the plain pass's likeliest next pieces.
  std::vector<double> p_before, p_after;
  std::vector<std::vector<lm::NextPiece>> next_before;
};

}  // namespace mha::gui
