// Regression tests for robustness fixes in io (files, .npy/.npz) and the CLI option
// handling. Each names the problem it guards against.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "cli/commands.hpp"
#include "cli/prepare.hpp"
#include "io/files.hpp"
#include "io/json_parse.hpp"
#include "../temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

std::string Slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void Spit(const std::string& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary);
  f << bytes;
}

// A .npy header for `descr` and `shape`, padded as numpy does, followed by `data`.
std::string Npy(const std::string& descr, const std::string& shape, const std::string& data) {
  std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xFF);
  out += static_cast<char>(h.size() >> 8);
  return out + h + data;
}

template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("ReadFile never reads an endless file to the end", "[io][regression]") {
  // Was: ifstream >> rdbuf() on /dev/zero (size 0 by stat) grew without bound.
  const std::string e = ErrorOf([] { mha::io::ReadFile("/dev/zero", 1 << 20); });
  CHECK_THAT(e, Catch::Contains("holds more than 1 MiB"));
  bool truncated = false;
  const std::string head = mha::io::ReadFilePrefix("/dev/zero", 100, &truncated);
  CHECK(head == std::string(100, '\0'));
  CHECK(truncated);
}

TEST_CASE("ReadFile reads regular files exactly and names missing ones", "[io][regression]") {
  TempDir d;
  std::string bytes;
  for (int i = 0; i < 200000; ++i) bytes += static_cast<char>(i * 7);
  Spit(d / "f", bytes);
  CHECK(mha::io::ReadFile(d / "f") == bytes);
  bool truncated = true;
  CHECK(mha::io::ReadFilePrefix(d / "f", bytes.size(), &truncated) == bytes);
  CHECK_FALSE(truncated);
  CHECK_THAT(ErrorOf([&] { mha::io::ReadFile(d / "f", 1000); }), Catch::Contains("over the cap"));
  CHECK_THAT(ErrorOf([&] { mha::io::ReadFile(d / "missing"); }),
             Catch::Contains("No such file") && Catch::Contains("Check the path"));
  CHECK_THAT(ErrorOf([&] { mha::io::ReadFile(d.path); }), Catch::Contains("is a directory"));
}

TEST_CASE("LoadNpz refuses a non-zip from its first bytes", "[io][regression]") {
  CHECK_THAT(ErrorOf([] { mha::io::LoadNpz("/dev/zero"); }), Catch::Contains("not a valid .npz (zip) archive"));
  TempDir d;
  Spit(d / "x.npy", Npy("<f4", "(1,)", std::string(4, '\0')));
  CHECK_THAT(ErrorOf([&] { mha::io::LoadNpz(d / "x.npy"); }), Catch::Contains("single .npy array"));
  Spit(d / "empty.npz", "");
  CHECK_THAT(ErrorOf([&] { mha::io::LoadNpz(d / "empty.npz"); }), Catch::Contains("is empty"));
}

TEST_CASE("DecodeNpy refuses non-numeric dtypes with the dtype named", "[io][regression]") {
  // Was: '|O' (object, 2 characters) got "dtype '|O' is not understood".
  for (const char* descr : {"|O", "<U3", "|S2", "<c8", "<M8[D]", "<f4junk", "<f04", "<f+4", "", "<f16", "<f1"}) {
    INFO(descr);
    const std::string e = ErrorOf([&] { mha::io::DecodeNpy(Npy(descr, "(1,)", std::string(16, '\0')), "a"); });
    CHECK_THAT(e, Catch::Contains(std::string("dtype '") + descr + "'") && Catch::Contains("astype(numpy.float32)"));
  }
  const mha::io::Array a = mha::io::DecodeNpy(Npy("<i2", "(2,)", std::string("\x05\x00\xfe\xff", 4)), "a");
  CHECK(a.data == std::vector<float>{5.0f, -2.0f});
}

TEST_CASE("float16 arrays are converted exactly", "[io][regression]") {
  // Was: refused as "cannot use as numbers", though half-precision weights are common.
  const std::uint16_t h[] = {0x3C00, 0xC000, 0x0001, 0x7BFF, 0x0000, 0x8000, 0x3555, 0x7C00, 0x03FF};
  const mha::io::Array a =
      mha::io::DecodeNpy(Npy("<f2", "(9,)", std::string(reinterpret_cast<const char*>(h), sizeof h)), "a");
  REQUIRE(a.data.size() == 9);
  CHECK(a.data[0] == 1.0f);
  CHECK(a.data[1] == -2.0f);
  CHECK(a.data[2] == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(a.data[3] == 65504.0f);               // largest finite
  CHECK(a.data[4] == 0.0f);
  CHECK(std::signbit(a.data[5]));
  CHECK(a.data[6] == 0.333251953125f);
  CHECK(std::isinf(a.data[7]));
  CHECK(a.data[8] == std::ldexp(1023.0f, -24));  // largest subnormal
}

TEST_CASE("WriteFilesAtomic: a failing output leaves no other output and no temporary", "[io][regression]") {
  TempDir d;
  Spit(d / "a.npz", "old a");
  const std::string e = ErrorOf([&] {
    mha::io::WriteFilesAtomic({{d / "a.npz", "new a"}, {d / "no/dir/b.json", "new b"}});
  });
  CHECK_THAT(e, Catch::Contains("does not exist") && Catch::Contains("mkdir -p"));
  CHECK(Slurp(d / "a.npz") == "old a");
  CHECK(d.List() == std::vector<std::string>{"a.npz"});
  mha::io::WriteFilesAtomic({{d / "a.npz", "new a"}, {d / "b.json", "new b"}});
  CHECK(Slurp(d / "a.npz") == "new a");
  CHECK(Slurp(d / "b.json") == "new b");
  CHECK(d.List() == std::vector<std::string>{"a.npz", "b.json"});
}

TEST_CASE("WriteFileAtomic explains unwritable locations", "[io][regression]") {
  TempDir d;
  Spit(d / "file", "x");
  CHECK_THAT(ErrorOf([&] { mha::io::WriteFileAtomic(d / "file/out.npz", "b"); }),
             Catch::Contains("is a file, not a directory"));
  // Was: "The directory '/proc' does not exist".
  CHECK_THAT(ErrorOf([] { mha::io::WriteFileAtomic("/proc/mhaviz-out.npz", "b"); }),
             Catch::Contains("'/proc' does not accept new files"));
  CHECK_THAT(ErrorOf([&] { mha::io::WriteFileAtomic(d.path, "b"); }), Catch::Contains("is a directory"));
  CHECK(Slurp(d / "file") == "x");
}

TEST_CASE("the JSON output is capped before anything is computed", "[io][regression]") {
  mha::Config cfg;
  cfg.num_heads = 8;
  CHECK_NOTHROW(mha::io::CheckJsonSize(cfg, 724, 724));  // 8 x 724 x 724 < 2^22
  CHECK_THAT(ErrorOf([&] { mha::io::CheckJsonSize(cfg, 1024, 1024); }),
             Catch::Contains("8388608 attention weights") && Catch::Contains("Use --npz"));
}

namespace {
mha::cli::Prepared PrepareArgs(const std::vector<std::string>& args) {
  return mha::cli::Prepare(mha::cli::ParseTraceArgs(args).run);
}
}  // namespace

TEST_CASE("trace options: an explicitly empty sentence or memory is an error", "[cli][regression]") {
  using mha::options::UsageError;
  // Was: --sentence "" silently ran the default sentence.
  CHECK_THROWS_WITH(PrepareArgs({"--sentence", ""}), Catch::Contains("empty"));
  // Was: --memory "" silently meant self-attention.
  CHECK_THROWS_AS(mha::cli::ParseTraceArgs({"--memory", ""}), UsageError);
  CHECK_THROWS_AS(mha::cli::ParseTraceArgs({"--npz", ""}), UsageError);
  CHECK_THROWS_AS(mha::cli::ParseTraceArgs({"--sentence-file", ""}), UsageError);
  const auto p = PrepareArgs({"--d-model", "8", "--heads", "2"});
  CHECK(p.in.tokens.size() == 7);  // no --sentence at all: the default sentence
}

TEST_CASE("trace options: temperatures outside float or the usable range", "[cli][regression]") {
  using mha::options::UsageError;
  // Was: static_cast<float>(1e300) (undefined), and 1e-40 gave NaN attention.
  CHECK_THROWS_AS(mha::cli::ParseTraceArgs({"--temperature", "1e300"}), UsageError);
  CHECK_THROWS_AS(mha::cli::ParseTraceArgs({"--temperature", "-1e39"}), UsageError);
  for (const char* t : {"1e-40", "0.0009", "0", "-1"}) {
    INFO(t);
    CHECK_THROWS_AS(PrepareArgs({"--d-model", "8", "--heads", "2", "--temperature", t}), UsageError);
  }
  CHECK_NOTHROW(PrepareArgs({"--d-model", "8", "--heads", "2", "--temperature", "0.001"}));
}

TEST_CASE("trace options: --heads is checked against the d_model of --input", "[cli][regression]") {
  // Was: with --input, --heads 7 was checked against the default d_model 512 first.
  TempDir d;
  std::string x;
  for (int i = 0; i < 2 * 14; ++i) {
    const float v = 0.1f * i;
    x.append(reinterpret_cast<const char*>(&v), 4);
  }
  const mha::TensorView view{"x", {2, 14}, reinterpret_cast<const float*>(x.data())};
  mha::io::WriteFileAtomic(d / "x.npz", mha::io::EncodeNpz({view}));
  const auto p = PrepareArgs({"--input", d / "x.npz", "--heads", "7"});
  CHECK(p.cfg.d_model == 14);
  CHECK(p.cfg.num_heads == 7);
}

TEST_CASE("WriteFileAtomic writes devices and FIFOs in place and follows symlinks", "[io][regression]") {
  // Was: rename(2) replaced the directory entry, so `--npz /dev/null` as root turned the
  // null device into a regular file, and a symlinked output lost its link.
  TempDir d;
  if (::mknod((d / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    mha::io::WriteFileAtomic(d / "null", "bytes");
    struct stat st {};
    REQUIRE(::stat((d / "null").c_str(), &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
  } else {
    WARN("mknod not permitted: the device case is covered by the FIFO case only");
  }
  Spit(d / "target", "old");
  fs::create_symlink("target", d / "link");
  mha::io::WriteFileAtomic(d / "link", "new");
  CHECK(fs::is_symlink(d / "link"));
  CHECK(Slurp(d / "target") == "new");
  REQUIRE(::mkfifo((d / "fifo").c_str(), 0600) == 0);
  std::string got;
  std::thread reader([&] { got = Slurp(d / "fifo"); });
  mha::io::WriteFileAtomic(d / "fifo", std::string(100000, 'z'));
  reader.join();
  CHECK(got == std::string(100000, 'z'));
  CHECK(fs::is_fifo(d / "fifo"));
}

TEST_CASE("ParseJson refuses deep nesting while parsing, with a short message", "[io][regression]") {
  // 100,000 levels crashed every loader (dump() and the destructor recurse per level).
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string e = ErrorOf([&] { mha::io::ParseJson(deep); });
  CHECK(e.find("levels deep") != std::string::npos);
  CHECK(e.size() < 200);
  // Within the bound, nesting is fine; one level over is not.
  const int n = mha::io::kMaxJsonDepth;
  CHECK(mha::io::ParseJson(std::string(n, '[') + std::string(n, ']')).is_array());
  CHECK(ErrorOf([&] { mha::io::ParseJson(std::string(n + 1, '[') + std::string(n + 1, ']')); }).find("levels deep") !=
        std::string::npos);
  // A syntax error quotes a little of the input, not kilobytes of it.
  const std::string junk = "[\"" + std::string(20000, 'x');
  CHECK(ErrorOf([&] { mha::io::ParseJson(junk); }).size() < 300);
  CHECK(mha::io::JsonExcerpt(nlohmann::json(std::string(20000, 'y'))).size() < 100);
}

TEST_CASE("A flipped bit in an .npz member's data is refused (CRC-32)", "[io][regression]") {
  // libzip checks the CRC only when a read runs into the member's end; the reader stops
  // at the last byte the header promises, so a flipped sign bit loaded silently.
  const float w[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  const std::string good = mha::io::EncodeNpz({{"W_q", {2, 2}, w}});
  CHECK(mha::io::DecodeNpz(good, "'w.npz'").at("W_q").data[0] == 1.0f);
  // The float 1.0f is 00 00 80 3f: flip the sign bit of its last byte.
  const std::string one("\x00\x00\x80\x3f", 4);
  const auto at = good.find(one);
  REQUIRE(at != std::string::npos);
  std::string bad = good;
  bad[at + 3] = static_cast<char>(bad[at + 3] ^ 0x80);
  const std::string e = ErrorOf([&] { mha::io::DecodeNpz(bad, "'w.npz'"); });
  CHECK(e.find("'w.npz' member 'W_q'") != std::string::npos);
  CHECK(e.find("CRC") != std::string::npos);
  // The last byte of the data too (the read that ends exactly there).
  std::string last = good;
  const auto four = good.find(std::string("\x00\x00\x80\x40", 4));
  REQUIRE(four != std::string::npos);
  last[four + 3] = static_cast<char>(last[four + 3] ^ 0x01);
  CHECK(ErrorOf([&] { mha::io::DecodeNpz(last, "'w.npz'"); }).find("CRC") != std::string::npos);
}
