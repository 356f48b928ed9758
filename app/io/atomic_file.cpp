#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "files.hpp"

namespace mha::io {
namespace {

std::string DirOf(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

[[noreturn]] void Fail(const std::string& path, int err, const char* doing) {
  std::ostringstream e;
  e << "Cannot write '" << path << "': " << doing << " failed: " << std::strerror(err) << ".";
  if (err == ENOENT) e << " The directory '" << DirOf(path) << "' does not exist; create it first or choose another path.";
  else if (err == EACCES || err == EPERM || err == EROFS) e << " Choose a directory you can write to.";
  else if (err == ENOSPC || err == EDQUOT) e << " Free some space or choose another disk.";
  else if (err == EISDIR) e << " That path is a directory; give a file name.";
  e << " Nothing was changed at that path.";
  throw Error(e.str());
}

// Writes `bytes` to a new temporary file beside `path` and returns its name.
std::string Stage(const std::string& path, const std::string& bytes) {
  if (path.empty()) throw Error("No output path was given.");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) Fail(path, EISDIR, "opening");
  // The temporary file sits in the same directory so rename(2) is atomic.
  std::string tmp = path + ".tmp.XXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) Fail(path, errno, "creating a temporary file");
  tmp.assign(name.data());
  auto fail = [&](const char* doing) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    Fail(path, err, doing);
  };
  std::size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("writing");
    }
    off += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL) fail("flushing");
  const mode_t mask = ::umask(0);  // mkstemp makes 0600; give the usual 0666 & ~umask
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    Fail(path, err, "closing");
  }
  return tmp;
}

}  // namespace

void WriteFileAtomic(const std::string& path, const std::string& bytes) {
  WriteFilesAtomic({{path, bytes}});
}

void WriteFilesAtomic(const std::vector<std::pair<std::string, std::string>>& files) {
  // Stage every file before renaming any, so one failure leaves no output at all.
  std::vector<std::string> staged;
  try {
    for (const auto& [path, bytes] : files) staged.push_back(Stage(path, bytes));
  } catch (...) {
    for (const auto& t : staged) ::unlink(t.c_str());
    throw;
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (::rename(staged[i].c_str(), files[i].first.c_str()) != 0) {
      const int err = errno;
      for (std::size_t j = i; j < staged.size(); ++j) ::unlink(staged[j].c_str());
      Fail(files[i].first, err, "renaming");
    }
  }
}

std::string ReadFile(const std::string& path, std::size_t max_bytes) {
  std::ifstream f(path, std::ios::binary);
  struct stat st {};
  if (!f || ::stat(path.c_str(), &st) != 0)
    throw Error("Cannot read '" + path + "': " + std::strerror(errno) + ". Check the path.");
  if (S_ISDIR(st.st_mode)) throw Error("Cannot read '" + path + "': it is a directory, not a file.");
  if (static_cast<std::size_t>(st.st_size) > max_bytes)
    throw Error("'" + path + "' is " + std::to_string(st.st_size >> 20) + " MiB, over the cap of " +
                std::to_string(max_bytes >> 20) + " MiB.");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace mha::io
