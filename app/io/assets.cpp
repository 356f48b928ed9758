#include "io/assets.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace mha::io {

std::string ExeDir() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  const std::string p(buf, static_cast<std::size_t>(n));
  const auto slash = p.rfind('/');
  return slash == std::string::npos ? "" : p.substr(0, slash);
}

std::vector<std::string> AssetDirs(const std::string& kind) {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("MHAVIZ_ASSETS"); env && *env) dirs.push_back(std::string(env) + "/" + kind);
  const std::string exe = ExeDir();
  if (!exe.empty()) {
    for (const char* rel : {"/assets/", "/../assets/", "/../../assets/"}) dirs.push_back(exe + rel + kind);
    dirs.push_back(exe + "/../share/mhaviz/" + kind);
  }
#ifdef MHAVIZ_SOURCE_ASSETS
  dirs.push_back(std::string(MHAVIZ_SOURCE_ASSETS) + "/" + kind);
#endif
#ifdef MHAVIZ_INSTALL_ASSETS
  dirs.push_back(std::string(MHAVIZ_INSTALL_ASSETS) + "/" + kind);
#endif
  return dirs;
}

std::string FindAsset(const std::string& kind, const std::string& file) {
  for (const std::string& d : AssetDirs(kind)) {
    std::error_code ec;
    const std::filesystem::path p = std::filesystem::path(d) / file;
    if (std::filesystem::is_regular_file(p, ec)) {
      const std::filesystem::path norm = std::filesystem::weakly_canonical(p, ec);
      return ec ? p.string() : norm.string();
    }
  }
  return "";
}

}  // namespace mha::io
