// Signals while atomic writes are in progress (atomic_file.cpp's only; not a public API).
//
// A write can block for ever (a FIFO nobody opens, a pipe nobody reads), so SIGINT,
// SIGTERM, SIGHUP and SIGQUIT must still work during it; but a signal must not leave a
// temporary file behind, nor stop a set of renames half way. So, while a WriteSignals
// lives: a signal whose disposition was the default removes every tracked temporary
// file and then kills the process as it would have (exit status 128 + signal); a signal
// the application handles (the GUI's, train's Ctrl-C) is passed to its handler and the
// writes are abandoned (ThrowIfInterrupted; a blocked write returns EINTR, since the
// handler is installed without SA_RESTART); an ignored signal stays ignored. SIGPIPE and
// SIGXFSZ are ignored, so a closed pipe or `ulimit -f` make write(2) fail with a
// message instead of a silent death. While a RenamePhase lives, the signals wait.
#pragma once

#include <signal.h>

#include <string>

namespace mha::io::detail {

class WriteSignals {
 public:
  WriteSignals();
  ~WriteSignals();
  WriteSignals(const WriteSignals&) = delete;
  WriteSignals& operator=(const WriteSignals&) = delete;
};

// Remembers a temporary file for the signal handler; returns a slot for Untrack.
int Track(const std::string& tmp);
void Untrack(int slot);

// Throws mha::Error (naming `path`) if a signal the application handles has arrived
// since the writes began.
void ThrowIfInterrupted(const std::string& path);

// The signals wait while this lives (in every thread: a signal another thread takes is
// re-raised when the renames are done).
class RenamePhase {
 public:
  RenamePhase();
  ~RenamePhase();
  RenamePhase(const RenamePhase&) = delete;
  RenamePhase& operator=(const RenamePhase&) = delete;

 private:
  sigset_t old_mask_;
};

// Blocks the stop signals in this thread while it lives (around creating and tracking
// a temporary file, so none is created untracked).
class BlockStopSignals {
 public:
  BlockStopSignals();
  ~BlockStopSignals();
  BlockStopSignals(const BlockStopSignals&) = delete;
  BlockStopSignals& operator=(const BlockStopSignals&) = delete;

 private:
  sigset_t old_mask_;
};

}  // namespace mha::io::detail
