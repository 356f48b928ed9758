// .npy/.npz encoding and decoding, including the conversions numpy users hit:
// float64 (numpy's default), Fortran order, big-endian, integers.
#include <catch2/catch.hpp>
#include <cstring>

#include "io/files.hpp"

using Catch::Matchers::Contains;

namespace {

std::string Npy(const std::string& descr, bool fortran, const std::string& shape, const void* data, std::size_t bytes) {
  std::string h =
      "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xFF);
  out += static_cast<char>(h.size() >> 8);
  return out + h + std::string(static_cast<const char*>(data), bytes);
}

}  // namespace

TEST_CASE("npz round trip keeps names, shapes and bits", "[io]") {
  mha::Mat m(2, 3);
  m << 1, -2, 3.5f, 4, 1e-30f, -0.0f;
  const float scalar = 1e-5f;
  const std::vector<mha::TensorView> tv = {{"m", {1, 2, 3}, m.data()}, {"eps", {}, &scalar}};
  const auto back = mha::io::DecodeNpz(mha::io::EncodeNpz(tv), "test");
  REQUIRE(back.size() == 2);
  CHECK(back.at("m").shape == std::vector<std::int64_t>{1, 2, 3});
  CHECK(std::memcmp(back.at("m").data.data(), m.data(), 6 * sizeof(float)) == 0);
  CHECK(back.at("eps").shape.empty());
  CHECK(back.at("eps").data == std::vector<float>{1e-5f});
}

TEST_CASE("float64, Fortran order, big-endian and integer arrays are converted", "[io]") {
  const double d[6] = {1, 2, 3, 4, 5, 6};  // Fortran (2, 3): columns [1,2], [3,4], [5,6]
  const auto f = mha::io::DecodeNpy(Npy("<f8", true, "(2, 3)", d, sizeof d), "f");
  CHECK(f.data == std::vector<float>{1, 3, 5, 2, 4, 6});
  CHECK(f.source_dtype == "<f8");
  const unsigned char be[8] = {0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0};  // >f4: 1.0, -2.0
  CHECK(mha::io::DecodeNpy(Npy(">f4", false, "(2,)", be, 8), "b").data == std::vector<float>{1, -2});
  const std::int64_t ints[3] = {-7, 0, 9};
  CHECK(mha::io::DecodeNpy(Npy("<i8", false, "(3,)", ints, sizeof ints), "i").data == std::vector<float>{-7, 0, 9});
}

TEST_CASE("unusable .npy data is refused with a clear message", "[io]") {
  const float x[2] = {1, 2};
  CHECK_THROWS_WITH(mha::io::DecodeNpy(Npy("<f4", false, "(3,)", x, sizeof x), "t"), Contains("truncated"));
  CHECK_THROWS_WITH(mha::io::DecodeNpy(Npy("|O", false, "(2,)", x, sizeof x), "t"), Contains("cannot use as numbers"));
  CHECK_THROWS_WITH(mha::io::DecodeNpy(Npy("<c8", false, "(1,)", x, sizeof x), "t"), Contains("astype(numpy.float32)"));
  CHECK_THROWS_WITH(mha::io::DecodeNpy("hello", "t"), Contains("magic"));
  CHECK_THROWS_WITH(mha::io::DecodeNpy(Npy("<f4", false, "(100000, 100000, 100000)", x, 8), "t"), Contains("cap"));
  CHECK_THROWS_WITH(mha::io::DecodeNpz(std::string(100, 'z'), "'junk'"), Contains("not a valid .npz"));
}
