#include "gui/state/task.hpp"

#include <cstdio>

#include "text/i18n.hpp"

namespace mha::gui {

std::string TaskStageText(const std::pair<const char*, std::string>& stage) {
  if (!stage.first || !*stage.first) return std::string();
  char b[256];
  std::snprintf(b, sizeof b, _(stage.first), stage.second.c_str());
  return b;
}

}  // namespace mha::gui
