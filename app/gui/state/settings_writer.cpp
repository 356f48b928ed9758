#include "gui/state/settings_writer.hpp"

#include <filesystem>
#include <iostream>

#include <GLFW/glfw3.h>
#include <imgui.h>

#include "gui/state/settings.hpp"
#include "io/files.hpp"
#include "options/terminal.hpp"

namespace mha::gui {

SettingsWriter::SettingsWriter(std::string config_dir) : config_dir_(std::move(config_dir)) {
  if (config_dir_.empty()) return;
  settings_path_ = config_dir_ + "/settings.json";
  ini_path_ = config_dir_ + "/imgui.ini";
}

void SettingsWriter::AfterFrame(const AppState& s, GLFWwindow* window) {
  WriteSettings(s, window, false);
  if (ImGui::GetIO().WantSaveIniSettings) WriteIni();
}

void SettingsWriter::Flush(const AppState& s, GLFWwindow* window) {
  WriteSettings(s, window, true);
  if (!ini_path_.empty()) WriteIni();
}

void SettingsWriter::WriteSettings(const AppState& s, GLFWwindow* window, bool force) {
  if (settings_path_.empty()) return;
  int w = 0, h = 0;
  glfwGetWindowSize(window, &w, &h);
  const std::string now = AppSettingsJson(s, w, h);
  if (now != pending_) {
    pending_ = now;
    pending_since_ = Clock::now();
  }
  if (now == written_ || (!force && Clock::now() - pending_since_ < std::chrono::seconds(1))) return;
  try {
    std::filesystem::create_directories(config_dir_);
    io::WriteFileAtomic(settings_path_, now);
    written_ = now;
  } catch (const std::exception& e) {
    if (force)
      std::cerr << "mhaviz: warning: could not save settings: " << options::TerminalSafe(e.what(), true) << "\n";
  }
}

void SettingsWriter::WriteIni() {
  if (ini_path_.empty()) return;
  try {
    std::filesystem::create_directories(config_dir_);
    io::WriteFileAtomic(ini_path_, IniText());
  } catch (const std::exception&) {
    // Losing the layout is harmless; the settings file reports write errors.
  }
  ImGui::GetIO().WantSaveIniSettings = false;
}

}  // namespace mha::gui
