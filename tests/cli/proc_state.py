"""What a running mhaviz is doing, read from /proc, for the tests that signal it at a given
moment: they wait on its state (blocked on a FIFO or a full pipe, CPU time spent), never
on the clock, so a busy machine delays them without breaking them."""
import os
import time

# The kernel's wait channels of a thread blocked opening a FIFO with no partner, or
# writing to a full pipe (the names changed across kernels).
BLOCKED = {"wait_for_partner", "fifo_open", "pipe_write", "anon_pipe_write", "pipe_wait", "pipe_wait_writable"}


def _wchans(pid):
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/wchan") as f:
                    out.append(f.read().strip())
            except OSError:
                pass
    except OSError:
        pass
    return out


def blocked(pid):
    """Whether one of the process's threads waits for a FIFO's partner or a pipe's reader."""
    return any(w in BLOCKED for w in _wchans(pid))


def cpu_seconds(pid):
    """User + system CPU time the process has used so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until(p, pred, what, timeout=120):
    """Polls pred() until it holds; fails (AssertionError) if the process `p` (a Popen)
    ends first, or after `timeout` seconds (a hang, not a slow machine)."""
    end = time.monotonic() + timeout
    while not pred():
        if p.poll() is not None:
            raise AssertionError(f"mhaviz ended (status {p.returncode}) before {what}")
        if time.monotonic() > end:
            raise AssertionError(f"no {what} after {timeout} s")
        time.sleep(0.01)


def wait_blocked(p, what="it blocked on its output", timeout=120):
    wait_until(p, lambda: blocked(p.pid), what, timeout)


def wait_cpu(p, seconds, what=None, timeout=300):
    wait_until(p, lambda: cpu_seconds(p.pid) >= seconds, what or f"{seconds:.2f} s of CPU time", timeout)
