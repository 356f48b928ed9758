#include "gui/fonts.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include <imgui.h>
#include <stb/stb_truetype.h>

#include "io/files.hpp"

namespace mha::gui {
namespace {

std::string ExeDir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<std::size_t>(n));
  const auto slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

// A font file we can hand to ImGui without tripping its asserts: parses as
// TrueType and, for the main font, has Hangul.
bool ValidFont(const std::string& bytes, bool need_hangul) {
  if (bytes.size() < 64) return false;
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const int offset = stbtt_GetFontOffsetForIndex(data, 0);
  if (offset < 0) return false;
  stbtt_fontinfo info;
  if (!stbtt_InitFont(&info, data, offset)) return false;
  if (stbtt_FindGlyphIndex(&info, 'A') == 0) return false;
  return !need_hangul || stbtt_FindGlyphIndex(&info, 0xAC00) != 0;  // 가
}

// Loads a validated font from memory (ImGui takes ownership of the copy).
ImFont* AddFont(const std::string& bytes, float size, const ImWchar* ranges) {
  ImFontConfig cfg;
  // The Korean range is ~11,000 glyphs: horizontal oversampling would triple the
  // atlas for no visible gain at UI sizes.
  cfg.OversampleH = 1;
  cfg.OversampleV = 1;
  cfg.PixelSnapH = true;
  void* copy = IM_ALLOC(bytes.size());
  std::memcpy(copy, bytes.data(), bytes.size());
  return ImGui::GetIO().Fonts->AddFontFromMemoryTTF(copy, static_cast<int>(bytes.size()), size, &cfg, ranges);
}

const ImWchar* KoreanPlusSymbols() {
  // ImGui's Korean range (Latin-1, Hangul compatibility jamo, all syllables) plus
  // the symbols the lesson text uses: Greek, arrows, math operators (√, ×, ≠),
  // sub/superscripts, box drawing and geometric shapes.
  static ImVector<ImWchar> ranges;
  if (ranges.empty()) {
    ImFontGlyphRangesBuilder b;
    b.AddRanges(ImGui::GetIO().Fonts->GetGlyphRangesKorean());
    static const ImWchar extra[] = {0x0370, 0x03FF, 0x1100, 0x11FF, 0x2000, 0x206F, 0x2070, 0x209F,
                                    0x2190, 0x21FF, 0x2200, 0x22FF, 0x2500, 0x25FF, 0x3000, 0x303F,
                                    0xFFFD, 0xFFFD, 0};
    b.AddRanges(extra);
    b.BuildRanges(&ranges);
  }
  return ranges.Data;
}

std::string ReadFontFile(const std::string& path) {
  try {
    return io::ReadFile(path, 64u << 20);
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

std::vector<std::string> FontSearchPath() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("MHAVIZ_ASSETS"); env && *env) dirs.push_back(std::string(env) + "/fonts");
  const std::string exe = ExeDir();
  for (const char* rel : {"/assets/fonts", "/../assets/fonts", "/../../assets/fonts", "/../share/mhaviz/assets/fonts"})
    dirs.push_back(exe + rel);
#ifdef MHAVIZ_SOURCE_ASSETS
  dirs.push_back(std::string(MHAVIZ_SOURCE_ASSETS) + "/fonts");
#endif
#ifdef MHAVIZ_INSTALL_ASSETS
  dirs.push_back(std::string(MHAVIZ_INSTALL_ASSETS) + "/fonts");
#endif
  dirs.push_back("/usr/share/fonts/truetype/nanum");
  return dirs;
}

std::string FindFont(const std::string& file) {
  for (const auto& d : FontSearchPath()) {
    std::error_code ec;
    const auto norm = std::filesystem::weakly_canonical(d + "/" + file, ec);
    const std::string p = ec ? d + "/" + file : norm.string();
    if (access(p.c_str(), R_OK) != 0) continue;
    const std::string bytes = ReadFontFile(p);
    if (ValidFont(bytes, file.find("Bold") == std::string::npos)) return p;
  }
  return {};
}

Fonts LoadFonts(float pixel_size, std::string* notice, bool with_label) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  // The atlas as tall as its glyphs, not the next power of two (GL 3.3 takes any size).
  io.Fonts->Flags |= ImFontAtlasFlags_NoPowerOfTwoHeight;
  Fonts f;
  if (notice) notice->clear();
  // $MHAVIZ_FONT names exactly one font (as for `mhaviz export`): no search.
  const char* forced = std::getenv("MHAVIZ_FONT");
  std::string regular;
  if (forced && *forced) {
    const std::string bytes = ReadFontFile(forced);
    if (ValidFont(bytes, true)) regular = forced;
  } else {
    regular = FindFont("NanumGothic.ttf");
  }
  if (!regular.empty()) {
    f.regular = AddFont(ReadFontFile(regular), pixel_size, KoreanPlusSymbols());
    f.path = regular;
  }
  if (!f.regular) {
    ImFontConfig cfg;
    cfg.SizePixels = pixel_size;
    f.regular = io.Fonts->AddFontDefault(&cfg);
    if (notice)
      *notice = forced && *forced
                    ? std::string("MHAVIZ_FONT = ") + forced +
                          " is not a readable TrueType font with Hangul; using the built-in font, so Korean text shows as '?'."
                    : "NanumGothic.ttf was not found or could not be read (looked in assets/fonts and "
                      "/usr/share/fonts/truetype/nanum), so Korean text shows as '?'. Install fonts-nanum.";
  }
  const std::string bold = f.path.empty() || (forced && *forced) ? std::string() : FindFont("NanumGothicBold.ttf");
  if (!bold.empty()) {
    static const ImWchar latin[] = {0x0020, 0x00FF, 0x2010, 0x2044, 0x2190, 0x21FF, 0x2200, 0x22FF, 0};
    f.bold = AddFont(ReadFontFile(bold), pixel_size, latin);
  }
  if (!f.bold) f.bold = f.regular;
  // Its own size in the atlas: glyphs are sampled unfiltered, so scaling a bigger
  // font down would look ragged.
  if (!f.path.empty()) {
    // Latin, and the ellipsis of shortened table cells.
    static const ImWchar latin[] = {0x0020, 0x00FF, 0x2026, 0x2026, 0};
    f.small = AddFont(ReadFontFile(f.path), std::round(pixel_size * 0.75f), latin);
  } else {
    ImFontConfig cfg;
    cfg.SizePixels = std::round(pixel_size * 0.75f);
    f.small = io.Fonts->AddFontDefault(&cfg);
  }
  // Heatmap labels a size down, for grids too dense for the full size: their own
  // glyphs, since a bigger font drawn smaller looks ragged (nearest sampling).
  if (with_label && !f.path.empty())
    f.label = AddFont(ReadFontFile(f.path), std::round(pixel_size * 0.8f), KoreanPlusSymbols());
  io.FontDefault = f.regular;
  return f;
}

}  // namespace mha::gui
