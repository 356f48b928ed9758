// The code cells of the layer notebook (layer_notebook.cpp), one function per step of
// the shape-flow table, each with the markdown that explains it.
#pragma once

#include <string>

#include "notebook/ipynb.hpp"
#include "notebook/notebook.hpp"

namespace mha::notebook {

struct LayerCells {
  const LayerSpec& s;
  Ipynb& nb;
  int section = 0;  // the markdown headings' numbers

  // "## 3. title\n\nbody"
  std::string Section(const char* title, const std::string& body);

  void Setup();          // imports, the .npz, the configuration, check()
  void Shapes();         // the shape-flow table's rows against the .npz
  void Projections();    // (pre-LN,) Q, K, V and the split into heads
  void HeadLoop();       // lesson 004's loop: scores, softmax, weights x V per head
  void Output();         // knocked-out heads, concat, W_O, residual (+ LayerNorm)
  void Ffn();            // the encoder block's FFN sublayer
  void LessonNumbers();  // a preset's numbers as the lesson writes them
  void Torch();          // the same with torch.nn.MultiheadAttention (and nn.LayerNorm, nn.Linear)
  void Heatmaps();       // lesson 004's heatmap grid

  // Where Q and K/V are read from: "x", "x_ln" or "memory".
  std::string QueryInput() const;
  std::string KvInput() const;
};

}  // namespace mha::notebook
