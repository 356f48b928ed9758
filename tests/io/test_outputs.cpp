// Regression tests for the atomic writer's treatment of existing files, links, long
// names and outputs that are one file, and for the streamed .npz writer and the reader's
// header checks.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "io/files.hpp"
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

template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

std::string NpyWithHeader(const std::string& dict, const std::string& data) {
  std::string h = dict;
  h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xFF);
  out += static_cast<char>(h.size() >> 8);
  return out + h + data;
}

}  // namespace

TEST_CASE("rewriting a file keeps its mode and owner", "[io][regression]") {
  // Was: a 0600 file became 0644 (the temporary file's mode), and its owner root's.
  TempDir d;
  Spit(d / "secret.npz", "old");
  REQUIRE(::chmod((d / "secret.npz").c_str(), 0600) == 0);
  const bool root = ::geteuid() == 0;
  if (root) REQUIRE(::chown((d / "secret.npz").c_str(), 65534, 65534) == 0);
  mha::io::WriteFileAtomic(d / "secret.npz", "new");
  struct stat st {};
  REQUIRE(::stat((d / "secret.npz").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  if (root) CHECK(st.st_uid == 65534);
  CHECK(Slurp(d / "secret.npz") == "new");
  // A hard link is replaced, not written through: the other name keeps the old bytes
  // (the README says so), since writing in place could leave a half-written file.
  REQUIRE(::link((d / "secret.npz").c_str(), (d / "other").c_str()) == 0);
  mha::io::WriteFileAtomic(d / "secret.npz", "newer");
  CHECK(Slurp(d / "other") == "new");
  CHECK(Slurp(d / "secret.npz") == "newer");
}

TEST_CASE("a dangling symlink is written through to its target", "[io][regression]") {
  // Was: stat failed on the dangling link, so rename replaced the link with a file.
  TempDir d;
  fs::create_directory(d / "sub");
  fs::create_symlink("sub/target.npz", d / "link.npz");
  fs::create_symlink("link.npz", d / "link2.npz");  // a chain of links
  mha::io::WriteFileAtomic(d / "link2.npz", "bytes");
  CHECK(fs::is_symlink(d / "link.npz"));
  CHECK(fs::is_symlink(d / "link2.npz"));
  CHECK(Slurp(d / "sub/target.npz") == "bytes");
  fs::create_symlink("loop", d / "loop");
  CHECK_THAT(ErrorOf([&] { mha::io::WriteFileAtomic(d / "loop", "x"); }), Catch::Contains("symlinks form a loop"));
}

TEST_CASE("a 255-byte file name can be written", "[io][regression]") {
  // Was: the temporary name was the target's name plus ".tmp.XXXXXX", over NAME_MAX.
  TempDir d;
  const std::string name(255, 'n');
  mha::io::WriteFileAtomic(d / name, "bytes");
  CHECK(Slurp(d / name) == "bytes");
  CHECK(d.Count() == 1);  // no temporary left
  CHECK_THAT(ErrorOf([&] { mha::io::WriteFileAtomic(d / (name + "x"), "b"); }),
             Catch::Contains("too long") && Catch::Contains("255 bytes"));
}

TEST_CASE("two outputs that are one file are refused before anything is written", "[io][regression]") {
  // Was: o.x and ./o.x (or a symlink to it) were both renamed; one output was lost, exit 0.
  TempDir d;
  Spit(d / "old", "old");
  fs::create_symlink("old", d / "alias");
  const std::string spellings[][2] = {{d / "o.x", d / "./o.x"},       // new file, two spellings
                                      {d / "o.x", d / "sub/../o.x"},  // through a directory
                                      {d / "old", d / "alias"}};      // a symlink to it
  fs::create_directory(d / "sub");
  for (const auto& pair : spellings) {
    // (not a structured binding: C++17 lambdas cannot capture one, which clang enforces)
    const std::string &a = pair[0], &b = pair[1];
    INFO(a << " vs " << b);
    CHECK_THAT(ErrorOf([&] {
                 mha::io::WriteFilesAtomic({{a, "A"}, {b, "B"}});
               }),
               Catch::Contains("name the same file"));
    CHECK_THAT(ErrorOf([&] {
                 mha::io::CheckDistinctOutputs({{"--npz", a}, {"--json", b}});
               }),
               Catch::Contains("--npz") && Catch::Contains("--json") && Catch::Contains("same file"));
  }
  CHECK_FALSE(fs::exists(d / "o.x"));
  CHECK(Slurp(d / "old") == "old");
  REQUIRE(::link((d / "old").c_str(), (d / "hard").c_str()) == 0);
  CHECK_THAT(ErrorOf([&] {
               mha::io::WriteFilesAtomic({{d / "old", "A"}, {d / "hard", "B"}});
             }),
             Catch::Contains("same file"));
  CHECK_NOTHROW(mha::io::CheckDistinctOutputs({{"--npz", d / "a"}, {"--json", d / "b"}, {"--x", ""}}));
}

TEST_CASE("a rename that would fail is found before any output is replaced", "[io][regression]") {
  // Was: with two outputs, the first was renamed into place, then the second's rename
  // failed (a file of another user in a sticky directory): exit 1, but the first output
  // changed, and the message said the directory "does not accept new files".
  if (::geteuid() != 0) {
    WARN("needs root to create a file of another user; skipped");
    return;
  }
  TempDir d;
  REQUIRE(::chmod(d.path.c_str(), 0755) == 0);
  fs::create_directory(d / "sticky");
  REQUIRE(::chmod((d / "sticky").c_str(), 01777) == 0);
  Spit(d / "sticky/theirs.json", "theirs");
  REQUIRE(::chmod((d / "sticky/theirs.json").c_str(), 0666) == 0);  // writable, yet not replaceable
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // As another user: only exit codes cross back (no Catch in the child).
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(90);
    const std::string e = ErrorOf([&] {
      mha::io::WriteFilesAtomic({{d / "sticky/mine.npz", "A"}, {d / "sticky/theirs.json", "B"}});
    });
    if (e.find("belongs to another user") == std::string::npos || e.find("sticky") == std::string::npos) ::_exit(91);
    if (e.find("does not accept new files") != std::string::npos) ::_exit(92);
    if (::access((d / "sticky/mine.npz").c_str(), F_OK) == 0) ::_exit(93);  // the first output appeared
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(Slurp(d / "sticky/theirs.json") == "theirs");
  int left = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d / "sticky")) ++left;
  CHECK(left == 1);  // no temporary file either
}

TEST_CASE("the streamed .npz writer's zip64 records are read back", "[io][regression]") {
  // Archives over 4 GiB need zip64; forced here on a small one, which readers must accept
  // the same way (scripts and tests check numpy reads them too).
  std::vector<float> a(1000), b(3);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = 0.5f * static_cast<float>(i);
  b = {1, 2, 3};
  const std::vector<mha::TensorView> views{{"a", {10, 100}, a.data()}, {"b", {3}, b.data()}};
  for (const bool zip64 : {false, true}) {
    INFO("zip64 " << zip64);
    mha::io::StringSink s;
    mha::io::WriteNpz(s, views, {{"raw", "|u1", {2}, std::string("\x07\x09", 2)}}, zip64);
    const auto back = mha::io::DecodeNpz(s.bytes, "round trip");
    REQUIRE(back.size() == 3);
    CHECK(back.at("a").shape == std::vector<std::int64_t>{10, 100});
    CHECK(back.at("a").data == a);
    CHECK(back.at("b").data == b);
    CHECK(back.at("raw").data == std::vector<float>{7, 9});
    // numpy (Python's zipfile) reads the same bytes, when it is installed.
    if (::access("/usr/bin/python3", X_OK) == 0) {
      TempDir d;
      Spit(d / "z.npz", s.bytes);
      const std::string cmd =
          "/usr/bin/python3 -c \"import importlib.util as u, sys; "
          "u.find_spec('numpy') or sys.exit(77); import numpy as n; z = n.load(sys.argv[1]); "
          "sys.exit(0 if z['a'][9, 99] == 499.5 and list(z['raw']) == [7, 9] else 1)\" " +
          (d / "z.npz") + " 2>/dev/null";
      const int rc = std::system(cmd.c_str());
      if (WIFEXITED(rc) && WEXITSTATUS(rc) == 1) FAIL("numpy read other values from the archive");
      if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0) WARN("numpy could not be run: not checked");
    }
    if (!zip64) CHECK(s.bytes == mha::io::EncodeNpz(views, {{"raw", "|u1", {2}, std::string("\x07\x09", 2)}}));
  }
}

TEST_CASE("an .npy header that names a key twice is refused", "[io][regression]") {
  // Was: the first 'shape' was used, where numpy uses the last: one file, two meanings.
  const std::string data(8, '\0');
  const std::string e = ErrorOf([&] {
    mha::io::DecodeNpy(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'shape': (2,), }", data),
                       "'d.npy'");
  });
  CHECK_THAT(e, Catch::Contains("names 'shape' twice"));
  CHECK_THAT(ErrorOf([&] {
               mha::io::DecodeNpy(
                   NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", data), "'d.npy'");
             }),
             Catch::Contains("unknown key 'x'"));
  const auto ok =
      mha::io::DecodeNpy(NpyWithHeader("{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<f4\"}", data), "d");
  CHECK(ok.data.size() == 2);
}

TEST_CASE("an .npz member is refused at its header, before it is inflated", "[io][regression]") {
  // A member that claims more numbers than the reader can use is refused from its .npy
  // header; members a reader does not use are never opened. (The CLI tests check peak
  // memory on a crafted archive that inflates to gigabytes.)
  std::vector<float> big(64 * 64, 1.0f), x(2 * 8, 0.5f);
  const std::vector<mha::TensorView> views{{"W_q", {64, 64}, big.data()}, {"x", {2, 8}, x.data()}};
  const std::string bytes = mha::io::EncodeNpz(views);
  mha::Config cfg;
  cfg.d_model = 8;
  cfg.num_heads = 2;
  CHECK_THAT(ErrorOf([&] { mha::io::DecodeNpz(bytes, "'w.npz'", mha::io::WeightsFilter("w.npz", &cfg)); }),
             Catch::Contains("weight 'W_q' has shape (64, 64)") && Catch::Contains("d_model 8"));
  int headers_seen = 0;
  mha::io::NpzFilter only_x;
  only_x.wanted = [](const std::string& key) { return key == "x"; };
  only_x.check = [&](const std::string&, const mha::io::NpyInfo&) { ++headers_seen; };
  const auto m = mha::io::DecodeNpz(bytes, "'w.npz'", only_x);
  CHECK(m.size() == 1);
  CHECK(m.count("x") == 1);
  CHECK(headers_seen == 1);
}
