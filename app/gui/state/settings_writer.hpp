// Saves settings.json and imgui.ini while the app runs: settings after a second of
// quiet (dragging a slider does not write 60 files a second), the layout when ImGui
// asks, and both at exit. Atomic writes (io/files.hpp).
#pragma once

#include <chrono>
#include <string>

#include "gui/state/app_state.hpp"

struct GLFWwindow;

namespace mha::gui {

class SettingsWriter {
 public:
  // `config_dir` "" saves nothing (--no-settings, automation).
  explicit SettingsWriter(std::string config_dir);
  const std::string& settings_path() const { return settings_path_; }
  const std::string& ini_path() const { return ini_path_; }

  // Once per frame.
  void AfterFrame(const AppState& s, GLFWwindow* window);
  // At exit: whatever changed, now; a failed settings write is reported on stderr.
  void Flush(const AppState& s, GLFWwindow* window);

 private:
  using Clock = std::chrono::steady_clock;
  void WriteSettings(const AppState& s, GLFWwindow* window, bool force);
  void WriteIni();

  std::string config_dir_, settings_path_, ini_path_;
  std::string written_;  // what the file holds as far as we know
  std::string pending_;  // the latest settings, and since when they are unchanged
  Clock::time_point pending_since_ = Clock::now();
};

}  // namespace mha::gui
