"""The designed teaching corpus: the generator is deterministic and reproduces the shipped
files, every Korean sentence passes an independent particle checker, the held-out words
stay out of their construction, no minimal pair is in the training text, and the shipped
tokenizer spells the teaching text without byte pieces.

Usage: test_teaching_corpus.py MHAVIZ (the binary is not needed; the argument keeps the
calling convention of the other CLI tests)."""
import gzip
import json
import os
import re
import subprocess
import sys

from checks import check, main

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPTS = os.path.join(ROOT, "scripts")
sys.path.insert(0, SCRIPTS)
import korean_particles  # noqa: E402
import teaching_lexicon as L  # noqa: E402

GEN = os.path.join(SCRIPTS, "make_teaching_corpus.py")
SHIPPED = os.path.join(ROOT, "assets", "corpus", "train-designed.txt.gz")
PAIRS = os.path.join(ROOT, "assets", "corpus", "pairs.jsonl")
TOKENIZER = os.path.join(ROOT, "assets", "models", "mhaviz-small.model")
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def generate(*args):
    return subprocess.run([sys.executable, GEN, *args], check=True, stdout=subprocess.PIPE).stdout


def checker_nouns():
    nouns = {w for ws in L.KO_NOUNS.values() for w in ws.split()}
    nouns |= set(L.KO_NAMES) | set(L.KO_MEANS) | set(L.KO_CLASSIFIER.values()) | {"나", "우리"}
    nouns |= {t for ts in L.KO_INSTRUMENT.values() for t in ts}
    return nouns


def shipped_lines():
    with gzip.open(SHIPPED, "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def determinism(mhaviz, tmp):
    a = generate("--print", "--lines", "300", "--pairs", "5", "--seed", "3")
    b = generate("--print", "--lines", "300", "--pairs", "5", "--seed", "3")
    c = generate("--print", "--lines", "300", "--pairs", "5", "--seed", "4")
    check(a == b and len(a) > 3000, f"the same seed gives the same bytes ({len(a)} bytes)")
    check(a != c, "another seed gives other text")
    # The shipped files are the command in the model card's (seed 1, 130,000 paragraphs).
    out = os.path.join(tmp, "gen")
    subprocess.run([sys.executable, GEN, "--out", out, "--lines", "130000", "--seed", "1"], check=True,
                   stdout=subprocess.DEVNULL)
    for name, shipped in (("train-designed.txt.gz", SHIPPED), ("pairs.jsonl", PAIRS)):
        with open(os.path.join(out, name), "rb") as f, open(shipped, "rb") as g:
            check(f.read() == g.read(), f"the shipped {name} is --seed 1's, byte for byte")


def particles(mhaviz, tmp):
    nouns = checker_nouns()
    # The checker can fail: it catches each wrong allomorph.
    for wrong in ("고양이이 쥐를 잡았다.", "아이가 쥐을 잡았다.", "고양이은 생선을 좋아한다.", "닭와 개가 논다.",
                  "아이가 교실으로 갔다.", "아이가 학교로 갔다.", "아이가 집로 갔다."):
        bad, _ = korean_particles.check_sentence(wrong, nouns)
        check(len(bad) == 1 if "학교로" not in wrong else not bad, f"the checker judges '{wrong}'")
    lines = shipped_lines()
    total, errors, kinds = 0, [], {}
    for line in lines:
        if not HANGUL.search(line):
            continue
        bad, n = korean_particles.check_sentence(line, nouns)
        total += n
        errors += [(line, b) for b in bad]
        for w in line.split():
            hit = korean_particles.split(w.rstrip("."), nouns)
            if hit:
                kinds[hit[1]] = kinds.get(hit[1], 0) + 1
    check(not errors, f"every particle of the shipped Korean text is the right allomorph ({total:,} checked; "
          f"first errors: {errors[:3]})")
    check(all(kinds.get(p, 0) > 1000 for p in ("이", "가", "을", "를", "은", "는", "과", "와", "으로", "로")),
          f"each allomorph is used often: {dict(sorted(kinds.items()))}")
    with open(PAIRS, encoding="utf-8") as f:
        pairs = [json.loads(l) for l in f]
    good_ok = all(not korean_particles.check_sentence(p["good"], nouns)[0] for p in pairs
                  if p["phenomenon"].startswith("particle"))
    bad_caught = all(korean_particles.check_sentence(p["bad"], nouns)[0] for p in pairs
                     if p["phenomenon"].startswith("particle"))
    check(good_ok and bad_caught, "the particle pairs' good sentences pass the checker and their bad ones fail it")


def held_out(mhaviz, tmp):
    lines = shipped_lines()
    words = set()
    for line in lines:
        words.update(w.rstrip(".") for w in line.split())
    leaks = []
    for n in L.HELD_OUT_OBJECT:
        leaks += [w for w in (n + "을", n + "를") if w in words]
    for n in L.HELD_OUT_SUBJECT:
        leaks += [w for w in (n + "이", n + "가") if w in words]
    for n in L.HELD_OUT_TOPIC:
        leaks += [w for w in (n + "은", n + "는") if w in words]
    for n in L.HELD_OUT_AND:
        leaks += [w for w in (n + "과", n + "와") if w in words]
    for n in L.HELD_OUT_RO:
        leaks += [w for w in (n + "으로", n + "로") if w in words]
    for v in L.HELD_OUT_HONORIFIC:
        forms = L.KO_VERBS[v][0]
        leaks += [w for w in forms[2:] if w in words]
    with open(PAIRS, encoding="utf-8") as f:
        pairs = [json.loads(l) for l in f]
    # A template may still put a held-out word in its construction (마을로 from 이사하다's
    # towns): the generator then drops that word's pairs, so no pair tests a seen form.
    tested = {p["good"].split()[len(p["prefix"].split()) - 1].rstrip(".") for p in pairs
              if p["phenomenon"].startswith("particle")}
    honorific = {f for v in L.HELD_OUT_HONORIFIC for f in L.KO_VERBS[v][0][2:]}
    tested |= {w.rstrip(".") for p in pairs if p["phenomenon"] == "honorific agreement"
               for w in p["good"][len(p["prefix"]):].split() if w.rstrip(".") in honorific}
    seen = sorted(w for w in tested if w in words)
    check(not seen, f"no pair's tested form is in the training text ({len(tested)} forms; seen: {seen[:5]})")
    check(len(leaks) <= 2, f"at most two held-out forms slipped into the training text (and are untested): {leaks}")
    numerals = set(L.KO_NUMERALS)
    counted = set()
    for line in lines:
        ws = line.split()
        for a, b in zip(ws, ws[1:]):
            if b in numerals:
                counted.add(a)
    leaks = sorted(counted & L.HELD_OUT_CLASSIFIER)
    check(not leaks and len(counted) > 100, f"no held-out noun is counted ({len(counted)} nouns are; leaks: {leaks})")
    with open(PAIRS, encoding="utf-8") as f:
        pairs = [json.loads(l) for l in f]
    sentences = set()
    for line in lines:
        sentences.update(s.strip() + "." for s in line.split(".") if s.strip())
    inside = [p["good"] for p in pairs if p["good"] in sentences or p["bad"] in sentences]
    check(not inside, f"no sentence of a minimal pair is in the training text ({len(pairs)} pairs; {inside[:3]})")
    phen = {}
    for p in pairs:
        phen[p["phenomenon"]] = phen.get(p["phenomenon"], 0) + 1
    check(len(phen) == 8 and all(150 <= n <= 200 for n in phen.values()),
          f"150 to 200 pairs for each of 8 phenomena: {phen}")
    heads = {s for s, _ in (x.split(":") for x in L.EN_NOUNS["animal"].split() + L.EN_NOUNS["person"].split() +
                                              L.EN_NOUNS["thing"].split() + L.EN_NOUNS["food"].split())
             if s in L.HELD_OUT_AGREEMENT}
    plural = dict(x.split(":") for c in L.EN_NOUNS.values() for x in c.split())
    attracted = set()
    for line in lines:
        for m in re.finditer(r"\bThe (\w+) (?:to|near|on|behind|under|beside|in|of|with|by|next to|from) the ", line):
            attracted.add(m.group(1))
    leaks = {w for w in attracted if w in heads or w in {plural[h] for h in heads}}
    cues = {p["cue"] for p in pairs if p["phenomenon"] == "agreement across an attractor"}
    singular = {p: s for s, p in plural.items()}
    forms = {f for c in cues for f in (c, plural.get(c), singular.get(c)) if f}
    check(not (leaks & forms) and len(attracted) > 50,
          f"no tested English head noun has an attractor in the training text ({len(attracted)} do; "
          f"seen but untested: {sorted(leaks)})")
    for s in L.LESSON_SENTENCES_KO + L.LESSON_SENTENCES_EN:
        check(s in lines, f"the lessons' sentence '{s}' is in the teaching text")


def tokenizer(mhaviz, tmp):
    try:
        import sentencepiece as spm
    except ImportError:
        print("skip: no sentencepiece module")
        return
    sp = spm.SentencePieceProcessor(model_file=TOKENIZER)
    pieces = sp.encode("고양이가 쥐를 잡았다", out_type=str)
    check(not any(p.startswith("<0x") for p in pieces) and any("쥐" in p for p in pieces),
          f"고양이가 쥐를 잡았다 has no byte pieces and 쥐 is in a piece: {pieces}")
    lines = shipped_lines()
    byte_lines = [l for l in lines[::13] if any(sp.is_byte(i) for i in sp.encode(l))]
    check(not byte_lines, f"no byte pieces in the teaching text (every 13th paragraph; {byte_lines[:2]})")
    with open(PAIRS, encoding="utf-8") as f:
        pairs = [json.loads(l) for l in f]
    byte_pairs = [p["good"] for p in pairs if any(sp.is_byte(i) for i in sp.encode(p["good"] + " " + p["bad"]))]
    check(not byte_pairs, f"no byte pieces in the minimal pairs ({byte_pairs[:2]})")
    # Word + particle: the particle is a piece of its own after a teaching noun.
    for s, want in (("고양이가 쥐를 잡았다", ["▁고양이", "가"]), ("책 세 권을 샀다", ["▁권", "을"])):
        got = sp.encode(s, out_type=str)
        check(any(got[i:i + 2] == want for i in range(len(got))), f"'{s}' has {want}: {got}")


if __name__ == "__main__":
    main([determinism, particles, held_out, tokenizer])
