#!/usr/bin/env python3
"""GUI tests of the Cross view: cross-attention's rectangular maps and the encoder block,
against `mhaviz trace`.

    cross_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool or no numpy).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402
from harness import dump_run, cli_npz, close  # noqa: E402


check = g.check


def test_cross_and_encoder(mhaviz, d):
    """Cross-attention: rectangular maps and the self-attention contrast; the encoder
    block: its FFN rows in the flow and ffn_hidden in the inspector."""
    args = ["--sentence", "the cat sat", "--memory", "le chat est assis", "--heads", "2", "--d-model", "16"]
    dump = dump_run(mhaviz, d, *args, "--view", "cross", "--view-head", "1")
    cv = dump["views"]["cross_view"]
    check(cv["cross"] and cv["seq"] == 3 and cv["seq_kv"] == 4, f"cross view {cv.get('cross')} {cv.get('seq')} {cv.get('seq_kv')}")
    check(cv["kind"].startswith("cross-attention") and "3 x 4" in cv["explanation"], f"{cv['kind']}: {cv['explanation']}")
    check(cv["key_tokens"] == ["le", "chat", "est", "assis"], f"key tokens {cv['key_tokens']}")
    self_ref = cli_npz(mhaviz, d, "self.npz", *args[:2], *args[4:])  # the same sentence and weights, no memory
    close(cv["self_attention_head"], self_ref["attn"][0, 1], 1e-6, "the contrast's self-attention vs mhaviz trace")
    check(len(dump["trace"]["attention"][1][0]) == 4, "cross-attention maps are not 3 x 4")

    args = ["--sentence", "the cat sat on the mat", "--heads", "2", "--d-model", "8", "--block", "encoder",
            "--d-ff", "24", "--activation", "gelu"]
    dump = dump_run(mhaviz, d, *args, "--inspect", "ffn_hidden")
    steps = [r["step"] for r in dump["trace"]["shape_flow"]]
    check("FFN expand + GELU" in steps and "FFN contract" in steps, f"no FFN rows in the shape flow: {steps}")
    iv = dump["views"]["inspect_view"]
    check(iv["shape"] == [1, 6, 24], f"ffn_hidden shape {iv.get('shape')}")
    ref = cli_npz(mhaviz, d, "enc.npz", *args)
    close(iv["values"], ref["ffn_hidden"][0], 0, "ffn_hidden in the inspector vs mhaviz trace")
    check(dump["settings"]["config"]["block"] == "encoder" and dump["settings"]["config"]["d_ff"] == 24,
          "encoder block not in the saved settings")


TESTS = {
    "and_encoder": test_cross_and_encoder,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "cross", needs_numpy=True))
