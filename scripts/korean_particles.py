"""An independent checker of Korean particle allomorphy, for testing the teaching corpus.

It shares no code with the generator (scripts/make_teaching_corpus.py): the final
consonant is read from the canonical decomposition (NFD) of the noun's last syllable,
where a syllable with a final consonant (batchim) ends in a trailing jamo
U+11A8..U+11C2 (ㄹ is U+11AF), not from the generator's syllable arithmetic.

The rules:
  이 after a final consonant, 가 after a vowel        (subject)
  을 / 를                                            (object)
  은 / 는                                            (topic)
  과 / 와                                            (and, with)
  으로 after a final consonant other than ㄹ; 로 after a vowel or ㄹ   (direction, means)

check_sentence(sentence, nouns) returns the list of violations, each a
(word, expected, found) tuple, and the number of particles it checked.
"""
import unicodedata

TRAILING_FIRST, TRAILING_LAST, TRAILING_RIEUL = 0x11A8, 0x11C2, 0x11AF

# particle -> (kind, needs a final consonant?) ; 로 and 으로 are handled apart.
PAIRS = {"이": ("subject", True), "가": ("subject", False), "을": ("object", True), "를": ("object", False),
         "은": ("topic", True), "는": ("topic", False), "과": ("and", True), "와": ("and", False)}
OTHER = {"이": "가", "가": "이", "을": "를", "를": "을", "은": "는", "는": "은", "과": "와", "와": "과"}


def trailing_consonant(syllable):
    """The trailing jamo of a Hangul syllable's NFD form, or None."""
    jamo = unicodedata.normalize("NFD", syllable)
    last = ord(jamo[-1])
    return last if TRAILING_FIRST <= last <= TRAILING_LAST else None


def split(word, nouns):
    """(noun, particle) if word is a known noun (or noun + 들) followed by a particle."""
    for ending in ("으로", "로", "이", "가", "을", "를", "은", "는", "과", "와"):
        if word.endswith(ending) and len(word) > len(ending):
            stem = word[:-len(ending)]
            base = stem[:-1] if stem.endswith("들") and len(stem) > 1 else stem
            if stem in nouns or base in nouns:
                return stem, ending
    return None


def expected(stem, particle):
    tc = trailing_consonant(stem[-1])
    if particle in ("로", "으로"):
        return "로" if tc is None or tc == TRAILING_RIEUL else "으로"
    needs = PAIRS[particle][1]
    has = tc is not None
    return particle if has == needs else OTHER[particle]


def check_sentence(sentence, nouns):
    bad, checked = [], 0
    for raw in sentence.split():
        word = raw.rstrip(".,!?")
        hit = split(word, nouns)
        if hit is None:
            continue
        stem, particle = hit
        # 으로 ends in 로: the longer ending was tried first, so a stem ending in 으 is not split wrongly.
        checked += 1
        want = expected(stem, particle)
        if want != particle:
            bad.append((word, stem + want, word))
    return bad, checked
