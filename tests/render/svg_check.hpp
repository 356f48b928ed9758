// A small strict XML reader for the exported SVGs: enough to prove the file is
// well-formed (balanced tags, quoted attributes, valid entities, no raw '<' or '&' in
// text) and to list elements with their attributes and text. Tests only.
#pragma once

#include <cctype>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace svgcheck {

struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;  // unescaped values
  std::string text;                          // unescaped direct text (children's text excluded)
  int parent = -1;
};

inline std::string Unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') throw std::runtime_error("raw '<' in text or attribute: " + s);
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    const std::size_t semi = s.find(';', i);
    if (semi == std::string::npos) throw std::runtime_error("bare '&' in: " + s);
    const std::string ent = s.substr(i + 1, semi - i - 1);
    if (ent == "amp")
      out += '&';
    else if (ent == "lt")
      out += '<';
    else if (ent == "gt")
      out += '>';
    else if (ent == "quot")
      out += '"';
    else if (ent == "apos")
      out += '\'';
    else
      throw std::runtime_error("unknown entity &" + ent + ";");
    i = semi;
  }
  return out;
}

// Parses the whole document; throws std::runtime_error if it is not well-formed.
inline std::vector<Element> Parse(const std::string& doc) {
  std::vector<Element> els;
  std::vector<int> stack;
  std::size_t i = 0;
  auto is_name = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
  };
  while (i < doc.size()) {
    if (doc[i] != '<') {
      const std::size_t next = doc.find('<', i);
      const std::string raw = doc.substr(i, next == std::string::npos ? std::string::npos : next - i);
      const std::string txt = Unescape(raw);
      if (!stack.empty())
        els[static_cast<std::size_t>(stack.back())].text += txt;
      else if (txt.find_first_not_of(" \t\r\n") != std::string::npos)
        throw std::runtime_error("text outside the root element");
      if (next == std::string::npos) break;
      i = next;
      continue;
    }
    if (doc.compare(i, 5, "<?xml") == 0) {
      const std::size_t e = doc.find("?>", i);
      if (e == std::string::npos) throw std::runtime_error("unterminated <?xml");
      i = e + 2;
      continue;
    }
    if (doc.compare(i, 4, "<!--") == 0) {
      const std::size_t e = doc.find("-->", i);
      if (e == std::string::npos) throw std::runtime_error("unterminated comment");
      i = e + 3;
      continue;
    }
    if (doc.compare(i, 2, "</") == 0) {
      std::size_t j = i + 2;
      while (j < doc.size() && is_name(doc[j])) ++j;
      const std::string name = doc.substr(i + 2, j - i - 2);
      if (j >= doc.size() || doc[j] != '>') throw std::runtime_error("bad end tag </" + name);
      if (stack.empty() || els[static_cast<std::size_t>(stack.back())].name != name)
        throw std::runtime_error("mismatched end tag </" + name + ">");
      stack.pop_back();
      i = j + 1;
      continue;
    }
    std::size_t j = i + 1;
    while (j < doc.size() && is_name(doc[j])) ++j;
    Element el;
    el.name = doc.substr(i + 1, j - i - 1);
    if (el.name.empty()) throw std::runtime_error("empty tag name");
    el.parent = stack.empty() ? -1 : stack.back();
    bool self_closing = false;
    for (;;) {
      while (j < doc.size() && std::isspace(static_cast<unsigned char>(doc[j]))) ++j;
      if (j >= doc.size()) throw std::runtime_error("unterminated tag <" + el.name);
      if (doc[j] == '>') {
        ++j;
        break;
      }
      if (doc.compare(j, 2, "/>") == 0) {
        self_closing = true;
        j += 2;
        break;
      }
      std::size_t k = j;
      while (k < doc.size() && is_name(doc[k])) ++k;
      const std::string an = doc.substr(j, k - j);
      if (an.empty() || k + 1 >= doc.size() || doc[k] != '=' || (doc[k + 1] != '"' && doc[k + 1] != '\''))
        throw std::runtime_error("bad attribute in <" + el.name + ">");
      const char q = doc[k + 1];
      const std::size_t end = doc.find(q, k + 2);
      if (end == std::string::npos) throw std::runtime_error("unterminated attribute value");
      if (el.attrs.count(an)) throw std::runtime_error("duplicate attribute " + an);
      el.attrs[an] = Unescape(doc.substr(k + 2, end - k - 2));
      j = end + 1;
    }
    if (stack.empty() && !els.empty()) throw std::runtime_error("more than one root element");
    els.push_back(el);
    if (!self_closing) stack.push_back(static_cast<int>(els.size()) - 1);
    i = j;
  }
  if (!stack.empty()) throw std::runtime_error("unclosed <" + els[static_cast<std::size_t>(stack.back())].name + ">");
  if (els.empty()) throw std::runtime_error("no root element");
  return els;
}

inline std::size_t Count(const std::vector<Element>& els, const std::string& name, const std::string& cls) {
  std::size_t n = 0;
  for (const auto& e : els) {
    auto it = e.attrs.find("class");
    if (e.name == name && it != e.attrs.end() && it->second == cls) ++n;
  }
  return n;
}

inline std::vector<std::string> Texts(const std::vector<Element>& els, const std::string& cls) {
  std::vector<std::string> out;
  for (const auto& e : els) {
    auto it = e.attrs.find("class");
    if (e.name == "text" && it != e.attrs.end() && it->second == cls) out.push_back(e.text);
  }
  return out;
}

}  // namespace svgcheck
