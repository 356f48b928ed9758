// Deterministic token embeddings, the sinusoidal positional encoding, and the
// forward pass's Inputs made from a sentence.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mha/config.hpp"
#include "mha/trace.hpp"

namespace mha {

// The embedding of one token string: d_model values drawn from N(0, 1) by a
// generator seeded with (seed, text). The same word gets the same vector in every
// sentence, and the first k values do not depend on d_model.
RowVec EmbedToken(const std::string& text, int d_model, std::uint64_t seed);

// Sinusoidal positional encoding, Vaswani et al. 2017, Section 3.5:
//   PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(...)
Mat PositionalEncoding(int seq, int d_model);

// x = embedding rows (+ positional encoding if cfg.positional_encoding): (seq, d_model).
Mat Embed(const std::vector<std::string>& tokens, const Config& cfg);

// Tokenize + embed a sentence (and an optional memory sentence for cross-attention).
// Throws mha::Error for an empty sentence. `notice` (if non-null) receives a line
// about truncation or replaced bytes, or "".
Inputs MakeInputs(const std::string& sentence, const std::string& memory_sentence, const Config& cfg,
                  std::string* notice = nullptr);

}  // namespace mha
