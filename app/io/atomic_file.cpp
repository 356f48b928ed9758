#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <sstream>
#include <vector>

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
  struct stat st {};
  const std::string dir = DirOf(path);
  const bool dir_exists = ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  if (err == ENOENT && !dir_exists)
    e << " The directory '" << dir << "' does not exist; create it first (mkdir -p) or choose another path.";
  else if (err == ENOTDIR)
    e << " A part of '" << dir << "' is a file, not a directory; choose a path inside a directory.";
  else if (err == EACCES || err == EPERM || err == EROFS || err == ENOENT)
    e << " '" << dir << "' does not accept new files" << (err == EROFS ? " (read-only file system)" : "")
      << "; choose a directory you can write to.";
  else if (err == ENOSPC || err == EDQUOT)
    e << " Free some space or choose another disk.";
  else if (err == EISDIR)
    e << " That path is a directory; give a file name.";
  else if (err == EFBIG)
    e << " The file is larger than this process may write (see ulimit -f).";
  e << " Nothing was changed at that path.";
  throw Error(e.str());
}

// Where an output really goes. rename(2) replaces whatever directory entry has the
// name, so a symlink is followed (the link survives; its target gets the new bytes),
// and a device, FIFO or socket, or a path naming a file descriptor (/dev/stdout,
// /dev/fd/N, /proc/self/fd/N), is written in place: renaming over `--npz /dev/null`
// replaced, as root, the /dev/null device node with a regular file.
struct Target {
  std::string path;
  bool in_place = false;
  int own_fd = -1;  // >= 0: the path names this process's descriptor; write to it
};

int OwnDescriptor(const std::string& p) {
  if (p == "/dev/stdout") return 1;
  if (p == "/dev/stderr") return 2;
  for (const char* pre : {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"}) {
    const std::string pfx(pre);
    if (p.size() > pfx.size() && p.compare(0, pfx.size(), pfx) == 0 &&
        p.find_first_not_of("0123456789", pfx.size()) == std::string::npos && p.size() - pfx.size() < 9)
      return std::atoi(p.c_str() + pfx.size());
  }
  return -1;
}

Target Resolve(const std::string& path) {
  if (path.empty()) throw Error("No output path was given.");
  Target t{path};
  t.own_fd = OwnDescriptor(path);
  if (t.own_fd >= 0) {
    t.in_place = true;
    return t;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return t;  // a new file
  if (S_ISDIR(st.st_mode)) Fail(path, EISDIR, "opening");
  if (!S_ISREG(st.st_mode)) {
    t.in_place = true;
    return t;
  }
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    if (char* real = ::realpath(path.c_str(), nullptr)) {
      t.path = real;
      std::free(real);
    }
  }
  return t;
}

void WriteAll(int fd, const std::string& bytes, const std::function<void(const char*)>& fail) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("writing");
    }
    off += static_cast<std::size_t>(n);
  }
}

// A device, pipe or descriptor cannot be replaced atomically; it is written directly.
void WriteInPlace(const Target& t, const std::string& bytes) {
  if (t.own_fd >= 0) {
    // Same open file as std::cout / stdio when it is 1 or 2: flush what they hold so
    // the order on the terminal or in the redirected file is the order of the calls.
    std::cout.flush();
    std::fflush(nullptr);
    WriteAll(t.own_fd, bytes, [&](const char* doing) { Fail(t.path, errno, doing); });
    return;
  }
  const int fd = ::open(t.path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) Fail(t.path, errno, "opening");
  WriteAll(fd, bytes, [&](const char* doing) {
    const int err = errno;
    ::close(fd);
    Fail(t.path, err, doing);
  });
  ::close(fd);
}

// Writes `bytes` to a new temporary file beside `path` and returns its name.
std::string Stage(const std::string& path, const std::string& bytes) {
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
  WriteAll(fd, bytes, fail);
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

void WriteFileAtomic(const std::string& path, const std::string& bytes) { WriteFilesAtomic({{path, bytes}}); }

namespace {
// Ctrl-C (or a kill, a closed terminal) in the middle of the writes would leave a
// temporary file behind: those signals wait until every file is complete or cleaned up,
// then act as usual. Only SIGKILL can still interrupt. SIGPIPE and SIGXFSZ (a closed
// pipe, ulimit -f), raised by our own write(2), are swallowed instead: write fails with
// EPIPE / EFBIG and the error is reported with a message rather than a silent death.
class DeferSignals {
 public:
  DeferSignals() {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ}) sigaddset(&s, sig);
    ::pthread_sigmask(SIG_BLOCK, &s, &old_);
    ::sigpending(&pending_before_);
  }
  ~DeferSignals() {
    sigset_t pending;
    ::sigpending(&pending);
    for (int sig : {SIGPIPE, SIGXFSZ}) {
      if (sigismember(&pending, sig) && !sigismember(&pending_before_, sig) && !sigismember(&old_, sig)) {
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        const timespec now{0, 0};
        ::sigtimedwait(&one, nullptr, &now);
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  DeferSignals(const DeferSignals&) = delete;
  DeferSignals& operator=(const DeferSignals&) = delete;

 private:
  sigset_t old_, pending_before_;
};
}  // namespace

void WriteFilesAtomic(const std::vector<std::pair<std::string, std::string>>& files) {
  const DeferSignals defer;
  std::vector<Target> targets;
  for (const auto& f : files) targets.push_back(Resolve(f.first));
  // Stage every file before renaming any, so one failure leaves no output at all.
  std::vector<std::string> staged(files.size());
  const auto unstage = [&](std::size_t from) {
    for (std::size_t j = from; j < staged.size(); ++j)
      if (!staged[j].empty()) ::unlink(staged[j].c_str());
  };
  try {
    for (std::size_t i = 0; i < files.size(); ++i)
      if (!targets[i].in_place) staged[i] = Stage(targets[i].path, files[i].second);
    for (std::size_t i = 0; i < files.size(); ++i)
      if (targets[i].in_place) WriteInPlace(targets[i], files[i].second);
  } catch (...) {
    unstage(0);
    throw;
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (staged[i].empty()) continue;
    if (::rename(staged[i].c_str(), targets[i].path.c_str()) != 0) {
      const int err = errno;
      unstage(i);
      Fail(targets[i].path, err, "renaming");
    }
  }
}

namespace {

// Reads from fd until EOF or until `limit` bytes are in `out`.
void ReadUpTo(int fd, std::size_t limit, const std::string& path, std::string& out,
              const std::function<void(std::string_view)>& check_head) {
  bool checked = !check_head;
  char buf[1 << 16];
  while (out.size() < limit) {
    const ssize_t n = ::read(fd, buf, std::min(sizeof buf, limit - out.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error("Cannot read '" + path + "': " + std::strerror(errno) + ".");
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (!checked && out.size() >= 8) {
      checked = true;
      check_head(std::string_view(out).substr(0, 8));
    }
  }
  if (!checked) check_head(out);
}

// Owns a file descriptor (never closes stdin/stdout/stderr).
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd& operator=(Fd&&) = delete;
  ~Fd() {
    if (fd > 2) ::close(fd);
  }
};

Fd OpenForReading(const std::string& path) {
  if (path == "-") return Fd(0);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    std::string hint = err == ENOENT   ? " Check the path (it is relative to the current directory)."
                       : err == EACCES ? " You have no permission to read it."
                                       : "";
    throw Error("Cannot read '" + path + "': " + std::strerror(err) + "." + hint);
  }
  Fd f(fd);
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
    throw Error("Cannot read '" + path + "': it is a directory, not a file.");
  return f;
}

}  // namespace

std::string ReadFile(const std::string& path, std::size_t max_bytes,
                     const std::function<void(std::string_view head)>& check_head) {
  const Fd f = OpenForReading(path);
  struct stat st {};
  if (::fstat(f.fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > max_bytes)
    throw Error("'" + path + "' is " + std::to_string(st.st_size >> 20) + " MiB, over the cap of " +
                std::to_string(max_bytes >> 20) + " MiB that keeps memory bounded.");
  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<std::size_t>(st.st_size));
  ReadUpTo(f.fd, max_bytes + 1, path, out, check_head);
  if (out.size() > max_bytes)
    throw Error("'" + path + "' holds more than " + std::to_string(max_bytes >> 20) +
                " MiB, over the cap that keeps memory bounded.");
  return out;
}

std::string ReadFilePrefix(const std::string& path, std::size_t max_bytes, bool* truncated) {
  const Fd f = OpenForReading(path);
  std::string out;
  ReadUpTo(f.fd, max_bytes + 1, path == "-" ? "standard input" : path, out, nullptr);
  const bool more = out.size() > max_bytes;
  if (more) out.resize(max_bytes);
  if (truncated) *truncated = more;
  return out;
}

}  // namespace mha::io
