"""The order of a training text's paragraphs: runs of one language.

mhaviz-small reads its text as one stream, a paragraph break (<s>) between paragraphs.
Shuffled paragraph by paragraph, the stream changes language at about half of its breaks,
and the model learns exactly that: after it ends a paragraph it goes on in either
language, so a class's Korean demo turns English. Real text is not written so: a page
stays in its language. language_runs keeps each language's paragraphs in the order given
and lays them out in runs of one language, of RUN paragraphs on average (a geometric
length), so the stream changes language at about one break in RUN.

Used by build_corpus.py (the real text) and make_teaching_corpus.py (the designed text).
"""
import random
import re

HANGUL = re.compile("[\uac00-\ud7a3]")
RUN = 8


def is_korean(paragraph):
    return HANGUL.search(paragraph) is not None


def language_runs(paragraphs, seed, run=RUN):
    """The same paragraphs, in runs of one language: Korean (any Hangul syllable) and the
    rest, each side in its given order. A run's language is drawn in proportion to what
    each side has left, so both end together; its length is geometric with mean `run`."""
    sides = [[p for p in paragraphs if is_korean(p)], [p for p in paragraphs if not is_korean(p)]]
    at = [0, 0]
    rng = random.Random(seed)
    out = []
    while at[0] < len(sides[0]) or at[1] < len(sides[1]):
        left = [len(sides[i]) - at[i] for i in (0, 1)]
        i = 0 if rng.random() * (left[0] + left[1]) < left[0] else 1
        n = 1
        while rng.random() > 1.0 / run:
            n += 1
        n = min(n, left[i])
        out.extend(sides[i][at[i]:at[i] + n])
        at[i] += n
    return out
