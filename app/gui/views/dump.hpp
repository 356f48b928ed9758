// Pieces of the views' Dump functions (--dump-state's "views"): numbers, vectors and
// matrices as JSON, written from the same caches the views draw.
#pragma once

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "mha/mha.hpp"

namespace mha::gui::dump {

using nlohmann::json;

// JSON has no infinity: a masked score (-inf) is written as null.
inline json Num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

inline json Vec(const Eigen::Ref<const RowVec>& v) {
  json a = json::array();
  for (Eigen::Index i = 0; i < v.size(); ++i) a.push_back(Num(v[i]));
  return a;
}

template <class M>
json Matrix(const M& m) {
  json a = json::array();
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    json r = json::array();
    for (Eigen::Index j = 0; j < m.cols(); ++j) r.push_back(Num(m(i, j)));
    a.push_back(std::move(r));
  }
  return a;
}

// Big matrices are left out of the dump (their statistics stay).
inline constexpr Eigen::Index kMaxDumpValues = 65536;

// Attention weights past this many (all heads together) are left out too: as JSON
// (tens of bytes a weight) 100 heads x 1024 tokens would take 24 GB.
inline constexpr double kMaxDumpWeights = 4e6;
inline constexpr const char* kWeightsLeftOut = "left out: more than 4 million weights";

inline json Error(const std::string& e) { return json{{"error", e}}; }

}  // namespace mha::gui::dump
