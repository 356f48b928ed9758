// `mhaviz export` as a user runs it: no display, real files, exit codes, messages.
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stb_image.h>  // implementation in libstb

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "svg_check.hpp"
#include "../temp_dir.hpp"

namespace {

struct Result {
  int status = -1;
  std::string output;  // stdout and stderr
};

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs mhaviz with DISPLAY (and WAYLAND_DISPLAY) removed from the environment.
Result Mhaviz(const std::vector<std::string>& args, const std::string& env = "") {
  std::string cmd = "env -u DISPLAY -u WAYLAND_DISPLAY " + env + " " + Quote(MHAVIZ_BIN);
  for (const auto& a : args) cmd += " " + Quote(a);
  cmd += " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

const char* kFox = "The quick brown fox jumps over the lazy dog .";

}  // namespace

TEST_CASE("export with DISPLAY unset writes a PNG that decodes and an SVG with heads x seq x seq cells",
          "[cli][export]") {
  TempDir dir;
  const std::string png = dir.path + "/fox.png", svg = dir.path + "/fox.svg";
  const Result r =
      Mhaviz({"export", "--sentence", kFox, "--heads", "8", "--d-model", "64", "--png", png, "--svg", svg});
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("wrote " + png));
  const std::string bytes = Slurp(png);
  int w = 0, h = 0, comp = 0;
  unsigned char* pix = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(bytes.data()),
                                             static_cast<int>(bytes.size()), &w, &h, &comp, 3);
  REQUIRE(pix != nullptr);
  stbi_image_free(pix);
  // The size the command reports is the size in the file.
  CHECK_THAT(r.output, Catch::Contains("(" + std::to_string(w) + " x " + std::to_string(h) + " px"));
  CHECK(w > 1000);  // 8 maps + mean at slide resolution
  CHECK(h > 500);
  const auto els = svgcheck::Parse(Slurp(svg));
  CHECK(svgcheck::Count(els, "rect", "cell") == 8u * 10 * 10);
  // Only the two outputs, no temporary files left behind.
  CHECK(dir.List().size() == 2);
}

TEST_CASE("export --head K draws one head, with Korean labels in the SVG", "[cli][export]") {
  TempDir dir;
  const std::string svg = dir.path + "/cat.svg", png = dir.path + "/cat.png";
  const Result r = Mhaviz({"export", "--sentence", "고양이가 쥐를 잡았다", "--heads", "8", "--kv-heads", "2", "--head",
                           "5", "--svg", svg, "--png", png, "--scale", "1"});
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto els = svgcheck::Parse(Slurp(svg));
  CHECK(svgcheck::Count(els, "rect", "cell") == 3u * 3);
  CHECK(svgcheck::Count(els, "rect", "mean-cell") == 0);
  const auto rows = svgcheck::Texts(els, "row-label");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == "고양이가");
  bool gqa_title = false;
  for (const auto& e : els) gqa_title = gqa_title || (e.name == "text" && e.text == "reads K/V head 1");
  CHECK(gqa_title);  // 8 query heads share 2 K/V heads: heads 4..7 read K/V head 1
}

TEST_CASE("export usage errors: exit 2 with a teaching message", "[cli][export]") {
  TempDir dir;
  const std::string png = dir.path + "/x.png";
  SECTION("no output file") {
    const Result r = Mhaviz({"export", "--sentence", kFox});
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Catch::Contains("--png") && Catch::Contains("--svg"));
  }
  SECTION("head out of range names the valid range") {
    const Result r = Mhaviz({"export", "--sentence", kFox, "--heads", "8", "--head", "8", "--png", png});
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Catch::Contains("0 to 7"));
  }
  SECTION("negative head") {
    const Result r = Mhaviz({"export", "--heads", "4", "--head", "-1", "--png", png});
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Catch::Contains("0 to 3"));
  }
  SECTION("scale out of range") {
    const Result r = Mhaviz({"export", "--scale", "9", "--png", png});
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Catch::Contains("--scale"));
  }
  SECTION("a colour-scale name given to --scale points to --color-scale") {
    const Result r = Mhaviz({"export", "--scale", "row", "--png", png});
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Catch::Contains("--color-scale row"));
  }
  SECTION("slide flags out of range") {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"--color-scale", "rows"}, {"--columns", "0"}, {"--fit", "16x9"}, {"--fit", "16:0"}, {"--fit", "9:100"}}) {
      std::vector<std::string> a = {"export", "--png", png};
      a.insert(a.end(), args.begin(), args.end());
      const Result r = Mhaviz(a);
      INFO(args[0] << " " << args[1] << ": " << r.output);
      CHECK(r.status == 2);
      CHECK_THAT(r.output, Catch::Contains(args[0]));
    }
  }
  SECTION("bad configuration from the shared flags") {
    const Result r = Mhaviz({"export", "--heads", "7", "--d-model", "64", "--png", png});
    CHECK(r.status == 2);
  }
  CHECK(dir.List().empty());
}

TEST_CASE("export to an unwritable path: exit 1, a clear message, no file left", "[cli][export]") {
  TempDir dir;
  SECTION("missing directory") {
    const std::string png = dir.path + "/no/such/dir/x.png";
    const Result r = Mhaviz({"export", "--sentence", kFox, "--png", png});
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("Cannot write") && Catch::Contains(png));
    CHECK(dir.List().empty());
  }
  SECTION("the path is a directory") {
    const std::string sub = dir.path + "/taken";
    REQUIRE(mkdir(sub.c_str(), 0755) == 0);
    const Result r = Mhaviz({"export", "--sentence", kFox, "--svg", sub});
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("directory"));
    CHECK(dir.List() == std::vector<std::string>{"taken"});
  }
  SECTION("a file in the way of the directory") {
    const std::string file = dir.path + "/file";
    std::ofstream(file) << "x";
    const Result r = Mhaviz({"export", "--sentence", kFox, "--png", file + "/x.png"});
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("Cannot write"));
    CHECK(dir.List() == std::vector<std::string>{"file"});
  }
  SECTION("one bad path of two: neither file is written") {
    const std::string png = dir.path + "/ok.png", svg = dir.path + "/missing/x.svg";
    const Result r = Mhaviz({"export", "--sentence", kFox, "--png", png, "--svg", svg});
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains(svg));
    CHECK(dir.List().empty());
  }
  SECTION("an existing file is replaced whole or not at all") {
    const std::string png = dir.path + "/keep.png";
    std::ofstream(png) << "old";
    const Result bad = Mhaviz({"export", "--heads", "8", "--head", "9", "--png", png});
    CHECK(bad.status == 2);
    CHECK(Slurp(png) == "old");
    const Result ok = Mhaviz({"export", "--png", png, "--quiet"});
    CHECK(ok.status == 0);
    CHECK(ok.output.empty());
    CHECK(Slurp(png).substr(1, 3) == "PNG");
    CHECK(dir.List() == std::vector<std::string>{"keep.png"});
  }
}

TEST_CASE("export --help lists the export flags", "[cli][export]") {
  const Result r = Mhaviz({"export", "--help"});
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("--png") && Catch::Contains("--svg") && Catch::Contains("--head K") &&
                           Catch::Contains("--scale") && Catch::Contains("--no-values") &&
                           Catch::Contains("--kv-heads"));
}

TEST_CASE("export without a usable font: exit 1, says how to fix it, writes nothing", "[cli][export]") {
  TempDir dir;
  const std::string png = dir.path + "/x.png", svg = dir.path + "/x.svg";
  for (const std::string& font : {dir.path + "/missing.ttf", std::string("/etc/hostname")}) {
    const Result r = Mhaviz({"export", "--sentence", kFox, "--png", png, "--svg", svg}, "MHAVIZ_FONT=" + Quote(font));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("font") && Catch::Contains(font) && Catch::Contains("fonts-nanum"));
    CHECK(dir.List().empty());
  }
}

TEST_CASE("export --fit 16:9 --no-header --color-scale row writes a 16:9 slide", "[cli][export][slide]") {
  TempDir dir;
  const std::string png = dir.path + "/slide.png", svg = dir.path + "/slide.svg";
  const Result r = Mhaviz({"export", "--sentence", kFox, "--heads", "8", "--fit", "16:9", "--no-header",
                           "--color-scale", "row", "--columns", "5", "--png", png, "--svg", svg});
  INFO(r.output);
  REQUIRE(r.status == 0);
  int w = 0, h = 0, comp = 0;
  REQUIRE(stbi_info(png.c_str(), &w, &h, &comp) == 1);
  CHECK(std::abs(w * 9 - h * 16) <= 16);
  const std::string s = Slurp(svg);
  CHECK_THAT(s, Catch::Contains("weight / row max"));
  CHECK(s.find("sentence: ") == std::string::npos);
}
