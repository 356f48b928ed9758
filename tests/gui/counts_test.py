#!/usr/bin/env python3
"""GUI tests of the Counts view (head count vs parameters): its table on a projector.

    counts_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display or no xdotool).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402

check = g.check


def test_present_fits(mhaviz, d):
    """Presented in Korean at 1280 x 800 with 150% text and 1920 x 1080 with 200%, plain
    multi-head and with grouped-query's three more columns: the table lies in the window
    and every row, its last cell and the current row's "◀ current" lie inside the table
    (the marker had a column of its own, cut at the window's edge, and the table
    scrolled sideways)."""
    for size, pct in (((1280, 800), 150), ((1920, 1080), 200)):
        for extra in ([], ["--kv-heads", "2"]):
            where = f"counts {size[0]}x{size[1]} {pct}% {' '.join(extra)}"
            _, p = g.presented(mhaviz, d, "counts", size, pct, *extra)
            w, win = p["widgets"], p["window"]
            table = w.get("head_count_table")
            g.check_within(where, "the table", table, [0, 0, win[0], win[1]])
            rows = [k for k in w if k.startswith("head_count ") and k.split()[-1].isdigit() and "end" not in k]
            check(len(rows) == 9, f"{where}: {len(rows)} rows drawn, expected the 9 divisors of 512")
            for k in rows:
                g.check_within(where, k + " (the row)", w[k], table)
                g.check_within(where, k + "'s last cell", w.get(k.replace("head_count", "head_count end")), table)
            g.check_within(where, "the current row's marker", w.get("head_count current"), table)


def test_lesson_fits(mhaviz, d):
    """Under a lesson's band (lessons 000 step 7 and 002 step 5, Korean and English, 1280 x
    800 at 150%), every row lies inside the table and the table above the band: presented,
    the notes go to the header's "?", so the table takes their room (it had kept it
    empty and scrolled its last rows out of sight)."""
    for lesson, step in (("000", 7), ("002", 5)):
        for lang in ("ko", "en"):
            where, p, view = g.lesson_step_probe(mhaviz, d, lesson, step, lang)
            w = p["widgets"]
            table = w.get("head_count_table")
            g.check_within(where, "the table", table, view)
            rows = [k for k in w if k.startswith("head_count end ")]
            check(len(rows) >= 7, f"{where}: {len(rows)} rows drawn")
            for k in rows:
                g.check_within(where, k, w[k], table)


TESTS = {
    "present_fits": test_present_fits,
    "lesson_fits": test_lesson_fits,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "counts"))
