// A Jupyter notebook (nbformat 4.5) built cell by cell, and the Python literals its code
// cells are written with. No UI and no file access: the caller writes the text.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace mha::notebook {

class Ipynb {
 public:
  void Markdown(const std::string& text) { cells_.push_back({false, text}); }
  void Code(const std::string& text) { cells_.push_back({true, text}); }
  // The notebook as JSON text: the cells in order, each with a stable id, no outputs
  // (it has not been run), and the python3 kernel named in its metadata.
  std::string Json() const;

 private:
  struct Cell {
    bool code;
    std::string text;
  };
  std::vector<Cell> cells_;
};

// A Python string literal holding `utf8` exactly: double-quoted, with the characters
// Python would misread (quotes, backslashes, control characters) escaped.
std::string PyStr(const std::string& utf8);
// ["a", "b"]: a list of string literals, wrapped after about 88 columns.
std::string PyStrList(const std::vector<std::string>& items);
// [1, 2, 3]
std::string PyIntList(const std::vector<int>& items);
// A float written so that float32 reads it back exactly ("0.001", "1e-05", "3").
std::string PyFloat(double v);
std::string PyBool(bool v);

// `tmpl` with every {{name}} replaced by its value. A placeholder without a value is a
// programming error and throws std::logic_error, so a template cannot ship one unfilled.
std::string Fill(const std::string& tmpl, std::initializer_list<std::pair<const char*, std::string>> values);

}  // namespace mha::notebook
