"""The designed teaching corpus: the generator is deterministic and reproduces the shipped
files, every Korean sentence passes an independent particle checker, the minimal pairs
are fair (each tests a combination of words the training text never has, made of word
forms it has; none a native reader would accept as "bad"; no pair sentence in the text),
and the shipped tokenizer spells the teaching text without byte pieces.

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
import teaching_lexicon_en as E  # noqa: E402

GEN = os.path.join(SCRIPTS, "make_teaching_corpus.py")
SHIPPED = os.path.join(ROOT, "assets", "corpus", "train-designed.txt.gz")
PAIRS = os.path.join(ROOT, "assets", "corpus", "pairs.jsonl")
TOKENIZER = os.path.join(ROOT, "assets", "models", "mhaviz-small.model")
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def generate(*args):
    return subprocess.run([sys.executable, GEN, *args], check=True, stdout=subprocess.PIPE).stdout


def checker_nouns():
    """Every Hangul word of the lexicon (nouns, names, places, classifiers, tools)."""
    nouns = {"나", "우리"}

    def walk(x):
        if isinstance(x, str):
            nouns.update(w for w in x.split() if HANGUL.search(w))
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(k)
                walk(v)
        elif isinstance(x, (list, tuple, set)):
            for v in x:
                walk(v)
    for name in dir(L):
        if name.isupper() and name != "FORMS":
            walk(getattr(L, name))
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
    # The shipped files are the command in the model card's (seed 1, 150,000 paragraphs).
    out = os.path.join(tmp, "gen")
    subprocess.run([sys.executable, GEN, "--out", out, "--lines", "150000", "--seed", "1"], check=True,
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
    pairs = read_pairs()
    good_ok = all(not korean_particles.check_sentence(p["good"], nouns)[0] for p in pairs
                  if p["phenomenon"].startswith("particle"))
    bad_caught = all(korean_particles.check_sentence(p["bad"], nouns)[0] for p in pairs
                     if p["phenomenon"].startswith("particle"))
    check(good_ok and bad_caught, "the particle pairs' good sentences pass the checker and their bad ones fail it")


def sentences_of(lines):
    return [s.strip() + "." for line in lines for s in line.split(".") if s.strip()]


def read_pairs():
    with open(PAIRS, encoding="utf-8") as f:
        return [json.loads(l) for l in f]


def held_out(mhaviz, tmp):
    """Fair pairs: each tests a combination the training text never has, made of word
    forms it does have, and none is a pair a native reader would accept."""
    lines = shipped_lines()
    sents = sentences_of(lines)
    words = {w.rstrip(".") for s in sents for w in s.split()}
    pairs = read_pairs()
    phen = {}
    for p in pairs:
        phen[p["phenomenon"]] = phen.get(p["phenomenon"], 0) + 1
    check(len(phen) == 8 and all(n == 200 for n in phen.values()), f"200 pairs for each of 8 phenomena: {phen}")
    inside = set(sents)
    leaked = [p["good"] for p in pairs if p["good"] in inside or p["bad"] in inside]
    check(not leaked, f"no sentence of a minimal pair is in the training text ({len(pairs)} pairs; {leaked[:3]})")

    # Every word form of a good sentence is read in training; so is every form of a bad
    # one but the wrong particle itself (no text has 토끼을).
    unread = [p["good"] for p in pairs if not all(w.rstrip(".") in words for w in p["good"].split())]
    check(not unread, f"every word of every good sentence is in the training text ({unread[:3]})")
    unread = [p["bad"] for p in pairs if not p["phenomenon"].startswith("particle") and
              not all(w.rstrip(".") in words for w in p["bad"].split())]
    check(not unread, f"every word of the honorific, classifier and agreement pairs' bad sentences is read "
          f"({unread[:3]})")

    # The combination each pair tests never shares a training sentence.
    by_words = {}
    for s in sents:
        for w in set(x.rstrip(".") for x in s.split()):
            by_words.setdefault(w, set()).add(s)

    def together(a, b):
        return by_words.get(a, set()) & by_words.get(b, set())

    seen = []
    for p in pairs:
        good = [w.rstrip(".") for w in p["good"].split()]
        ph = p["phenomenon"]
        if ph.startswith("particle"):
            n = len(p["prefix"].split())
            tested = good[n - 1]
            if ph == "particle 과/와":  # "A와 B가": the two nouns side by side
                other = good[n]
                if any(f" {tested} {other} " in f" {s[:-1]} " for s in together(tested, other)):
                    seen.append((ph, tested, other))
            elif together(tested, good[-1]):
                seen.append((ph, tested, good[-1]))
        elif ph == "honorific agreement":
            if together(p["cue"], good[-1]):
                seen.append((ph, p["cue"], good[-1]))
        elif ph == "numeral classifier":
            n = len(p["prefix"].split())
            noun, num = good[n - 2], good[n - 1]
            if any(f" {noun} {num} " in f" {s} " for s in by_words.get(noun, ())):
                seen.append((ph, noun, num))
    check(not seen, f"no Korean pair's combination is in a training sentence ({len(seen)}: {seen[:4]})")
    plural = {s: pl for c in (E.ANIMALS, E.PEOPLE, E.FOOD, E.THINGS) for s, pl in c.items()}
    seen = []
    for p in pairs:
        if p["phenomenon"] != "agreement across an attractor":
            continue
        head, attractor = p["held_out"].split(" + ")
        for h in (head, plural[head]):
            for s in by_words.get(h, ()):
                if s.startswith("The ") and {attractor, plural[attractor]} & {w.rstrip(".") for w in s.split()}:
                    seen.append((head, attractor, s))
    check(not seen, f"no English head noun shares a training sentence with its pair's attractor ({seen[:3]})")
    opposite = [p["good"] for p in pairs if p["phenomenon"] == "agreement across an attractor" and
                (p["cue"] == plural.get(p["held_out"].split(" + ")[0])) ==
                (f" {plural[p['held_out'].split(' + ')[1]]} " in " " + p["good"].replace(".", " ") + " ")]
    check(not opposite, f"every English pair's attractor has the other number ({opposite[:3]})")

    # None a native reader would accept as "bad".
    elders = [p["good"] for p in pairs if p["phenomenon"] == "honorific agreement" and
              any(p["cue"].startswith(e) for e in ("삼촌", "아주머니", "이웃", "아저씨", "이모", "사촌"))]
    check(not elders, f"no honorific pair has a grown-up one may well not honour as its subject ({elders[:3]})")
    gae = [p["bad"] for p in pairs if p["phenomenon"] == "numeral classifier" and
           p["bad"][len(p["prefix"]):].startswith("개")]
    check(not gae, f"no classifier pair has 개 as its wrong classifier ({gae[:3]})")
    family = set(L.ANIMALS) | set(L.FLOWERS) | set(L.TREES) | set(L.FOOD["fruit"]) | set(L.FOOD["veg"])
    gwa = [p["bad"] for p in pairs if p["phenomenon"] == "particle 과/와" and
           p["bad"].split()[len(p["prefix"].split()) - 1] == p["cue"] + "과" and p["cue"] in family]
    check(not gwa, f"no 과/와 pair's bad form is a family or department name (고양이과) ({gwa[:3]})")
    for s in L.LESSON_SENTENCES_KO + E.LESSON_SENTENCES_EN:
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
