// The notebook's building blocks: cells as Jupyter stores them, Python literals that
// read back exactly, placeholders that cannot ship unfilled, markdown that shows typed
// text as typed. (The notebooks themselves run in test_notebook.py.)
#include <catch2/catch.hpp>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "mha/forward.hpp"
#include "mha/weights.hpp"
#include "notebook/cells.hpp"
#include "notebook/ipynb.hpp"
#include "notebook/notebook.hpp"

using namespace mha::notebook;

TEST_CASE("a notebook is nbformat 4.5: code and markdown cells with ids, no outputs", "[notebook]") {
  Ipynb nb;
  nb.Markdown("# Title\n\ntext\n");
  nb.Code("\nx = 1\nprint(x)\n\n");
  const nlohmann::json j = nlohmann::json::parse(nb.Json());
  CHECK(j["nbformat"] == 4);
  CHECK(j["nbformat_minor"] == 5);
  CHECK(j["metadata"]["kernelspec"]["name"] == "python3");
  REQUIRE(j["cells"].size() == 2);
  CHECK(j["cells"][0]["cell_type"] == "markdown");
  CHECK(j["cells"][0]["source"] == nlohmann::json({"# Title\n", "\n", "text"}));
  CHECK(j["cells"][1]["source"] == nlohmann::json({"x = 1\n", "print(x)"}));  // blank edges trimmed
  CHECK(j["cells"][1]["outputs"].empty());
  CHECK(j["cells"][1]["execution_count"].is_null());
  CHECK(j["cells"][0]["id"] != j["cells"][1]["id"]);
}

TEST_CASE("Python literals escape what Python would misread and keep UTF-8", "[notebook]") {
  CHECK(PyStr("고양이가") == "\"고양이가\"");
  CHECK(PyStr("a\"b\\c\nd\te\x01") == "\"a\\\"b\\\\c\\nd\\te\\x01\"");
  CHECK(PyStrList({"a", "b"}) == "[\"a\", \"b\"]");
  CHECK(PyIntList({1, -2}) == "[1, -2]");
  CHECK(PyBool(true) == "True");
  for (const float v : {1e-5f, 0.001f, 3.0f, 0.1f, 1.0f / 3.0f, 9.999999747378752e-06f}) {
    const std::string s = PyFloat(v);
    CHECK(static_cast<float>(std::strtod(s.c_str(), nullptr)) == v);
  }
  CHECK(PyFloat(1e-5f) == "1e-05");
}

TEST_CASE("a template's placeholders are all filled, or it throws", "[notebook]") {
  CHECK(Fill("a = {{x}}; b = {{y}}, {{x}}", {{"x", "1"}, {"y", "2"}}) == "a = 1; b = 2, 1");
  CHECK(Fill("{k: v for k in d}", {}) == "{k: v for k in d}");  // Python's braces stay
  CHECK_THROWS_AS(Fill("a = {{missing}}", {{"x", "1"}}), std::logic_error);
  CHECK_THROWS_AS(Fill("a = {{open", {}), std::logic_error);
}

TEST_CASE("typed text shows in markdown as typed, on one line, cut with an ellipsis", "[notebook]") {
  CHECK(MarkdownText("a*b_c <i>$x$") == "a\\*b\\_c \\<i\\>\\$x\\$");
  CHECK(MarkdownText("line\nnext") == "line next");
  CHECK(MarkdownText("고양이가 쥐를", 3) == "고양이\u2026");
  CHECK(CodeList({"q", "k"}) == "`q`, `k`");
}

TEST_CASE("the size cap counts exactly the tensors a layer's notebook writes", "[notebook]") {
  struct Case {
    int d, heads, kv, seq, seq_kv;
    mha::Norm norm;
    mha::Block block;
  };
  for (const Case& k : {Case{16, 4, 0, 5, 5, mha::Norm::Post, mha::Block::Attention},
                        Case{32, 8, 2, 3, 7, mha::Norm::Pre, mha::Block::Encoder},
                        Case{24, 3, 1, 6, 6, mha::Norm::None, mha::Block::Encoder}}) {
    mha::Config c;
    c.d_model = k.d;
    c.num_heads = k.heads;
    c.num_kv_heads = k.kv;
    c.norm = k.norm;
    c.block = k.block;
    mha::Inputs in;
    in.x = mha::Mat::Random(k.seq, k.d);
    in.tokens.assign(static_cast<std::size_t>(k.seq), "t");
    const bool cross = k.seq != k.seq_kv;
    if (cross) {
      in.memory = mha::Mat::Random(k.seq_kv, k.d);
      in.memory_tokens.assign(static_cast<std::size_t>(k.seq_kv), "m");
    }
    const mha::Trace t = mha::Forward(c, std::make_shared<const mha::Weights>(mha::InitWeights(c)), in);
    std::int64_t bytes = 0;
    for (const mha::TensorView& v : mha::Tensors(t)) bytes += 4 * v.size();
    CHECK(LayerTensorBytes(c, k.seq, k.seq_kv, cross) == bytes);
  }
}
