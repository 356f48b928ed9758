// The tokenizing half of MakeInputs, shared with Live (which embeds through its cache).
#pragma once

#include <string>
#include <string_view>

#include "mha/config.hpp"
#include "mha/trace.hpp"

namespace mha::detail {

// Fills in.tokens and in.memory_tokens (leaves x and memory alone) and validates the
// sizes. Throws mha::Error for an empty sentence or memory sentence.
void TokenizeInputs(std::string_view sentence, std::string_view memory_sentence, const Config& cfg, Inputs& in,
                    std::string* notice);

// Rows [first, pe.rows()) of the sinusoidal positional encoding (PositionalEncoding),
// for a table of d_model columns that grows.
void PositionalEncodingRows(int first, int d_model, Mat& pe);

}  // namespace mha::detail
