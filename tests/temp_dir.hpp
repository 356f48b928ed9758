// A fresh directory under the system temporary directory ($TMPDIR), removed with
// everything in it when the test ends; shared by the tests that write files.
#pragma once

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

struct TempDir {
  std::string path;
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "mhaviz-test-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~TempDir() {
    std::error_code ec;  // a test that fails half-way must not throw from here
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return path + "/" + name; }
  // The names in the directory, sorted: what a test expects to find (or not) after a run.
  std::vector<std::string> List() const {
    std::vector<std::string> v;
    for (const auto& e : std::filesystem::directory_iterator(path)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
  }
  int Count() const { return static_cast<int>(List().size()); }
};
