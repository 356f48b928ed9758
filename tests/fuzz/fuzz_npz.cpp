// libFuzzer target: the .npz and .npy readers (mha::io::DecodeNpz / DecodeNpy) on
// arbitrary bytes. Whatever they accept must be self-consistent, must load as inputs
// or weights or be refused with mha::Error, and must survive an encode/decode round trip.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>

#include "fuzz_common.hpp"
#include "io/files.hpp"

namespace {

using mha::io::Array;

std::int64_t Count(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto s : shape) {
    FUZZ_CHECK(s >= 0, "negative dimension %lld", static_cast<long long>(s));
    n *= s;
  }
  return n;
}

void CheckArray(const std::string& name, const Array& a) {
  FUZZ_CHECK(static_cast<std::int64_t>(a.data.size()) == Count(a.shape), "'%s': %zu values for its shape", name.c_str(),
             a.data.size());
}

// Small arrays only: each run must stay fast and small.
bool Small(const std::map<std::string, Array>& m) {
  std::size_t n = 0;
  for (const auto& [k, a] : m) n += a.data.size();
  return n <= 1 << 16;
}

void UseAsInputsAndWeights(const std::map<std::string, Array>& m) {
  try {
    const mha::Inputs in = mha::io::InputsFromNpz(m, "fuzz.npz");
    FUZZ_CHECK(in.x.rows() > 0 && in.x.cols() > 0, "empty x accepted");
    FUZZ_CHECK(static_cast<std::size_t>(in.x.rows()) == in.tokens.size(), "token labels");
  } catch (const mha::Error&) {
  }
  // Expected shapes come from W_q if it is square and small, as --weights would use.
  mha::Config cfg;
  cfg.d_model = 4;
  cfg.num_heads = 2;
  const auto wq = m.find("W_q");
  if (wq != m.end() && wq->second.shape.size() == 2 && wq->second.shape[0] > 0 && wq->second.shape[0] <= 64) {
    cfg.d_model = static_cast<int>(wq->second.shape[0]);
    cfg.num_heads = cfg.d_model % 2 == 0 ? 2 : 1;
  }
  try {
    const mha::Weights w = mha::io::WeightsFromNpz(m, "fuzz.npz", &cfg);
    // Accepted weights must be exactly what the forward pass accepts.
    mha::CheckWeights(w, cfg);
    FUZZ_CHECK(std::isfinite(cfg.ln_eps), "non-finite ln_eps accepted");
  } catch (const mha::Error&) {
  }
}

void RoundTrip(const std::map<std::string, Array>& m) {
  std::vector<mha::TensorView> views;
  for (const auto& [name, a] : m) {
    if (name.empty() || name.find('/') != std::string::npos) return;
    views.push_back({name, a.shape, a.data.data()});
  }
  const std::string bytes = mha::io::EncodeNpz(views);
  const auto back = mha::io::DecodeNpz(bytes, "round trip");
  FUZZ_CHECK(back.size() == m.size(), "round trip kept %zu of %zu arrays", back.size(), m.size());
  for (const auto& [name, a] : m) {
    const auto it = back.find(name);
    FUZZ_CHECK(it != back.end(), "round trip lost '%s'", name.c_str());
    FUZZ_CHECK(it->second.shape == a.shape, "round trip changed the shape of '%s'", name.c_str());
    FUZZ_CHECK(
        it->second.data.size() == a.data.size() &&
            (a.data.empty() || std::memcmp(it->second.data.data(), a.data.data(), a.data.size() * sizeof(float)) == 0),
        "round trip changed the values of '%s'", name.c_str());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);

  try {
    const auto m = mha::io::DecodeNpz(bytes, "fuzz.npz");
    for (const auto& [k, a] : m) CheckArray(k, a);
    if (Small(m)) {
      UseAsInputsAndWeights(m);
      RoundTrip(m);
    }
  } catch (const mha::Error& e) {
    FUZZ_CHECK(std::strlen(e.what()) > 0, "empty error message");
  }

  try {
    const Array a = mha::io::DecodeNpy(bytes, "fuzz.npy");
    CheckArray("npy", a);
    if (a.data.size() <= 1 << 16) {
      // One array under every name a loader looks for.
      std::map<std::string, Array> m;
      for (const char* k : {"x", "memory", "W_q", "W_k", "W_v", "W_o", "b_q", "ln_gamma", "ln_eps"}) m[k] = a;
      UseAsInputsAndWeights(m);
      RoundTrip({{"a", a}});
    }
  } catch (const mha::Error& e) {
    FUZZ_CHECK(std::strlen(e.what()) > 0, "empty error message");
  }
  return 0;
}
