// The code cells of the trained model's notebook (model_notebook.cpp): the model rebuilt
// in PyTorch from its checkpoint, layer by layer in the lessons' code, then with torch.nn
// modules, each with the markdown that explains it.
#pragma once

#include <string>

#include "notebook/ipynb.hpp"
#include "notebook/notebook.hpp"

namespace mha::notebook {

struct ModelCells {
  const ModelSpec& s;
  Ipynb& nb;
  int section = 0;

  std::string Section(const char* title, const std::string& body);
  bool Language() const { return !s.tokenizer.empty(); }
  const ModelConfig& Cfg() const { return s.model->cfg; }

  void Setup();      // imports, the .npz, the configuration, check()
  void Tokens();     // the sentence through SentencePiece (or the ids given)
  void Embedding();  // tok_embed + the positional encoding
  void Layers();     // every layer: lesson 004's loop over heads, the FFN, knocked-out heads
  void Next();       // the logits and the next-piece probabilities
  void Torch();      // the same model with torch.nn modules
  void Heatmaps();   // the Model view: every layer x head

  // The Python expression of the positional encoding added to x (seq rows), or "".
  std::string PositionalCode() const;
};

}  // namespace mha::notebook
