// A message for the learner, made where it happens and shown in the interface's
// language: it carries its msgid (marked N_() where it is made) and its arguments, so
// the window translates the msgid and fills in the arguments, and --dump-state and the
// terminal read the same words in English. Nothing parses a notice's words back.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace mha::gui {

struct Notice {
  Notice() = default;
  Notice(const char* id, std::vector<std::string> a = {}, std::vector<Notice> p = {})
      : msgid(id), args(std::move(a)), parts(std::move(p)) {}

  const char* msgid = "";         // a printf format: %s (or %1$s, %2$s) for each argument
  std::vector<std::string> args;  // as made (numbers, names, paths)
  std::vector<Notice> parts;      // or notices, joined with spaces, as the first argument

  std::string English() const;
  std::string Shown() const;  // the msgid translated (i18n), the parts too
};

// Notices joined with spaces, as one line.
std::string English(const std::vector<Notice>& notices);
std::string Shown(const std::vector<Notice>& notices);

}  // namespace mha::gui
