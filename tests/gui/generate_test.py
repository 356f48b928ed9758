#!/usr/bin/env python3
"""GUI tests of the Generate view: mhaviz-small continues the sentence in the window
(the Generate and Step buttons, clicked with xdotool), checked through --dump-state
against `mhaviz generate --json` with the same prompt, and the cache it draws against
a float64 PyTorch rebuild of the model (tests/cli/torch_model.py).

    generate_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display).
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import harness as g  # noqa: E402
from harness import click_until  # noqa: E402

check = g.check
MODEL = os.path.normpath(os.path.join(HERE, "..", "..", "assets", "models", "mhaviz-small.npz"))
PROMPT = "고양이가 쥐를"
PIECES = 10


def generate_json(mhaviz, d, prompt, tokens):
    r = subprocess.run([mhaviz, "generate", "--model", MODEL, "--prompt", prompt, "--tokens", str(tokens), "--json"],
                       check=True, cwd=d, capture_output=True, text=True)
    return json.loads(r.stdout)


def open_view(mhaviz, d, prompt, *extra, size=(1280, 800)):
    app = g.App(mhaviz, d, ["--model", MODEL, "--sentence", prompt, "--view", "generate", *extra], size=size)
    app.wait_for(lambda p: p["ok"] and "generate_go" in p["widgets"], "the Generate view")
    return app


def generated(n):
    """The probe once the view shows `n` new pieces and the worker is idle."""
    return lambda p: p["generate"]["pieces"] == n and not p["generate"]["running"]


def generate_in_window(mhaviz, d, prompt, n, *extra):
    """Generate pressed once for `n` pieces of `prompt` (with the view's `extra` flags):
    the view's dump once they are in."""
    app = open_view(mhaviz, d, prompt, "--generate-pieces", str(n), *extra)
    try:
        click_until(app, "generate_go", lambda p: p["generate"]["asked"] >= n, "Generate to be taken")
        app.wait_for(generated(n), f"{n} pieces", timeout=60)
        final = app.quit()
    finally:
        app.kill()
    return final["views"]["generate_view"]


def torch_cache(ids, layer, kv_head, head):
    """K and V of `layer`'s K/V head for the pieces `ids` (n, head_dim), and the last
    piece's query weights of `head` over them (n), from the float64 rebuild."""
    import torch
    import torch_model as tm
    cfg, params = tm.load_checkpoint(MODEL)
    P = tm.to_torch(params, torch.float64)
    tokens = torch.tensor([ids], dtype=torch.int64)
    H, G = cfg["num_heads"], cfg["num_kv_heads"]
    hd = cfg["d_model"] // H
    kept = {}
    with torch.no_grad():
        x = P["tok_embed"][tokens]
        if cfg["positional"] == "learned":
            x = x + P["pos_embed"][:len(ids)]
        elif cfg["positional"] == "sinusoidal":
            x = x + torch.from_numpy(tm.sinusoidal(len(ids), cfg["d_model"])).to(x.dtype)
        for l in range(cfg["num_layers"]):
            pre = f"layers.{l}."

            def attention(t, l=l, pre=pre):
                weights = []
                out = tm.mha(cfg, P, pre, t, weights=weights)
                k = (t @ P[pre + "W_k"] + P[pre + "b_k"]).reshape(len(ids), G, hd)
                v = (t @ P[pre + "W_v"] + P[pre + "b_v"]).reshape(len(ids), G, hd)
                kept[l] = (k, v, weights[0][0])
                return out

            x = tm.sublayer(cfg, x, attention, P[pre + "ln_gamma"], P[pre + "ln_beta"])
            if cfg["block"] == "encoder":
                x = tm.sublayer(cfg, x, lambda t, pre=pre: tm.ffn(cfg, P, pre, t), P[pre + "ln2_gamma"],
                                P[pre + "ln2_beta"])
    k, v, attn = kept[layer]
    return k[:, kv_head, :].tolist(), v[:, kv_head, :].tolist(), attn[head, -1, :].tolist()


def max_diff(a, b, what):
    check(len(a) == len(b), f"{what}: {len(a)} rows vs {len(b)}")
    worst = 0.0
    for ra, rb in zip(a, b):
        ra, rb = (ra, rb) if isinstance(ra, list) else ([ra], [rb])
        check(len(ra) == len(rb), f"{what}: a row of {len(ra)} vs {len(rb)}")
        worst = max([worst] + [abs(x - y) for x, y in zip(ra, rb)])
    return worst


def check_against_generate(view, ref, what):
    check(view["prompt_ids"] == ref["prompt_ids"], f"{what}: prompt ids {view['prompt_ids']} vs {ref['prompt_ids']}")
    check(view["ids"] == ref["ids"], f"{what}: generated ids {view['ids']} vs generate --json's {ref['ids']}")
    check(view["pieces"] == ref["pieces"], f"{what}: pieces {view['pieces']} vs {ref['pieces']}")
    check(view["text"] == ref["text"], f"{what}: text {view['text']!r} vs {ref['text']!r}")
    check(view["cache"] == ref["cache"], f"{what}: cache {view['cache']} vs generate --json's {ref['cache']}")
    check([s["position"] for s in view["steps"]] == [s["position"] for s in ref["steps"]], f"{what}: step positions")
    check([s["flops_cached"] for s in view["steps"]] == [s["flops_cached"] for s in ref["steps"]] and
          [s["flops_full"] for s in view["steps"]] == [s["flops_full"] for s in ref["steps"]], f"{what}: FLOPs")


def test_ten_pieces(mhaviz, d):
    """Generate adds 10 pieces: the dump's pieces, ids, cache shape (layers, kv_heads, n,
    head_dim) and bytes equal `mhaviz generate --json --tokens 10`'s; every step's max
    |logit difference| cached vs full recomputation is below 1e-5; the bytes with fewer
    K/V heads follow 2 x layers x kv_heads x head_dim x n x 4; the K, V and weights drawn
    equal the torch rebuild's."""
    ref = generate_json(mhaviz, d, PROMPT, PIECES)
    app = open_view(mhaviz, d, PROMPT, "--generate-pieces", str(PIECES), "--layer", "1", "--view-head", "2")
    try:
        check(app.probe()["generate"]["pieces"] == 0, "pieces before Generate was pressed")
        click_until(app, "generate_go", lambda p: p["generate"]["asked"] >= PIECES, "Generate to be taken")
        p = app.wait_for(generated(PIECES), f"{PIECES} pieces", timeout=60)
        check(p["generate"]["asked"] == PIECES, f"asked for {p['generate']['asked']} pieces, expected {PIECES}")
        check("generate_cache" in app.settle()["widgets"], "the cache's matrices are not drawn")
        final = app.quit()
    finally:
        app.kill()
    view = final["views"]["generate_view"]
    check(view["available"] and "error" not in view, f"the view reports {view.get('error')}")
    check(len(view["ids"]) == PIECES and len(view["steps"]) == PIECES, f"{len(view['ids'])} pieces in the dump")
    check_against_generate(view, ref, "Generate 10")
    c = view["cache"]
    check(c["n"] == len(ref["prompt_ids"]) + PIECES - 1, f"cache rows {c['n']}: every piece read, all but the newest")
    check(c["bytes"] == 2 * c["layers"] * c["kv_heads"] * c["head_dim"] * c["n"] * 4, f"bytes {c['bytes']}")
    fewer = {x["kv_heads"]: x["bytes"] for x in view["bytes_with_fewer_kv_heads"]}
    check(sorted(fewer) == [1, 2], f"GQA/MQA counts {sorted(fewer)}, expected 1 and 2 for 4 heads")
    for kv, b in fewer.items():
        check(b == 2 * c["layers"] * kv * c["head_dim"] * c["n"] * 4, f"bytes with {kv} K/V heads: {b}")
    diffs = [s["max_logit_diff"] for s in view["steps"]]
    check(all(0 <= x <= 1e-5 for x in diffs) and view["max_logit_diff"] == max(diffs),
          f"cached vs full logits differ by {diffs}")
    check(all(s["cpu_ms_cached"] > 0 and s["cpu_ms_full"] > 0 for s in view["steps"]), "unmeasured steps")
    # What the view draws: layer 1, head 2, as the flags chose.
    check((view["layer"], view["head"], view["kv_head"]) == (1, 2, 2), f"layer {view['layer']}, head {view['head']}")
    check(len(view["k"]) == len(view["v"]) == len(view["weights"]) == c["n"], "K, V, weights: one row per piece read")
    check(all(len(r) == c["head_dim"] for r in view["k"] + view["v"]), "K and V rows of head_dim values")
    check(abs(sum(view["weights"]) - 1) < 1e-5, f"the weights sum to {sum(view['weights'])}")
    read = view["prompt_ids"] + view["ids"][:-1]
    k, v, w = torch_cache(read, view["layer"], view["kv_head"], view["head"])
    errs = [max_diff(view["k"], k, "K"), max_diff(view["v"], v, "V"), max_diff(view["weights"], w, "weights")]
    print(f"cache vs torch float64: max |diff| K {errs[0]:.2e}, V {errs[1]:.2e}, weights {errs[2]:.2e}")
    check(max(errs) < 2e-5, f"the cache drawn differs from the torch rebuild's by {errs}")


def test_step_and_start_over(mhaviz, d):
    """An English prompt: Step twice gives generate --json's first two pieces, Generate
    (3 pieces) continues from there to its first five, and Start over empties the view
    while the window keeps drawing."""
    prompt = "The cat sat on the"
    ref = generate_json(mhaviz, d, prompt, 5)
    app = open_view(mhaviz, d, prompt, "--generate-pieces", "3")
    try:
        click_until(app, "generate_step", generated(1), "one step")
        click_until(app, "generate_step", generated(2), "a second step")
        mid = app.settle()
        check(mid["generate"]["n"] == len(ref["prompt_ids"]) + 1, f"cache rows {mid['generate']['n']} after 2 steps")
        click_until(app, "generate_go", generated(5), "three more pieces", tries=1)
        five = app.quit()
    finally:
        app.kill()
    check_against_generate(five["views"]["generate_view"], ref, "Step, Step, Generate 3")
    app = open_view(mhaviz, d, prompt)
    try:
        click_until(app, "generate_step", generated(1), "one step")
        p = click_until(app, "generate_reset", lambda p: p["generate"]["pieces"] == 0 and p["generate"]["asked"] == 0,
                        "Start over")
        app.settle()
        final = app.quit()
    finally:
        app.kill()
    check("ids" not in final["views"]["generate_view"], "pieces left after Start over")


def test_sampled(mhaviz, d):
    """Sampling as the view's flags set it (temperature 0.75, top-k 40, seed 7): Generate's
    12 pieces are `mhaviz generate --temperature 0.75 --top-k 40 --seed 7`'s, and not the
    greedy ones (0.75 is exact in float and double, so both sample from the same numbers)."""
    prompt = "The cat"
    flags = ["--temperature", "0.75", "--top-k", "40", "--seed", "7"]
    r = subprocess.run([mhaviz, "generate", "--model", MODEL, "--prompt", prompt, "--tokens", "12",
                        "--json", *flags], check=True, cwd=d, capture_output=True, text=True)
    ref = json.loads(r.stdout)
    greedy = generate_json(mhaviz, d, prompt, 12)
    check(ref["ids"] != greedy["ids"], "the sampled text is the greedy one: this seed tests nothing")
    view = generate_in_window(mhaviz, d, prompt, 12, "--generate-temperature", "0.75", "--generate-top-k", "40",
                              "--generate-seed", "7")
    check(view["sampling"] == {"temperature": 0.75, "top_k": 40, "seed": 7, "greedy": False, "no_repeat_ngram": 0},
          f"sampling {view['sampling']}")
    check_against_generate(view, ref, "sampled")


def test_no_repeat(mhaviz, d):
    """n-gram blocking as the view's flag sets it (--generate-no-repeat 3): Generate's 20
    greedy pieces are `mhaviz generate --no-repeat 3`'s, each step blocked as many pieces,
    and the text is not the plain greedy one. The prompt is the first of a few on which
    the model's plain greedy text repeats itself within 20 pieces (which ones do depends on
    the shipped model), so the comparison tests the blocking."""
    for prompt in ("할머니께서", "옛날에", "The dog", "The cat", "고양이가"):
        r = subprocess.run([mhaviz, "generate", "--model", MODEL, "--prompt", prompt, "--tokens", "20", "--json",
                            "--no-repeat", "3"], check=True, cwd=d, capture_output=True, text=True)
        ref = json.loads(r.stdout)
        plain = generate_json(mhaviz, d, prompt, 20)
        if ref["ids"] != plain["ids"] and any(s["blocked"] for s in ref["steps"]):
            break
    else:
        check(False, "blocking changes nothing on any of the prompts: the comparison would test nothing")
    view = generate_in_window(mhaviz, d, prompt, 20, "--generate-no-repeat", "3")
    check(view["sampling"]["no_repeat_ngram"] == 3, f"sampling {view['sampling']}")
    check_against_generate(view, ref, "no repeat of 3")
    check([s["blocked"] for s in view["steps"]] == [s["blocked"] for s in ref["steps"]],
          f"blocked per step {[s['blocked'] for s in view['steps']]} vs {[s['blocked'] for s in ref['steps']]}")


def test_new_sentence_cancels(mhaviz, d):
    """A new sentence typed while Generate runs (60 pieces, paced) cancels it: the view
    forgets the pieces at once, and Step then continues the new sentence as `mhaviz
    generate --prompt` does."""
    ref = generate_json(mhaviz, d, "a dog", 1)
    app = open_view(mhaviz, d, "The cat", "--generate-pieces", "60")
    try:
        click_until(app, "generate_go", lambda p: p["generate"]["pieces"] >= 1, "Generate to start")
        r = app.widget("sentence")
        app.click(r[0] + r[2] / 2, r[1] + r[3] / 2)
        app.key("ctrl", "a")
        app.type_held("a dog")
        p = app.wait_for(lambda p: p["sentence"] == "a dog" and p["generate"]["pieces"] == 0 and
                         p["generate"]["asked"] == 0 and not p["generate"]["running"], "the new sentence to cancel")
        click_until(app, "generate_step", generated(1), "one step on the new sentence")
        final = app.quit()
    finally:
        app.kill()
    view = final["views"]["generate_view"]
    check(view["prompt_ids"] == ref["prompt_ids"] and view["ids"] == ref["ids"],
          f"after the new sentence: {view['prompt_ids']} + {view['ids']}, generate gives {ref['prompt_ids']} + "
          f"{ref['ids']}")


def test_context(mhaviz, d):
    """A sentence longer than the context: the prompt keeps its first 63 pieces (a notice
    says so), one Step fills the 64, the cache then holds 63 pieces' K and V, the
    129,024 bytes docs/generate.md gives, and Generate is refused."""
    long = " ".join(["고양이가 쥐를 잡았다."] * 20)
    app = open_view(mhaviz, d, long)
    try:
        click_until(app, "generate_step", generated(1), "one step")
        p = app.settle()
        check(p["generate"]["n"] == 63, f"cache rows {p['generate']['n']}")
        r = app.widget("generate_go")
        app.click(r[0] + r[2] / 2, r[1] + r[3] / 2)
        p = app.settle(5)
        check(p["generate"]["asked"] == 1 and p["generate"]["pieces"] == 1, f"Generate at the context: {p['generate']}")
        final = app.quit()
    finally:
        app.kill()
    view = final["views"]["generate_view"]
    check("64" in view.get("notice", ""), f"notice {view.get('notice')!r}")
    check(len(view["prompt_ids"]) == 63 and view["at_context"], f"{len(view['prompt_ids'])} prompt pieces")
    check(view["cache"]["bytes"] == 129024, f"bytes {view['cache']['bytes']}")
    check({x["kv_heads"]: x["bytes"] for x in view["bytes_with_fewer_kv_heads"]} == {2: 64512, 1: 32256},
          f"GQA/MQA bytes {view['bytes_with_fewer_kv_heads']}")


def test_not_a_language_model(mhaviz, d):
    """On the seeded weights the view says it needs a language model and offers mhaviz-small;
    its button makes mhaviz-small the source."""
    app = g.App(mhaviz, d, ["--sentence", PROMPT, "--view", "generate"])
    try:
        p = app.wait_for(lambda p: "generate_use_small" in p["widgets"], "the button that picks mhaviz-small")
        click_until(app, "generate_use_small", lambda p: p["train"]["source"] == "mhaviz-small (trained)" and p["ok"],
                    "mhaviz-small to be the source")
        app.wait_for(lambda p: "generate_go" in p["widgets"], "the Generate button")
        app.quit()
    finally:
        app.kill()


def test_stop_at_s(mhaviz, d):
    """The view's "stop at <s>" switch, as generate --stop-at-s: after a full stop the
    model writes <s> (a new text, often in the other language). Without the switch
    Generate's 10 pieces go on past it, as `mhaviz generate` writes them; clicked, the
    generation starts over and ends at the <s>, as `mhaviz generate --stop-at-s`, with
    the switch and the stop in --probe. --generate-stop-at-s starts with it on."""
    prompt = "고양이가 쥐를 잡았다."
    plain = generate_json(mhaviz, d, prompt, 10)
    r = subprocess.run([mhaviz, "generate", "--model", MODEL, "--prompt", prompt, "--tokens", "10", "--json",
                        "--stop-at-s"], check=True, cwd=d, capture_output=True, text=True)
    stopped = json.loads(r.stdout)
    check(len(plain["pieces"]) == 10 and "<s>" in plain["pieces"][:-1],
          f"the plain text {plain['pieces']} has no <s> before its end: the switch would change nothing")
    first = plain["pieces"].index("<s>") + 1
    check(stopped["pieces"] == plain["pieces"][:first], f"--stop-at-s wrote {stopped['pieces']}")
    app = open_view(mhaviz, d, prompt, "--generate-pieces", "10")
    try:
        click_until(app, "generate_go", lambda p: p["generate"]["asked"] >= 10, "Generate to be taken")
        p = app.wait_for(generated(10), "10 pieces", timeout=60)
        check(not p["generate"]["stop_at_s"] and not p["generate"]["stopped_at_s"], f"{p['generate']}")
        click_until(app, "generate_stop_at_s", lambda p: p["generate"]["stop_at_s"], "the switch")
        p = app.wait_for(lambda p: p["generate"]["stopped_at_s"] and generated(first)(p), "the stop at <s>",
                         timeout=60)
        final = app.quit()
    finally:
        app.kill()
    view = final["views"]["generate_view"]
    pieces = [st["piece"] for st in view["steps"]]
    check(view["stop_at_s"] and view["stopped_at_s"] and pieces == stopped["pieces"],
          f"with the switch: {pieces}, stop {view['stop_at_s']}, stopped {view['stopped_at_s']}; "
          f"generate --stop-at-s: {stopped['pieces']}")
    view = generate_in_window(mhaviz, d, prompt, 10)
    pieces = [st["piece"] for st in view["steps"]]
    check(pieces == plain["pieces"] and not view["stopped_at_s"],
          f"without the switch: {pieces}, stopped {view['stopped_at_s']}; generate: {plain['pieces']}")
    app = open_view(mhaviz, d, prompt, "--generate-pieces", "10", "--generate-stop-at-s")
    try:
        p = app.wait_for(lambda p: p["generate"]["stop_at_s"], "--generate-stop-at-s in the probe")
        click_until(app, "generate_go", lambda p: p["generate"]["asked"] >= 10, "Generate to be taken")
        app.wait_for(lambda p: p["generate"]["stopped_at_s"] and generated(first)(p), "the stop at <s>", timeout=60)
        app.quit()
    finally:
        app.kill()


TESTS = {
    "ten_pieces": test_ten_pieces,
    "stop_at_s": test_stop_at_s,
    "step_and_start_over": test_step_and_start_over,
    "sampled": test_sampled,
    "no_repeat": test_no_repeat,
    "context": test_context,
    "new_sentence_cancels": test_new_sentence_cancels,
    "not_a_language_model": test_not_a_language_model,
}


if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "generate"))
