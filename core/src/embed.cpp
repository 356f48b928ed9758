#include "mha/embed.hpp"

#include <cmath>

#include "rng.hpp"

namespace mha {

RowVec EmbedToken(const std::string& text, int d_model, std::uint64_t seed) {
  detail::SplitMix64 rng(detail::StreamSeed(seed, "embed:" + text));
  RowVec e(d_model);
  for (int i = 0; i < d_model; ++i) e[i] = rng.Normal();
  return e;
}

Mat PositionalEncoding(int seq, int d_model) {
  Mat pe(seq, d_model);
  for (int pos = 0; pos < seq; ++pos) {
    for (int i = 0; i < d_model; i += 2) {
      // Computed in double so the table is the same whatever the vector unit does.
      const double angle = pos / std::pow(10000.0, static_cast<double>(i) / d_model);
      pe(pos, i) = static_cast<float>(std::sin(angle));
      if (i + 1 < d_model) pe(pos, i + 1) = static_cast<float>(std::cos(angle));
    }
  }
  return pe;
}

Mat Embed(const std::vector<std::string>& tokens, const Config& cfg) {
  const int seq = static_cast<int>(tokens.size());
  Mat x(seq, cfg.d_model);
  for (int t = 0; t < seq; ++t) x.row(t) = EmbedToken(tokens[t], cfg.d_model, cfg.seed);
  if (cfg.positional_encoding) x += PositionalEncoding(seq, cfg.d_model);
  return x;
}

}  // namespace mha
