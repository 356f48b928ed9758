"""Flash attention's memory at 32768 tokens (d_model 512, 8 heads): `mhaviz bench
--attention flash` runs one pass and its peak resident set, measured from outside by
/usr/bin/time -v, stays under the 1.5 GB budget; standard attention is refused at that
length (exit 2) with the bytes it would have needed. One pass is about 2.3 TFLOP: this
test takes minutes on two cores (see docs/flash.md for measured times).

usage: test_flash_memory.py PATH/TO/mhaviz
"""
import json
import os
import re
import subprocess
import sys

from checks import check, main

BUDGET = 1.5e9  # bytes


def flash_peak(mhaviz, tmp):
    e = dict(os.environ)
    e.pop("DISPLAY", None)
    r = subprocess.run(["/usr/bin/time", "-v", mhaviz, "bench", "--attention", "flash", "--seq", "32768",
                        "--d-model", "512", "--heads", "8", "--threads", "2"],
                       capture_output=True, text=True, env=e, timeout=1200)
    check(r.returncode == 0, f"bench --attention flash --seq 32768 exits 0 (got {r.returncode}: {r.stderr[-400:]})")
    if r.returncode != 0:
        return
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    check(m is not None, "/usr/bin/time -v reports the maximum resident set size")
    peak = int(m.group(1)) * 1024
    check(peak < BUDGET, f"flash at 32768 tokens peaks at {peak / 1e6:.0f} MB < 1500 MB")
    j = json.loads(r.stdout.strip().splitlines()[-1])
    check(j["seq"] == 32768 and j["attention"] == "flash", "the JSON line is the flash run's")
    # bench's own figure is the same measurement from inside (getrusage), a little earlier.
    check(0 < j["peak_rss_mb"] <= peak / 1e6 + 1, f"peak_rss_mb {j['peak_rss_mb']} agrees with /usr/bin/time")
    print(f"flash 32768: one pass {j['median_ms'] / 1e3:.1f} s, peak {peak / 1e6:.0f} MB")


def standard_refused(mhaviz, tmp):
    r = subprocess.run([mhaviz, "bench", "--attention", "standard", "--seq", "32768", "--d-model", "512",
                        "--heads", "8"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 2, f"standard attention at 32768 tokens is refused with exit 2 (got {r.returncode})")
    check("Flash attention" in r.stderr and "68719476736 bytes" in r.stderr,
          "the refusal names Flash attention and the 68719476736 bytes of scores and weights")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    main([standard_refused, flash_peak])
