#!/usr/bin/python3
"""Writes mhaviz-small's designed teaching corpus and its minimal pairs.

The corpus is designed, not found: Korean and English sentences and short stories
(animals, family, school, food, shops, places, weather) built by a program from word
lists (teaching_lexicon.py, teaching_lexicon_en.py) and a grammar of meaning
(teaching_ko.py, teaching_ko_story.py, teaching_en.py), so that a small model has to
learn what the course wants its heads to show:
  - Korean particle allomorphy (이/가, 을/를, 은/는, 과/와, (으)로);
  - honorific agreement (할머니께서 ... 주무신다 / 아이가 ... 잔다), the subject several
    words, or a sentence, before the verb;
  - numeral classifiers (고양이 두 마리, 책 세 권) with native numerals;
  - English subject-verb agreement across an attractor (The keys to the old cabinet are;
    The dog that the children feed is);
  - stories whose protagonist and objects come back (induction).
Its sentences mean what they say: buying happens in shops, animals eat their own food,
the protagonist of a story is known after its first sentence (는, or dropped), time runs
forward, and no sentence is written more than --cap times. The paragraphs come in runs of
one language (corpus_order.py), so the stream changes language at few paragraph breaks.

The minimal pairs (pairs.jsonl, teaching_pairs.py) test combinations of words held out of
the training text, made of word forms it has; no sentence of a pair is in it.

The same --seed always gives the same bytes:
  /usr/bin/python3 scripts/make_teaching_corpus.py --out assets/corpus --seed 1
writes assets/corpus/train-designed.txt.gz and assets/corpus/pairs.jsonl.
"""
import argparse
import collections
import gzip
import hashlib
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus_order  # noqa: E402
import teaching_lexicon as L  # noqa: E402
import teaching_lexicon_en as E  # noqa: E402
import teaching_pairs  # noqa: E402
from teaching_en import En, noun_keys  # noqa: E402
from teaching_ko import Ko  # noqa: E402
from teaching_ko_story import KoStory  # noqa: E402

LESSONS = L.LESSON_SENTENCES_KO + E.LESSON_SENTENCES_EN
# The share of each kind of paragraph.
MIX = (("ko sentence", 0.36), ("ko story", 0.24), ("en sentence", 0.30), ("en story", 0.10))


def split_sentences(para):
    parts, cur = [], ""
    for ch in para:
        cur += ch
        if ch == ".":
            parts.append(cur.strip())
            cur = ""
    if cur.strip():
        parts.append(cur.strip())
    return parts


def make_corpus(seed, lines, held, banned, cap):
    """`lines` paragraphs, none with a held-out combination or a banned sentence, no
    sentence more than `cap` times; the lessons' sentences evenly spread, `cap` times at most."""
    rng = random.Random(seed)
    ko, en = Ko(rng), En(rng)
    makers = {"ko sentence": ko.sentence, "ko story": KoStory(ko).story, "en sentence": en.sentence,
              "en story": en.story}
    copies = collections.Counter()
    ko.copies, ko.cap = copies, cap
    en.copies, en.cap = copies, cap
    reserved = set(LESSONS)
    out = []
    every = max(997, lines // (cap * len(LESSONS)) + 1)
    while len(out) < lines:
        if len(out) % every == 0:
            out.append(LESSONS[(len(out) // every) % len(LESSONS)])
            continue
        r = rng.random()
        for kind, p in MIX:
            if r < p:
                break
            r -= p
        made = makers[kind]()
        if made is None:
            continue
        para, keys = made
        if kind.startswith("en"):
            keys = keys | noun_keys(para)
        if {teaching_pairs.same_verb(k) for k in keys} & held:
            continue
        sents = split_sentences(para)
        if any(s in banned or s in reserved or copies[s] >= cap for s in sents):
            continue
        copies.update(sents)
        out.append(para)
    return out


def write_atomic(path, data, compress=False):
    tmp = path + ".tmp"
    with open(tmp, "wb") as raw:
        if compress:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f:
                f.write(data)
        else:
            raw.write(data)
    os.replace(tmp, path)


def flat(pair):
    """A pair as `mhaviz pairs` reads it: every value a string (its reader refuses nested
    arrays and objects), so the held-out words are one "A + B" string."""
    return {k: " + ".join(v) if isinstance(v, (list, tuple)) else v for k, v in pair.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="directory for train-designed.txt.gz and pairs.jsonl")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lines", type=int, default=150000, help="paragraphs of training text")
    ap.add_argument("--pairs", type=int, default=200, help="minimal pairs per phenomenon")
    ap.add_argument("--cap", type=int, default=10, help="copies of one sentence at most")
    ap.add_argument("--print", action="store_true", help="write the training text to stdout instead")
    args = ap.parse_args()
    if args.lines < 1 or args.pairs < 1 or args.cap < 1:
        ap.error("--lines, --pairs and --cap must be at least 1")
    candidates, held = teaching_pairs.candidate_pairs(args.seed, args.pairs)
    banned = {p["good"] for p in candidates} | {p["bad"] for p in candidates}
    # In runs of one language, as real text is (corpus_order.py): after a paragraph the
    # model should go on in the language it was writing.
    corpus = corpus_order.language_runs(make_corpus(args.seed, args.lines, held, banned, args.cap), args.seed)
    words = {w.rstrip(".") for para in corpus for w in para.split()}
    # Only pairs mhaviz-small's tokenizer lets the model read the cue in before the forms part.
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                            "assets", "models", "mhaviz-small.model"))
    pairs = teaching_pairs.fair(candidates, words, args.pairs, teaching_pairs.cue_before_form(sp))
    text = ("\n".join(corpus) + "\n").encode("utf-8")
    if args.print:
        sys.stdout.buffer.write(text)
        return
    if not args.out:
        ap.error("give --out DIR or --print")
    os.makedirs(args.out, exist_ok=True)
    write_atomic(os.path.join(args.out, "train-designed.txt.gz"), text, compress=True)
    pairs_text = "".join(json.dumps(flat(p), ensure_ascii=False, sort_keys=True) + "\n" for p in pairs).encode("utf-8")
    write_atomic(os.path.join(args.out, "pairs.jsonl"), pairs_text)
    count = collections.Counter(p["phenomenon"] for p in pairs)
    print(json.dumps({"paragraphs": len(corpus), "characters": sum(len(c) for c in corpus),
                      "train-designed.txt.sha256": hashlib.sha256(text).hexdigest(),
                      "pairs": dict(count), "pairs.jsonl.sha256": hashlib.sha256(pairs_text).hexdigest()},
                     ensure_ascii=False))


if __name__ == "__main__":
    main()
