#include "gui/state/settings.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <imgui.h>
#include <imgui_internal.h>
#include <nlohmann/json.hpp>

#include "gui/style/wide_glyphs.hpp"
#include "io/files.hpp"
#include "io/json_parse.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

using nlohmann::json;

// Settings files are small; anything bigger is not ours.
constexpr std::size_t kMaxSettingsBytes = 1 << 20;

template <std::size_t N>
void CopyToBuf(std::array<char, N>& buf, const std::string& s) {
  std::size_t n = std::min(s.size(), N - 1);
  // Never cut a UTF-8 sequence in half: back up to a lead byte.
  while (n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  std::memcpy(buf.data(), s.data(), n);
  buf[n] = '\0';
}

Mask ParseMask(const std::string& v) {
  if (v == "none") return Mask::None;
  if (v == "causal") return Mask::Causal;
  throw std::runtime_error("mask must be 'none' or 'causal'");
}

Norm ParseNorm(const std::string& v) {
  if (v == "post") return Norm::Post;
  if (v == "pre") return Norm::Pre;
  if (v == "none") return Norm::None;
  throw std::runtime_error("norm must be 'post', 'pre' or 'none'");
}

}  // namespace

void SyncBuffersFromChoice(AppState& s) {
  if (s.choice.sentence.size() >= kSentenceCap || s.choice.memory.size() >= kSentenceCap)
    s.ui.notices.push_back({N_("The sentence field holds at most %s bytes, so the text given was cut off there. "
                               "(mhaviz trace and export take longer text.)"),
                            {std::to_string(kSentenceCap)}});
  // The fields show emoji through their stand-ins (wide_glyphs.hpp), which they can
  // hold and edit as one character each.
  CopyToBuf(s.ui.sentence_buf, ForDisplay(s.choice.sentence));
  CopyToBuf(s.ui.memory_buf, ForDisplay(s.choice.memory));
  // The computation reads exactly what the fields show.
  s.choice.sentence = FromDisplay(s.ui.sentence_buf.data());
  s.choice.memory = FromDisplay(s.ui.memory_buf.data());
}

std::string ConfigDir() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x == '/') return std::string(x) + "/mhaviz";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.config/mhaviz";
  return {};
}

std::string AppSettingsJson(const AppState& s, int window_w, int window_h) {
  const Config& c = s.choice.cfg;
  json j;
  j["version"] = 1;
  // A trained model's ids ("3 1 4") mean nothing to the next start's seeded weights.
  j["sentence"] = UsingTrainedModel(s) ? s.choice.source.seeded_sentence : s.choice.sentence;
  j["memory"] = s.choice.memory;
  j["cross"] = s.choice.cross;
  j["config"] = {{"d_model", c.d_model},
                 {"num_heads", c.num_heads},
                 {"num_kv_heads", c.num_kv_heads},
                 {"seed", c.seed},
                 {"mask", ToString(c.mask)},
                 {"norm", ToString(c.norm)},
                 {"scale", c.scale},
                 {"positional_encoding", c.positional_encoding},
                 {"temperature", c.temperature},
                 {"block", ToString(c.block)},
                 {"d_ff", c.d_ff},
                 {"activation", ToString(c.activation)}};
  j["ui"] = {{"text_size", s.ui.text_size}, {"dark", s.ui.dark}, {"colour_scale", render::ToString(s.ui.colour_scale)}};
  if (!s.ui.lang_chosen.empty()) j["ui"]["language"] = s.ui.lang_chosen;
  j["export"] = {{"path", std::string(s.ui.exports.path.data())},
                 {"screenshot_path", std::string(s.ui.exports.screenshot_path.data())},
                 {"selected_only", s.ui.exports.selected_only},
                 {"scale", s.ui.exports.scale},
                 {"values", s.ui.exports.values},
                 {"columns", s.ui.exports.columns},
                 {"header", s.ui.exports.header},
                 {"fit_16_9", s.ui.exports.fit_16_9},
                 {"head_view", s.ui.exports.head_view},
                 {"notebook", s.ui.exports.notebook}};
  j["window"] = {{"width", window_w}, {"height", window_h}};
  // Invalid UTF-8 cannot reach here (the tokenizer's input is the text field, and
  // ImGui only inserts valid code points), but never let a dump throw.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::vector<Notice> LoadAppSettings(const std::string& path, AppState& s, int* window_w, int* window_h) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  AppState parsed;  // parse into a copy: a bad file must leave `s` untouched
  parsed.choice = s.choice;
  parsed.ui.text_size = s.ui.text_size;
  parsed.ui.dark = s.ui.dark;
  parsed.ui.colour_scale = s.ui.colour_scale;
  parsed.ui.lang_chosen = s.ui.lang_chosen;
  parsed.ui.exports = s.ui.exports;
  int w = 0, h = 0;
  try {
    const json j = io::ParseJson(io::ReadFile(path, kMaxSettingsBytes));
    if (!j.is_object() || j.value("version", 0) != 1)
      throw std::runtime_error("not an mhaviz settings file (version 1)");
    parsed.choice.sentence = j.at("sentence").get<std::string>();
    parsed.choice.memory = j.value("memory", std::string());
    parsed.choice.cross = j.value("cross", false);
    const json& c = j.at("config");
    Config& cfg = parsed.choice.cfg;
    cfg.d_model = c.at("d_model").get<int>();
    cfg.num_heads = c.at("num_heads").get<int>();
    cfg.num_kv_heads = c.value("num_kv_heads", 0);
    cfg.seed = c.value("seed", cfg.seed);
    cfg.mask = ParseMask(c.value("mask", std::string("none")));
    cfg.norm = ParseNorm(c.value("norm", std::string("post")));
    cfg.scale = c.value("scale", true);
    cfg.positional_encoding = c.value("positional_encoding", true);
    cfg.temperature = c.value("temperature", 1.0f);
    cfg.block = c.value("block", std::string("attention")) == "encoder" ? Block::Encoder : Block::Attention;
    cfg.d_ff = std::clamp(c.value("d_ff", 0), 0, Limits::kMaxDFf);
    cfg.activation = c.value("activation", std::string("relu")) == "gelu" ? Activation::Gelu : Activation::Relu;
    if (j.contains("ui")) {
      parsed.ui.text_size = std::clamp(j["ui"].value("text_size", 100), 50, 300);
      parsed.ui.dark = j["ui"].value("dark", false);
      render::ParseColourScale(j["ui"].value("colour_scale", std::string("fixed")), &parsed.ui.colour_scale);
      const std::string lang = j["ui"].value("language", std::string());
      if (lang == "en" || lang == "ko") parsed.ui.lang_chosen = lang;  // anything else: the environment's
    }
    if (j.contains("export")) {
      const json& e = j["export"];
      CopyToBuf(parsed.ui.exports.path, e.value("path", std::string(s.ui.exports.path.data())));
      CopyToBuf(parsed.ui.exports.screenshot_path,
                e.value("screenshot_path", std::string(s.ui.exports.screenshot_path.data())));
      parsed.ui.exports.selected_only = e.value("selected_only", false);
      parsed.ui.exports.scale = std::clamp(e.value("scale", 2), 1, 8);
      parsed.ui.exports.values = e.value("values", true);
      parsed.ui.exports.columns = std::clamp(e.value("columns", 0), 0, 8);
      parsed.ui.exports.header = e.value("header", true);
      parsed.ui.exports.fit_16_9 = e.value("fit_16_9", false);
      parsed.ui.exports.head_view = e.value("head_view", false);
      parsed.ui.exports.notebook = e.value("notebook", false);
    }
    if (j.contains("window")) {
      w = j["window"].value("width", w);
      h = j["window"].value("height", h);
    }
  } catch (const std::exception& e) {
    // The file may be hand-edited, or from a newer mhaviz: moved aside, not overwritten
    // by the settings this session saves.
    const std::string bak = path + ".bak";
    std::error_code moved;
    std::filesystem::rename(path, bak, moved);
    const std::string why = io::Excerpt(e.what(), 200);
    if (moved)
      return {{N_("The settings file %s could not be read (%s), so mhaviz started with the default sentence and "
                  "configuration. It is left as it is (%s)."),
               {path, why, moved.message()}}};
    return {{N_("The settings file %s could not be read (%s), so mhaviz started with the default sentence and "
                "configuration. It was kept as %s, nothing in it is lost."),
             {path, why, bak}}};
  }
  s.choice = parsed.choice;
  s.ui.text_size = parsed.ui.text_size;
  s.ui.dark = parsed.ui.dark;
  s.ui.colour_scale = parsed.ui.colour_scale;
  s.ui.lang_chosen = parsed.ui.lang_chosen;
  s.ui.exports = parsed.ui.exports;
  if (window_w && window_h && w >= 320 && w <= 16384 && h >= 240 && h <= 16384) {
    *window_w = w;
    *window_h = h;
  }
  SyncBuffersFromChoice(s);
  s.dirty = true;
  return {};
}

namespace {

void* IniOpen(ImGuiContext*, ImGuiSettingsHandler* h, const char* name) {
  return std::strcmp(name, "Layout") == 0 ? h->UserData : nullptr;
}

void IniLine(ImGuiContext*, ImGuiSettingsHandler*, void* entry, const char* line) {
  auto* s = static_cast<AppState*>(entry);
  float v = 0.0f;
  // Sane ranges only: a hand-edited ini must not hide a panel for good.
  if (std::sscanf(line, "LeftWidth=%f", &v) == 1 && v >= 200.0f && v <= 4000.0f) s->ui.splitters.left_width = v;
  if (std::sscanf(line, "FlowHeight=%f", &v) == 1 && v >= 80.0f && v <= 4000.0f) s->ui.splitters.flow_height = v;
  int i = 0;
  if (std::sscanf(line, "FlowCollapsed=%d", &i) == 1) s->ui.splitters.flow_collapsed = i != 0;
}

void IniWrite(ImGuiContext*, ImGuiSettingsHandler* h, ImGuiTextBuffer* out) {
  const auto* s = static_cast<const AppState*>(h->UserData);
  out->appendf("[%s][Layout]\n", h->TypeName);
  out->appendf("LeftWidth=%.0f\nFlowHeight=%.0f\nFlowCollapsed=%d\n\n", s->ui.splitters.left_width,
               s->ui.splitters.flow_height, s->ui.splitters.flow_collapsed ? 1 : 0);
}

}  // namespace

void RegisterIniHandler(AppState& s) {
  ImGuiSettingsHandler h;
  h.TypeName = "mhaviz";
  h.TypeHash = ImHashStr("mhaviz");
  h.ReadOpenFn = IniOpen;
  h.ReadLineFn = IniLine;
  h.WriteAllFn = IniWrite;
  h.UserData = &s;
  ImGui::GetCurrentContext()->SettingsHandlers.push_back(h);
}

void LoadIni(const std::string& path) {
  std::string text;
  try {
    text = io::ReadFile(path, kMaxSettingsBytes);
  } catch (const std::exception&) {
    return;  // no layout yet: the defaults
  }
  ImGui::LoadIniSettingsFromMemory(text.data(), text.size());
}

std::string IniText() {
  std::size_t n = 0;
  const char* p = ImGui::SaveIniSettingsToMemory(&n);
  return std::string(p, n);
}

}  // namespace mha::gui
