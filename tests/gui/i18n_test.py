#!/usr/bin/env python3
"""GUI tests of the Korean interface (GNU gettext, po/ko.po).

    i18n_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display).
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402
from harness import click  # noqa: E402

check = g.check
HANGUL = re.compile("[\uac00-\ud7a3]")
# Menus and tabs as po/ko.po writes them (a few, by key: the test reads them back as shown).
KO_MENUS = ["파일", "보기", "수업", "도움말"]
KO_TABS = {"heatmaps": "히트맵", "train": "학습", "examples": "예제", "model-view": "모델 뷰"}
EN_MENUS = ["File", "View", "Lesson", "Help"]


def dump(mhaviz, d, *args, env_extra=None, name="dump.json", size=(1280, 800)):
    out = os.path.join(d, name)
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    for k in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        env.pop(k, None)
    env.update(env_extra or {})
    subprocess.run([mhaviz, "gui", "--frames", "3", "--width", str(size[0]), "--height", str(size[1]),
                    "--dump-state", out, *args], check=True, env=env, cwd=d, capture_output=True)
    return g.read_json(out)


def check_korean(final, how):
    check(final["language"] == "ko", f"{how}: language {final['language']!r}, expected ko")
    check(final["labels"]["menus"] == KO_MENUS, f"{how}: menus {final['labels']['menus']}")
    for view, label in KO_TABS.items():
        check(final["labels"]["tabs"][view] == label, f"{how}: tab {view} shows {final['labels']['tabs'][view]!r}")
    # The keys stay English: a script reading --dump-state is not broken by the language.
    check(final["views"]["view"] == "heatmaps", f"{how}: the view's key is {final['views']['view']!r}")


def test_environment_and_flag(mhaviz, d):
    """LANG=ko_KR.UTF-8 (not a generated locale here: C.UTF-8 stands in) and --lang ko give
    Korean menus and tabs; LANG=C and --lang en English; --lang beats the environment."""
    check_korean(dump(mhaviz, d, env_extra={"LANG": "ko_KR.UTF-8"}), "LANG=ko_KR.UTF-8")
    check_korean(dump(mhaviz, d, env_extra={"LANGUAGE": "ko", "LANG": "C"}), "LANGUAGE=ko")
    check_korean(dump(mhaviz, d, "--lang", "ko"), "--lang ko")
    en = dump(mhaviz, d, env_extra={"LANG": "C"})
    check(en["language"] == "en" and en["labels"]["menus"] == EN_MENUS, f"LANG=C: {en['labels']}")
    en = dump(mhaviz, d, "--lang", "en", env_extra={"LANG": "ko_KR.UTF-8"})
    check(en["language"] == "en" and en["labels"]["tabs"]["heatmaps"] == "Heatmaps", f"--lang en over LANG=ko: {en['labels']}")
    # The teaching error the window shows, in Korean with the same suggestions; the
    # dump's "error" stays the core's English (scripts read it).
    bad = dump(mhaviz, d, "--lang", "ko", "--heads", "8", "--d-model", "100", name="bad.json")
    check(not bad["ok"] and bad["error"].startswith("d_model = 100 is not divisible"), f"error: {bad['error']!r}")
    shown = bad["error_shown"]
    check("나누어떨어지지 않습니다" in shown and "96" in shown and "104" in shown and "{1, 2, 4}" in shown,
          f"the Korean error: {shown!r}")
    en_bad = dump(mhaviz, d, "--heads", "8", "--d-model", "100", name="bad_en.json", env_extra={"LANG": "C"})
    check(en_bad["error_shown"] == en_bad["error"], "in English the window shows the core's message as it is")
    # Numbers keep their '.' in Korean: the trace's numbers are the exported files' numbers.
    ko = dump(mhaviz, d, "--lang", "ko", "--sentence", "the cat sat")
    check(ko["ok"], f"Korean run failed: {ko['error']}")
    check(str(ko["trace"]["attention"][0][0][0]).count(",") == 0, "a weight was written with a decimal comma")


def test_menu_switch(mhaviz, d):
    """View > Language > 한국어 switches the menus and tabs at the next frame, without a
    restart, and the choice is saved in the settings file; English switches back."""
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"), LANG="C")
    env.pop("LANGUAGE", None)
    env.pop("LC_ALL", None)
    app = g.App(mhaviz, d, [], settings=True, env=env)
    try:
        p = app.settle()
        check(p["language"] == "en" and p["labels"]["menus"] == EN_MENUS, f"starts English: {p['labels']}")
        for code, menus in (("ko", KO_MENUS), ("en", EN_MENUS)):
            click(app, app.widget("menu view"))
            app.wait_for(lambda p: "menu language" in p["widgets"], "the View menu")
            click(app, app.widget("menu language"))
            click(app, app.widget("language " + code))
            p = app.wait_for(lambda p: p["language"] == code, f"the language to become {code}", timeout=20)
            # The first frame in the new language already shows it everywhere.
            check(p["labels"]["menus"] == menus, f"{code}: the frame that reports it shows menus {p['labels']['menus']}")
            want = KO_TABS["heatmaps"] if code == "ko" else "Heatmaps"
            check(p["labels"]["tabs"]["heatmaps"] == want, f"{code}: tab {p['labels']['tabs']['heatmaps']!r}")
            click(app, app.widget("menu view"))  # close the menu again
            app.settle()
        app.quit()
    finally:
        app.kill()
    saved = g.read_json(os.path.join(d, "config", "mhaviz", "settings.json"))
    check(saved["ui"].get("language") == "en", f"settings.json keeps the last choice: {saved['ui']}")
    # And a saved choice is what the next start uses, over the environment.
    cfg = os.path.join(d, "config", "mhaviz", "settings.json")
    saved["ui"]["language"] = "ko"
    open(cfg, "w", encoding="utf-8").write(__import__("json").dumps(saved))
    final = dump(mhaviz, d, "--settings", env_extra={"LANG": "C"})
    check(final["language"] == "ko", "a saved Korean choice is used at the next start")


def test_every_tab_korean(mhaviz, d):
    """Every tab opened in Korean at 1280x800 (100%) and at 150% / 200% text (the two-row
    buttons): every tab shown whole (no clipped or hidden tab), the labels Korean, and no
    glyph drawn as a box. Screenshots are kept in the test's directory for a person."""
    views = None
    for pct in (100, 150, 200):
        for size in ((1280, 800), (1920, 1080)) if pct == 100 else ((1280, 800),):
            out = dump(mhaviz, d, "--lang", "ko", *(["--settings"] if pct != 100 else []), size=size,
                       name=f"v-{pct}-{size[0]}.json")
            views = views or list(out["labels"]["tabs"].keys())
            for view in views:
                shot = os.path.join(d, f"ko-{view}-{size[0]}x{size[1]}-{pct}.png")
                probe = os.path.join(d, "probe.json")
                env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
                subprocess.run([mhaviz, "gui", "--lang", "ko", "--frames", "4", "--view", view, "--width", str(size[0]),
                                "--height", str(size[1]), "--probe", probe, "--screenshot", shot,
                                *(["--settings"] if pct != 100 else [])], check=True, env=env, cwd=d,
                               capture_output=True)
                p = g.read_json(probe)
                check(p["view"] == view, f"{view}: opened {p['view']}")
                win_w = p["window"][0]
                for name in views:
                    r = p["widgets"].get("tab " + name)
                    check(r is not None, f"{view} at {size}, {pct}%: tab {name} not drawn")
                    check(r[0] >= 0 and r[0] + r[2] <= win_w + 0.5, f"{view} at {size}: tab {name} outside the window {r}")
                tabs = p["labels"]["tabs"]
                check(HANGUL.search(tabs["heatmaps"]), f"tabs not Korean: {tabs}")
                check(all("?" not in t for t in tabs.values()), f"a tab label has '?': {tabs}")
        # The next size: the settings file carries the text size.
        os.makedirs(os.path.join(d, "config", "mhaviz"), exist_ok=True)
        open(os.path.join(d, "config", "mhaviz", "settings.json"), "w").write(
            '{"version": 1, "sentence": "the cat sat on the mat", "config": {"d_model": 512, "num_heads": 8},'
            ' "ui": {"text_size": %d}}' % (150 if pct == 100 else 200))
        # Boxes: every character of po/ko.po is in every font the interface draws text
        # with (regular, bold headings, small tab buttons), at this text size.
        final = g.read_json(os.path.join(d, f"v-{pct}-1280.json"))
        cg = final["catalog_glyphs"]
        check(cg["characters"] > 300, f"the catalogue's characters were not read: {cg['characters']}")
        for font, missing in cg["missing"].items():
            check(not missing, f"{pct}%: the {font} font lacks " + ", ".join("U+%04X" % c for c in missing[:12]))
        for t in list(final["labels"]["tabs"].values()) + final["labels"]["menus"]:
            check("\ufffd" not in t and "?" not in t, f"a replacement character in {t!r}")


# English the Korean window may show: identifiers, formulas, names the glossary keeps in
# English (Query, Key, Value, Softmax, LayerNorm, FFN, KV cache, GQA, induction, memory, and
# GQA's and MQA's long names in parentheses where they are explained), units and file names. What is left after removing them must not hold a run of three
# English words: that is a sentence or a label nobody wrapped in _().
KEPT_ENGLISH = re.compile(
    r"Multi-Head (Self-)?Attention|Self-Attention|Flash Attention|KV cache|\((grouped|multi|grouped/multi)-query attention\)|mhaviz[-\w.]*|[\w.-]+\.(npz|png|svg|gif|csv|json|txt)"
    r"|\b(Query|Key|Value|Softmax|softmax|LayerNorm|FFN|GELU|ReLU|GQA|MQA|induction|memory|causal|Xavier|SentencePiece"
    r"|Ctrl\+\w|[A-Za-z]+_\w+|[A-Za-z]\w*\([^)]*\)|exp|log|sqrt|max|min|mean|std|nats?|FLOPs?|KiB|MiB|GiB)\b")
ENGLISH_RUN = re.compile(r"\b[A-Za-z][a-z]+(?:[ ,:;'-]+[A-Za-z][a-z]+){2,}\b")


def corpus_sentences():
    """The minimal pairs' English sentences: data the Proof view shows as they are (an
    English pair is English in either interface), not interface text."""
    out = set()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets", "corpus", "pairs.jsonl")
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                pair = json.loads(line)
                out.update(s for s in (pair["good"], pair["bad"]) if re.search("[A-Za-z]{3}", s))
    return sorted(out, key=len, reverse=True)


def english_runs(text, data=()):
    """The runs of three or more English words left in a Korean window's text, once the
    sentences in `data` are taken out."""
    runs = []
    for line in text.splitlines():
        for sentence in data:
            if sentence in line:
                line = line.replace(sentence, " ")
        for run in ENGLISH_RUN.findall(KEPT_ENGLISH.sub(" ", line)):
            runs.append((run, line.strip()[:160]))
    return runs


def test_every_view_korean_text(mhaviz, d):
    """Every view of the registry opened in Korean, on a seeded model and on mhaviz-small,
    with a Korean sentence: the text the window drew (ImGui's log of the frame, in
    --dump-state's "shown_text") has Hangul and no English sentence or label left."""
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    for k in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        env.pop(k, None)
    first = dump(mhaviz, d, "--lang", "ko", name="registry.json")
    views = [v["name"] for v in first["views"]["registry"]]
    check(len(views) >= 15 and "flash" in views and "cost" in views, f"the registry lists {views}")
    problems = []
    data = corpus_sentences()
    for model, args in (("seeded", ["--sentence", "고양이가 쥐를 잡았다"]),
                        ("mhaviz-small", ["--model", "mhaviz-small", "--sentence", "고양이가 쥐를 잡았다"])):
        texts = {}
        for view in views:
            out = os.path.join(d, f"text-{model}-{view}.json")
            subprocess.run([mhaviz, "gui", "--lang", "ko", "--frames", "4", "--width", "1280", "--height", "800",
                            "--view", view, "--dump-state", out, *args], check=True, env=env, cwd=d,
                           capture_output=True)
            final = g.read_json(out)
            check(final["views"]["view"] == view, f"{model}: opened {final['views']['view']}, not {view}")
            texts[view] = final["shown_text"]
            # The Model view's example sentences (English ones are data, as the pairs are).
            mv = final["views"]["model_view_view"]
            examples = [t["sentence"] for t in mv.get("try_these", []) + mv.get("try_these_left_out", [])]
            problems += [f"{model} {view}: {run!r} in {line!r}"
                         for run, line in english_runs(texts[view], examples + data)]
        # The view's own text: the lines no other view shows (the panels and menus are in all).
        common = set.intersection(*(set(t.splitlines()) for t in texts.values()))
        for view, text in texts.items():
            body = "\n".join(l for l in text.splitlines() if l not in common)
            check(HANGUL.search(body), f"{model} {view}: no Korean in the view: {body[:300]!r}")
    check(not problems, f"{len(problems)} English texts in the Korean window:\n  " + "\n  ".join(problems[:80]))


def test_measured_korean(mhaviz, d):
    """What the rehearsal read in English in the Korean window: the Importance view's
    reference ("64 validation windows of 64 pieces", measured on mhaviz-small) and the
    Next view's knocked-out heads ("L1H0 (zero)") are written in Korean."""
    final = dump(mhaviz, d, "--lang", "ko", "--model", "mhaviz-small", "--sentence", "고양이가 쥐를 잡았다", "--view",
                 "next", "--ablate", "L1H0", name="next.json")
    text = final["shown_text"]
    check("L1H0" in text and "(zero)" not in text, f"the Next view's knock-out: {text[-600:]!r}")
    app = g.App(mhaviz, d, ["--lang", "ko", "--model", "mhaviz-small", "--sentence", "고양이가 쥐를 잡았다", "--view",
                            "importance", "--importance-windows", "4"])
    try:
        app.wait_for(lambda p: p.get("importance", {}).get("state") == "done", "the importance measurement")
        app.settle(3)
        final = app.quit()
    finally:
        app.kill()
    text = final["shown_text"]
    check("validation windows" not in text and "검증 창 4개" in text, f"the Importance view's reference: "
                                                                   f"{[l for l in text.splitlines() if '4' in l][:6]}")


def test_notices_korean(mhaviz, d):
    """The notices the core and the language model write in English (the command line
    prints them) are shown in Korean: the token cap on a long sentence, the model's
    context on a long text, a sentence that arrived decomposed (NFD) and was composed."""
    import unicodedata
    long_ko = " ".join(["고양이가 쥐를 잡았다."] * 300)  # 1200 tokens: over the cap of 1024
    path = os.path.join(d, "long.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write(long_ko)
    runs = {
        "token cap": (["--sentence-file", path, "--heads", "2", "--d-model", "64"], "상한"),
        "context": (["--model", "mhaviz-small", "--sentence", " ".join(["고양이가 쥐를 잡았다."] * 12)], "max_seq"),
        "composed": (["--sentence", unicodedata.normalize("NFD", "고양이가 쥐를 잡았다")], "NFC로 정규화"),
    }
    for how, (args, word) in runs.items():
        final = dump(mhaviz, d, "--lang", "ko", *args, name=f"{how}.json")
        text = final["shown_text"]
        notice = [l for l in text.splitlines() if word in l and HANGUL.search(l)]
        check(notice, f"{how}: no Korean notice with {word!r} in the window:\n{text[:1500]}")
        left = english_runs(text)
        check(not left, f"{how}: English left in the Korean window: {left[:5]}")


def test_export_korean(mhaviz, d):
    """mhaviz export --lang ko draws the title and captions in Korean (the SVG's text is
    readable); without --lang they stay English; the GUI's --export in Korean does the same."""
    env = dict(os.environ)
    for k in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        env.pop(k, None)
    run = lambda *a: subprocess.run([mhaviz, "export", "--quiet", "--sentence", "the cat sat", *a], check=True, env=env,
                                    cwd=d, capture_output=True)
    run("--lang", "ko", "--svg", "ko.svg", "--png", "ko.png")
    run("--svg", "en.svg")
    ko = open(os.path.join(d, "ko.svg"), encoding="utf-8").read()
    en = open(os.path.join(d, "en.svg"), encoding="utf-8").read()
    for caption in ("Multi-Head 셀프 어텐션 가중치", "문장:", "헤드 0", "각 행의 합은 1"):
        check(caption in ko, f"export --lang ko: {caption!r} not in the SVG")
    check("Multi-head self-attention weights" in en and not HANGUL.search(en), "the English export has Korean text")
    # Numbers are the same in both: only the words change.
    nums = lambda t: re.findall(r">(\d\.\d\d)<", t)
    check(nums(ko) and nums(ko) == nums(en), "the weights printed in the cells differ between the languages")
    bad = subprocess.run([mhaviz, "export", "--lang", "fr", "--svg", "x.svg"], env=env, cwd=d, capture_output=True,
                         text=True)
    check(bad.returncode == 2 and "fr" in bad.stderr, f"--lang fr: status {bad.returncode}, {bad.stderr!r}")


TESTS = {
    "export_korean": (test_export_korean, False),
    "environment_and_flag": test_environment_and_flag,
    "menu_switch": test_menu_switch,
    "every_tab_korean": test_every_tab_korean,
    "every_view_korean_text": test_every_view_korean_text,
    "notices_korean": test_notices_korean,
    "measured_korean": test_measured_korean,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "i18n"))
