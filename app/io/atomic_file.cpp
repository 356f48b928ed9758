// Atomic writes of the app's outputs, and bounded reads of its inputs.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <vector>

#include "files.hpp"
#include "write_signals.hpp"

namespace mha::io {
namespace {

std::string DirOf(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// What an output step was doing when it failed: the same errno means different things.
enum class Step { kCreate, kWrite, kOpen, kReplace };

// Why a failed step failed, from the real errno (and, for a refused replace, the
// reason the preconditions found).
std::string Explain(const std::string& path, int err, Step step) {
  const std::string dir = DirOf(path);
  struct stat st {};
  const bool dir_exists = ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  switch (err) {
    case ENOENT:
      if (!dir_exists)
        return " The directory '" + dir + "' does not exist; create it first (mkdir -p) or choose another path.";
      if (step == Step::kCreate)
        return " '" + dir + "' does not accept new files; choose a directory you can write to.";
      return "";
    case ENOTDIR: return " A part of '" + dir + "' is a file, not a directory; choose a path inside a directory.";
    case EACCES:
    case EPERM:
      if (step == Step::kCreate)
        return " '" + dir + "' does not accept new files from this user; choose a directory you can write to.";
      if (step == Step::kOpen) return " You have no permission to write it.";
      return " The file system does not let this user replace it.";
    case EROFS: return " It is on a read-only file system; choose a directory you can write to.";
    case ENAMETOOLONG: return " The name is too long for the file system (at most 255 bytes per name).";
    case ENOSPC:
    case EDQUOT: return " Free some space or choose another disk.";
    case EISDIR: return " That path is a directory; give a file name.";
    case EFBIG: return " The file is larger than this process may write (see ulimit -f).";
    case EPIPE: return " The reader closed the pipe before the output was complete.";
    case EBUSY: return " It is in use as a mount point; choose another path.";
    case ELOOP: return " Its symlinks form a loop (or a chain of more than 40).";
    default: return "";
  }
}

[[noreturn]] void Fail(const std::string& path, int err, const char* doing, Step step) {
  std::ostringstream e;
  e << "Cannot write '" << path << "': " << doing << " failed: " << std::strerror(err) << "."
    << Explain(path, err, step) << " Nothing was changed at that path.";
  throw Error(e.str());
}

[[noreturn]] void Refuse(const std::string& path, const std::string& why) {
  throw Error("Cannot write '" + path + "': " + why + " Nothing was changed at that path.");
}

// Where an output really goes. A symlink is followed to its target, even a dangling one
// (the link survives; the target gets the new bytes, or is created). A device, FIFO or
// socket, or a path naming a file descriptor (/dev/stdout, /dev/fd/N, /proc/self/fd/N),
// is written in place: renaming over `--npz /dev/null` replaced, as root, the /dev/null
// device node with a regular file.
struct Target {
  std::string given;  // as the user wrote it, for messages
  std::string path;   // after the symlinks
  bool in_place = false;
  int own_fd = -1;  // >= 0: the path names this process's descriptor; write to it
  bool exists = false;
  struct stat st {};  // of the existing file
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
  Target t{path, path};
  t.own_fd = OwnDescriptor(path);
  if (t.own_fd >= 0) {
    t.in_place = true;
    return t;
  }
  for (int hops = 0;; ++hops) {
    struct stat lst {};
    if (::lstat(t.path.c_str(), &lst) != 0 || !S_ISLNK(lst.st_mode)) break;
    if (hops == 40) Fail(path, ELOOP, "following symlinks", Step::kOpen);
    std::string link(static_cast<std::size_t>(lst.st_size > 0 ? lst.st_size : 4096) + 1, '\0');
    const ssize_t n = ::readlink(t.path.c_str(), link.data(), link.size());
    if (n < 0 || static_cast<std::size_t>(n) >= link.size())
      Fail(path, n < 0 ? errno : ENAMETOOLONG, "reading a symlink", Step::kOpen);
    link.resize(static_cast<std::size_t>(n));
    t.path = link[0] == '/' ? link : DirOf(t.path) + "/" + link;
  }
  if (::stat(t.path.c_str(), &t.st) != 0) return t;  // a new file
  t.exists = true;
  if (S_ISDIR(t.st.st_mode)) Fail(path, EISDIR, "opening", Step::kOpen);
  if (!S_ISREG(t.st.st_mode)) t.in_place = true;
  return t;
}

// The identity of a file to be written: device and inode if it exists, else the
// canonical path of its directory and its name.
std::string Identity(const Target& t) {
  if (t.exists) return std::to_string(t.st.st_dev) + ":" + std::to_string(t.st.st_ino);
  std::string dir = DirOf(t.path);
  if (char* real = ::realpath(dir.c_str(), nullptr)) {
    dir = real;
    std::free(real);
  }
  return dir + "/" + BaseOf(t.path);
}

template <typename E = Error>
void CheckDistinct(const std::vector<Target>& targets, const std::vector<std::string>& labels) {
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (targets[i].in_place) continue;  // a pipe or device takes both, in turn
    const auto [it, fresh] = seen.emplace(Identity(targets[i]), i);
    if (fresh) continue;
    const std::size_t j = it->second;
    throw E(labels[j] + " '" + targets[j].given + "' and " + labels[i] + " '" + targets[i].given +
            "' name the same file, so one output would silently replace the other. Give each output its own file.");
  }
}

// write(2) until done; EINTR is a signal: retried unless the application's handler
// took it, which abandons the write.
void WriteAll(int fd, const char* p, std::size_t n, const std::string& path, Step step) {
  while (n > 0) {
    detail::ThrowIfInterrupted(path);
    const ssize_t k = ::write(fd, p, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      Fail(path, errno, "writing", step);
    }
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

// Buffers the many small pieces of an .npz (headers) and passes large ones straight on.
class FdSink : public Sink {
 public:
  FdSink(int fd, std::string path, Step step) : fd_(fd), path_(std::move(path)), step_(step) { buf_.reserve(kBuf); }
  void Write(const char* p, std::size_t n) override {
    if (buf_.size() + n <= kBuf) {
      buf_.append(p, n);
      return;
    }
    Flush();
    if (n >= kBuf)
      WriteAll(fd_, p, n, path_, step_);
    else
      buf_.append(p, n);
  }
  void Flush() {
    WriteAll(fd_, buf_.data(), buf_.size(), path_, step_);
    buf_.clear();
  }

 private:
  static constexpr std::size_t kBuf = std::size_t(1) << 16;
  int fd_;
  std::string path_;
  Step step_;
  std::string buf_;
};

// A device, pipe or descriptor cannot be replaced atomically; it is written directly.
void WriteInPlace(const Target& t, const Output& out) {
  if (t.own_fd >= 0) {
    // Same open file as std::cout / stdio when it is 1 or 2: flush what they hold so
    // the order on the terminal or in the redirected file is the order of the calls.
    std::cout.flush();
    std::fflush(nullptr);
    FdSink sink(t.own_fd, t.given, Step::kWrite);
    out.write(sink);
    sink.Flush();
    return;
  }
  int fd;
  do {  // a FIFO blocks here until a reader comes; a signal abandons the wait
    detail::ThrowIfInterrupted(t.given);
    fd = ::open(t.path.c_str(), O_WRONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) Fail(t.given, errno, "opening", Step::kOpen);
  try {
    FdSink sink(fd, t.given, Step::kWrite);
    out.write(sink);
    sink.Flush();
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

// A temporary file beside the target: a short name, so a target whose own name has the
// file system's maximum length (255 bytes) still gets one; created 0666 & ~umask.
struct Staged {
  std::string tmp;
  int slot = -1;
};

int CreateTemporary(const std::string& dir, Staged* s) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  const char* alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = dir + "/.mhaviz-";
    for (int i = 0; i < 8; ++i) name += alnum[rng() % 62];
    const detail::BlockStopSignals block;  // created and tracked as one step
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      s->tmp = name;
      s->slot = detail::Track(name);
      return fd;
    }
    if (errno != EEXIST) return -1;
  }
  errno = EEXIST;
  return -1;
}

void Unstage(Staged& s) {
  if (s.tmp.empty()) return;
  ::unlink(s.tmp.c_str());
  detail::Untrack(s.slot);
  s = Staged{};
}

// An existing file's mode and owner carry over to its replacement (a 0600 file stays
// 0600). Changing the owner needs privileges; without them the group is still tried.
void KeepModeAndOwner(int fd, const Target& t) {
  if (!t.exists) return;
  if (::fchown(fd, t.st.st_uid, t.st.st_gid) != 0 && ::fchown(fd, static_cast<uid_t>(-1), t.st.st_gid) != 0) {
    // Not permitted: the replacement belongs to this user, as any new file would.
  }
  ::fchmod(fd, t.st.st_mode & 07777);
}

Staged Stage(const Target& t, const Output& out) {
  Staged s;
  const int fd = CreateTemporary(DirOf(t.path), &s);
  if (fd < 0) Fail(t.given, errno, "creating a temporary file", Step::kCreate);
  const auto fail = [&](const char* doing) {
    const int err = errno;
    ::close(fd);
    Unstage(s);
    Fail(t.given, err, doing, Step::kWrite);
  };
  try {
    FdSink sink(fd, t.given, Step::kWrite);
    out.write(sink);
    sink.Flush();
  } catch (...) {
    ::close(fd);
    Unstage(s);
    throw;
  }
  if (::fsync(fd) != 0 && errno != EINVAL) fail("flushing");
  KeepModeAndOwner(fd, t);
  if (::close(fd) != 0) {
    const int err = errno;
    Unstage(s);
    Fail(t.given, err, "closing", Step::kWrite);
  }
  return s;
}

// Would rename(2) onto this target fail? Checked for every target before the first
// rename, so a refusal leaves every output as it was.
void CheckReplaceable(const Target& t) {
  struct stat now {};
  if (::lstat(t.path.c_str(), &now) != 0) return;  // still new
  if (S_ISDIR(now.st_mode)) Fail(t.given, EISDIR, "replacing", Step::kReplace);
  struct stat dir {};
  if (::stat(DirOf(t.path).c_str(), &dir) != 0) return;
  if (now.st_dev != dir.st_dev) Fail(t.given, EBUSY, "replacing", Step::kReplace);
  const uid_t me = ::geteuid();
  if ((dir.st_mode & S_ISVTX) && me != 0 && me != now.st_uid && me != dir.st_uid)
    Refuse(t.given,
           "it belongs to another user, in a directory with the sticky bit (like /tmp), where only the "
           "file's owner may replace it. Choose another name, or ask its owner to remove it.");
  const int fd = ::open(t.path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    int flags = 0;
    const bool fixed = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL));
    ::close(fd);
    if (fixed)
      Refuse(t.given,
             "it is marked immutable or append-only (see lsattr), so it cannot be replaced. Choose "
             "another name, or clear the attribute with chattr -i / chattr -a.");
  }
}

}  // namespace

void CheckDistinctOutputs(const std::vector<std::pair<std::string, std::string>>& labelled_paths) {
  std::vector<Target> targets;
  std::vector<std::string> labels;
  for (const auto& [label, path] : labelled_paths) {
    if (path.empty()) continue;
    try {
      targets.push_back(Resolve(path));
      labels.push_back(label);
    } catch (const Error&) {
      // Not writable at all (a directory, a symlink loop): the write itself says why.
    }
  }
  CheckDistinct<OutputClash>(targets, labels);
}

void CheckOutputs(const std::vector<std::pair<std::string, std::string>>& labelled_paths) {
  std::vector<Target> targets;
  std::vector<std::string> labels;
  for (const auto& [label, path] : labelled_paths) {
    if (path.empty()) continue;
    try {
      Target t = Resolve(path);
      if (!t.in_place) {  // a pipe or device is opened only when written: it may block
        Staged probe;
        const int fd = CreateTemporary(DirOf(t.path), &probe);
        if (fd < 0) Fail(path, errno, "creating a file in its directory", Step::kCreate);
        ::close(fd);
        Unstage(probe);
        CheckReplaceable(t);
      }
      targets.push_back(std::move(t));
      labels.push_back(label);
    } catch (const Error& e) {
      throw Error(label + ": " + e.what());
    }
  }
  CheckDistinct<OutputClash>(targets, labels);
}

void WriteOutputsAtomic(const std::vector<Output>& files) {
  const detail::WriteSignals signals;
  std::vector<Target> targets;
  std::vector<std::string> labels;
  for (const auto& f : files) {
    targets.push_back(Resolve(f.path));
    labels.push_back("the output");
  }
  CheckDistinct<OutputClash>(targets, labels);
  // Stage every file before renaming any, so one failure leaves no output at all.
  std::vector<Staged> staged(files.size());
  try {
    for (std::size_t i = 0; i < files.size(); ++i)
      if (!targets[i].in_place) staged[i] = Stage(targets[i], files[i]);
    for (std::size_t i = 0; i < files.size(); ++i)
      if (targets[i].in_place) WriteInPlace(targets[i], files[i]);
    for (std::size_t i = 0; i < files.size(); ++i)
      if (!targets[i].in_place) CheckReplaceable(targets[i]);
  } catch (...) {
    for (Staged& s : staged) Unstage(s);
    throw;
  }
  const detail::RenamePhase renaming;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (staged[i].tmp.empty()) continue;
    if (::rename(staged[i].tmp.c_str(), targets[i].path.c_str()) != 0) {
      const int err = errno;
      for (std::size_t j = i; j < staged.size(); ++j) Unstage(staged[j]);
      Fail(targets[i].given, err, "replacing", Step::kReplace);
    }
    detail::Untrack(staged[i].slot);
  }
}

void WriteFilesAtomic(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<Output> outputs;
  for (const auto& [path, bytes] : files)
    outputs.push_back({path, [&bytes = bytes](Sink& s) { s.Write(bytes.data(), bytes.size()); }});
  WriteOutputsAtomic(outputs);
}

void WriteFileAtomic(const std::string& path, const std::string& bytes) { WriteFilesAtomic({{path, bytes}}); }

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
