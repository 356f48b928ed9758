#include "write_signals.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

#include "files.hpp"
#include "mha/mha.hpp"

namespace mha::io::detail {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr int kQuietSignals[] = {SIGPIPE, SIGXFSZ};

// The temporary files in flight, readable from a signal handler: fixed storage, and a
// slot's state says whether its path is complete (2) or being written (1).
constexpr int kSlots = 64;
struct Slot {
  std::atomic<int> state{0};
  char path[4096];
};
Slot g_slots[kSlots];

std::mutex g_mu;  // guards g_users and the install / restore of the handlers
int g_users = 0;
struct sigaction g_old[NSIG];
bool g_installed[NSIG];
std::atomic<int> g_renaming{0};
volatile std::sig_atomic_t g_deferred = 0;     // taken by another thread during renames
volatile std::sig_atomic_t g_interrupted = 0;  // passed to the application's handler

void RemoveTemporaries() {
  for (Slot& s : g_slots)
    if (s.state.load() == 2) ::unlink(s.path);
}

void OnWriteSignal(int sig, siginfo_t* info, void* ctx) {
  const int saved = errno;
  if (g_renaming.load() > 0) {
    g_deferred = sig;
    errno = saved;
    return;
  }
  const struct sigaction& old = g_old[sig];
  if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) {
    RemoveTemporaries();
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    ::raise(sig);  // ends the process as the signal would have
  } else {
    g_interrupted = sig;
    if (old.sa_flags & SA_SIGINFO)
      old.sa_sigaction(sig, info, ctx);
    else
      old.sa_handler(sig);
  }
  errno = saved;
}

sigset_t StopSet() {
  sigset_t s;
  sigemptyset(&s);
  for (int sig : kStopSignals) sigaddset(&s, sig);
  return s;
}

}  // namespace

WriteSignals::WriteSignals() {
  const std::lock_guard<std::mutex> lock(g_mu);
  if (g_users++ > 0) return;
  g_interrupted = 0;
  g_deferred = 0;
  for (int sig : kStopSignals) {
    g_installed[sig] = false;
    if (::sigaction(sig, nullptr, &g_old[sig]) != 0) continue;
    if (!(g_old[sig].sa_flags & SA_SIGINFO) && g_old[sig].sa_handler == SIG_IGN) continue;  // nohup, &
    struct sigaction sa {};
    sa.sa_sigaction = OnWriteSignal;
    sa.sa_flags = SA_SIGINFO;  // no SA_RESTART: a blocked open or write returns EINTR
    sigemptyset(&sa.sa_mask);
    for (int other : kStopSignals) sigaddset(&sa.sa_mask, other);
    g_installed[sig] = ::sigaction(sig, &sa, nullptr) == 0;
  }
  for (int sig : kQuietSignals) {
    g_installed[sig] = false;
    if (::sigaction(sig, nullptr, &g_old[sig]) != 0) continue;
    if ((g_old[sig].sa_flags & SA_SIGINFO) || g_old[sig].sa_handler != SIG_DFL) continue;  // the app's choice
    struct sigaction sa {};
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    g_installed[sig] = ::sigaction(sig, &sa, nullptr) == 0;
  }
}

WriteSignals::~WriteSignals() {
  const std::lock_guard<std::mutex> lock(g_mu);
  if (--g_users > 0) return;
  for (int sig : kStopSignals)
    if (g_installed[sig]) ::sigaction(sig, &g_old[sig], nullptr);
  for (int sig : kQuietSignals)
    if (g_installed[sig]) ::sigaction(sig, &g_old[sig], nullptr);
  g_interrupted = 0;
}

int Track(const std::string& tmp) {
  if (tmp.size() >= sizeof(Slot::path)) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_slots[i].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(g_slots[i].path, tmp.c_str(), tmp.size() + 1);
      g_slots[i].state.store(2);
      return i;
    }
  }
  return -1;  // more than kSlots writes at once: this one is not cleaned by a signal
}

void Untrack(int slot) {
  if (slot >= 0) g_slots[slot].state.store(0);
}

void ThrowIfInterrupted(const std::string& path) {
  if (const int sig = g_interrupted)
    throw Interrupted("Cannot write '" + path + "': interrupted by signal " + std::to_string(sig) + " (" +
                          strsignal(sig) + "). Nothing was changed at that path.",
                      sig);
}

RenamePhase::RenamePhase() {
  const sigset_t s = StopSet();
  ::pthread_sigmask(SIG_BLOCK, &s, &old_mask_);
  g_renaming.fetch_add(1);
}

RenamePhase::~RenamePhase() {
  g_renaming.fetch_sub(1);
  ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);  // a signal pending for this thread acts now
  if (g_renaming.load() == 0 && g_deferred) {
    const int sig = g_deferred;
    g_deferred = 0;
    ::raise(sig);
  }
}

BlockStopSignals::BlockStopSignals() {
  const sigset_t s = StopSet();
  ::pthread_sigmask(SIG_BLOCK, &s, &old_mask_);
}

BlockStopSignals::~BlockStopSignals() { ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr); }

}  // namespace mha::io::detail

namespace mha::io {
void RemoveStagedFiles() { detail::RemoveTemporaries(); }
}  // namespace mha::io
