#include "gui/state/notice.hpp"

#include <cstdio>
#include <vector>

#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// `format` with up to three string arguments (the positional %1$s form included).
std::string Fill(const char* format, std::vector<std::string> args) {
  args.resize(3);
  const int n = std::snprintf(nullptr, 0, format, args[0].c_str(), args[1].c_str(), args[2].c_str());
  if (n < 0) return format;
  std::vector<char> buf(static_cast<std::size_t>(n) + 1);
  std::snprintf(buf.data(), buf.size(), format, args[0].c_str(), args[1].c_str(), args[2].c_str());
  return buf.data();
}

std::string Join(const std::vector<Notice>& notices, bool shown) {
  std::string out;
  for (const Notice& n : notices) out += (out.empty() ? "" : " ") + (shown ? n.Shown() : n.English());
  return out;
}

}  // namespace

std::string Notice::English() const {
  std::vector<std::string> a = args;
  if (!parts.empty()) a.insert(a.begin(), Join(parts, false));
  return Fill(msgid, a);
}

std::string Notice::Shown() const {
  std::vector<std::string> a = args;
  if (!parts.empty()) a.insert(a.begin(), Join(parts, true));
  return Fill(_(msgid), a);
}

std::string English(const std::vector<Notice>& notices) { return Join(notices, false); }
std::string Shown(const std::vector<Notice>& notices) { return Join(notices, true); }

}  // namespace mha::gui
