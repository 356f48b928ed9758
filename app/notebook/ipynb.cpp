#include "notebook/ipynb.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace mha::notebook {
namespace {

// Jupyter stores a cell's source as its lines, each but the last keeping its "\n".
nlohmann::json Lines(const std::string& text) {
  nlohmann::json lines = nlohmann::json::array();
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

// Trailing newlines would show as empty lines at the end of every cell.
std::string Trimmed(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  while (!text.empty() && text.front() == '\n') text.erase(text.begin());
  return text;
}

}  // namespace

std::string Ipynb::Json() const {
  nlohmann::json cells = nlohmann::json::array();
  for (std::size_t i = 0; i < cells_.size(); ++i) {
    char id[32];
    std::snprintf(id, sizeof id, "mhaviz-%02zu", i);
    nlohmann::json c = {{"cell_type", cells_[i].code ? "code" : "markdown"},
                        {"id", id},
                        {"metadata", nlohmann::json::object()},
                        {"source", Lines(Trimmed(cells_[i].text))}};
    if (cells_[i].code) {
      c["execution_count"] = nullptr;
      c["outputs"] = nlohmann::json::array();
    }
    cells.push_back(std::move(c));
  }
  const nlohmann::json nb = {
      {"cells", cells},
      {"metadata",
       {{"kernelspec", {{"display_name", "Python 3"}, {"language", "python"}, {"name", "python3"}}},
        {"language_info", {{"name", "python"}}}}},
      {"nbformat", 4},
      {"nbformat_minor", 5}};
  return nb.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string PyStr(const std::string& utf8) {
  std::string out = "\"";
  for (const char ch : utf8) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\x%02x", c);
          out += esc;
        } else {
          out += ch;  // UTF-8 passes through: Python 3 source is UTF-8
        }
    }
  }
  return out + "\"";
}

std::string PyStrList(const std::vector<std::string>& items) {
  std::string out = "[";
  std::size_t line = 1;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item = PyStr(items[i]);
    if (i > 0) {
      out += ",";
      if (line + item.size() > 88) {
        out += "\n    ";
        line = 4;
      } else {
        out += " ";
        ++line;
      }
    }
    out += item;
    line += item.size() + 1;
  }
  return out + "]";
}

std::string PyIntList(const std::vector<int>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + std::to_string(items[i]);
  return out + "]";
}

std::string PyFloat(double v) {
  char buf[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (static_cast<float>(std::strtod(buf, nullptr)) == static_cast<float>(v)) break;
  }
  return buf;
}

std::string PyBool(bool v) { return v ? "True" : "False"; }

std::string Fill(const std::string& tmpl, std::initializer_list<std::pair<const char*, std::string>> values) {
  std::string out;
  out.reserve(tmpl.size());
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = tmpl.find("{{", pos);
    if (open == std::string::npos) break;
    const std::size_t close = tmpl.find("}}", open + 2);
    if (close == std::string::npos) throw std::logic_error("an unclosed {{ in a notebook template");
    const std::string name = tmpl.substr(open + 2, close - open - 2);
    const std::string* value = nullptr;
    for (const auto& [k, v] : values)
      if (name == k) value = &v;
    if (!value) throw std::logic_error("the notebook template's {{" + name + "}} has no value");
    out.append(tmpl, pos, open - pos);
    out += *value;
    pos = close + 2;
  }
  out.append(tmpl, pos, std::string::npos);
  return out;
}

}  // namespace mha::notebook
