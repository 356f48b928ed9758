#!/usr/bin/python3
"""How a language model writes on from 20 prompts (10 Korean, 10 English, none a sentence
of the training text): whether each continuation stays in the prompt's language and
whether it repeats itself, with `mhaviz generate`.

  stays     of the letters in the first 20 new pieces, at least 90 % are the prompt's
            script (Hangul syllables for a Korean prompt, Latin letters for an English one)
  repeats   the prompt and its continuation hold one sentence twice, or one run of 6
            pieces twice (a loop)

  /usr/bin/python3 scripts/generation_report.py build/app/mhaviz [--model M.npz]
      [--tokens 24] [--temperature 0.8 --seed 1] [--no-repeat 4] [--json out.json]
"""
import argparse
import json
import re
import subprocess
import sys

PROMPTS_KO = ["고양이가", "할머니께서", "옛날에", "민수는 어제", "우리 선생님께서", "아이들이 공원에서", "오늘 아침에",
              "강아지가 마당에서", "나는 시장에서", "부모님께서 서울로"]
PROMPTS_EN = ["The cat", "The dogs near the", "Once upon a time", "My sister", "The teacher", "Yesterday we",
              "The keys to the", "Tom has a", "The children", "In the morning"]
HANGUL = re.compile(r"[\uac00-\ud7a3]")
LATIN = re.compile(r"[A-Za-z]")
CONTROL = re.compile(r"^<(s|/s|unk|pad|0x[0-9A-Fa-f]{2})>$")


def script_share(text, korean):
    """The share of the text's letters in the prompt's script (1.0 for no letters)."""
    h, l = len(HANGUL.findall(text)), len(LATIN.findall(text))
    if h + l == 0:
        return 1.0
    return (h if korean else l) / (h + l)


def repeats(text, ids, run=6):
    sents = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip() and s.strip()[-1] in ".!?"]
    if len(set(sents)) < len(sents):
        return True
    seen = set()
    for i in range(len(ids) - run + 1):
        key = tuple(ids[i:i + run])
        if key in seen:
            return True
        seen.add(key)
    return False


def generate(mhaviz, model, prompt, tokens, extra):
    r = subprocess.run([mhaviz, "generate", "--model", model, "--prompt", prompt, "--tokens", str(tokens), "--json"]
                       + extra, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"generate {prompt!r}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def report(mhaviz, model="mhaviz-small", tokens=24, extra=(), prompts=None):
    """Per prompt: text, stays, repeats; and the totals."""
    rows = []
    for prompt in prompts or PROMPTS_KO + PROMPTS_EN:
        korean = bool(HANGUL.search(prompt))
        doc = generate(mhaviz, model, prompt, tokens, list(extra))
        # Control and byte pieces (<s>, <0xEA>) are no letters of either script.
        first = "".join(p for p in doc["pieces"][:20] if not CONTROL.match(p)).replace("\u2581", " ")
        share = script_share(first, korean)
        rows.append({"prompt": prompt, "korean": korean, "text": doc["text"], "share": round(share, 3),
                     "stays": share >= 0.9, "repeats": repeats(doc["text"], doc["ids"])})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mhaviz")
    ap.add_argument("--model", default="mhaviz-small")
    ap.add_argument("--tokens", type=int, default=24)
    ap.add_argument("--temperature")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--no-repeat")
    ap.add_argument("--json")
    args = ap.parse_args()
    extra = []
    if args.temperature:
        extra += ["--temperature", args.temperature, "--seed", args.seed]
    if args.no_repeat:
        extra += ["--no-repeat", args.no_repeat]
    rows = report(args.mhaviz, args.model, args.tokens, extra)
    for r in rows:
        flags = ("" if r["stays"] else " LEAVES") + (" REPEATS" if r["repeats"] else "")
        print(f"{r['share']:.2f}{flags:16} {r['text']}")
    left = sum(not r["stays"] for r in rows)
    rep = sum(r["repeats"] for r in rows)
    print(f"{left} of {len(rows)} leave the prompt's language; {rep} of {len(rows)} repeat a sentence or a run "
          f"of 6 pieces ({args.tokens} new pieces each{', ' + ' '.join(extra) if extra else ', greedy'})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"rows": rows, "leave": left, "repeat": rep, "flags": extra}, f, ensure_ascii=False, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
