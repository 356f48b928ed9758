// What persists between sessions: the last sentence and configuration (an app
// settings file, JSON) and the window layout (imgui.ini, which also carries the
// splitter positions). Both live in $XDG_CONFIG_HOME/mhaviz (default
// ~/.config/mhaviz) and are written atomically.
#pragma once

#include <string>

#include "gui/state/app_state.hpp"

namespace mha::gui {

// $XDG_CONFIG_HOME/mhaviz, or $HOME/.config/mhaviz; "" if neither is set.
std::string ConfigDir();

// The app settings as JSON (what SaveAppSettings writes).
std::string AppSettingsJson(const AppState& s, int window_w, int window_h);

// Reads the app settings file into `s` (choice, text size, theme, export fields).
// A missing file is not an error. A corrupt or unreadable one leaves `s` at its
// defaults and returns a notice for the learner; otherwise none.
std::vector<Notice> LoadAppSettings(const std::string& path, AppState& s, int* window_w, int* window_h);

// Registers the [mhaviz][Layout] section of imgui.ini (splitter positions).
void RegisterIniHandler(AppState& s);
// imgui.ini through WriteFileAtomic instead of ImGui's own fopen.
void LoadIni(const std::string& path);
std::string IniText();

}  // namespace mha::gui
