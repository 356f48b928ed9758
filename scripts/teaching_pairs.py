"""The minimal pairs of mhaviz-small (assets/corpus/pairs.jsonl), fair ones.

A pair tests a construction on a combination of words the training text never has, made
only of word forms the training text does have:
  - particles: a noun with a verb (or predicate, partner, destination) it never comes
    with; the noun + particle form itself is read elsewhere;
  - honorific agreement: a subject with a verb it never comes with; both of the verb's
    forms (읽으셨다, 읽었다) are read with other subjects;
  - numeral classifiers: a noun with a numeral it is never counted with (책 세 권 unseen,
    책 두 권 read);
  - English agreement across an attractor: a head noun with an attractor (or any other
    noun) it never shares a sentence with, the attractor of the other number.
The held-out combinations are chosen here, and the training text is generated without
them (make_teaching_corpus.py); a pair whose word forms the text turns out not to have
is dropped afterwards (`fair`).

Pairs a native reader would accept as "bad" are not made: no plain form after a grown-up
a speaker may well not honour (삼촌, 아주머니, 이웃); no 개 as the wrong classifier (said
of almost anything in speech), nor a near one; no 과/와 pair whose "bad" form is also a
word with the suffix -과 (고양이과, 장미과: a family, a department).
"""
import collections

import teaching_lexicon as L
import teaching_lexicon_en as E
from teaching_en import En
from teaching_ko import Ko, Subject, classifier_of, josa, wrong_josa

PHENOMENA = ["particle 을/를", "particle 이/가", "particle 은/는", "particle 과/와", "particle (으)로",
             "honorific agreement", "numeral classifier", "agreement across an attractor"]
# The lessons' sentences are in the training text as they are: their combinations stay in.
LESSON_KEYS = {("sv", "고양이", "잡다"), ("ov", "쥐", "잡다"), ("sv", "나", "보다"), ("ov", "영화", "보다"),
               ("and", "친구", "함께"), ("sv", "고양이", "좋아하다"), ("ov", "생선", "좋아하다"),
               ("agr", "cat", "mat"), ("agr", "key", "cabinet"), ("agr", "key", "table")}
# A noun + 과 that is also a word (a family, a department): not a fair "bad" form.
SUFFIX_GWA = set(L.ANIMALS) | set(L.FLOWERS) | set(L.TREES) | set(L.FOOD["fruit"]) | set(L.FOOD["veg"]) | \
    {"영어", "수학", "한국어", "미술", "음악"}
# Pairs made on one held-out combination: more for (으)로, whose places and verbs make
# fewer combinations, so that holding them out leaves every place + (으)로 form read.
# Combinations the stories are made of (going to school, buying, taking the bus, writing
# and sending a letter) are not held out: a held-out combination keeps every paragraph
# that has it out of the text, and these would take whole kinds of story with them.
CENTRAL_VERBS = {"sv": {"사다", "가다", "오다", "돌아오다", "타다", "있다", "팔다"},
                 "ov": {"사다", "타다", "쓰다", "보내다", "배우다", "먹다", "빌리다", "읽다", "구경하다"},
                 "ro": {"가다", "돌아오다"}}
CENTRAL_PLACES = {"집", "학교"}


def central(key):
    if key[0] == "ro" and key[1] in CENTRAL_PLACES:
        return True
    return key[2] in CENTRAL_VERBS.get(key[0], ())


PAIRS_PER_KEY = collections.defaultdict(lambda: 2, {"particle (으)로": 5})


def same_verb(key):
    """The key with 마시다 read as 먹다: both are 드신다 in the honorific, so holding out
    할머니 + 먹다 holds out 할머니 + 마시다 too."""
    if key[0] == "sv" and key[2] == "마시다":
        return key[:2] + ("먹다",)
    return key


def swap_word(text, old, new):
    """text with the one word `old` (a whole word, maybe before ".") replaced by `new`."""
    words = text[:-1].split(" ")
    hits = [i for i, w in enumerate(words) if w == old]
    if len(hits) != 1:
        return None
    words[hits[0]] = new
    return " ".join(words) + "."


class PairMaker:
    def __init__(self, rng):
        self.rng = rng
        self.ko, self.en = Ko(rng), En(rng)

    def pick(self, seq):
        return seq[self.rng.randrange(len(seq))]

    def particle(self, phenomenon, kind, noun, text, key):
        if noun in L.CLASSIFIER:  # 개가 is also the classifier's: 사과 두 개가
            return None
        good_word = josa(noun, kind)
        bad = swap_word(text, good_word, wrong_josa(noun, kind))
        if bad is None:
            return None
        prefix = text[:text.index(good_word) + len(noun)]
        return {"phenomenon": phenomenon, "prefix": prefix, "good": text, "bad": bad, "cue": noun,
                "held_out": list(key[1:])}, key

    # ------------------------------------------------------------ Korean
    def obj(self):
        out = self.ko.transitive(self.ko.person())
        if out is None:
            return None
        text, keys = out
        key = next(k for k in keys if k[0] == "ov")
        return self.particle("particle 을/를", "obj", key[1], text, key)

    def subj(self):
        ko = self.ko
        r = self.rng.random()
        out = (ko.exist(ko.animal()) if r < 0.3 else ko.thing_place() if r < 0.5 else
               ko.intransitive(ko.animal()) if r < 0.7 else ko.describe())
        if out is None:
            return None
        text, keys = out
        key = next((k for k in keys if k[0] == "sv"), None)
        if key is None or josa(key[1], "subj") not in text.split(" ") + [w[:-1] for w in text.split(" ")]:
            return None
        return self.particle("particle 이/가", "subj", key[1], text, key)

    def top(self):
        ko = self.ko
        r = self.rng.random()
        out = (ko.describe() if r < 0.4 else ko.animal_likes() if r < 0.6 else
               ko.transitive(ko.person(("name", "person")), topic=True) if r < 0.8 else
               ko.intransitive(ko.animal(), topic=True))
        if out is None:
            return None
        text, keys = out
        key = next((k for k in keys if k[0] == "sv"), None)
        if key is None:
            return None
        return self.particle("particle 은/는", "top", key[1], text, key)

    def and_(self):
        ko = self.ko
        out = ko.coordination() if self.rng.random() < 0.5 else ko.object_pair()
        text, keys = out
        key = next(k for k in keys if k[0] == "and")
        a = key[1]
        if not josa(a, "and").endswith("과") and a in SUFFIX_GWA:
            return None
        return self.particle("particle 과/와", "and", a, text, key)

    def ro(self):
        ko = self.ko
        lemma = self.pick(["오다", "들어가다", "걸어가다", "뛰어가다"])
        out = ko.motion(ko.person(("name", "person", "honored")), lemma=lemma)
        text, keys = out
        key = next((k for k in keys if k[0] == "ro" and not k[1] in L.MEANS_NEAR and k[1] not in ("배", "기차", "비행기")),
                   None)
        if key is None:
            return None
        return self.particle("particle (으)로", "ro", key[1], text, key)

    def hon(self):
        ko = self.ko
        honored = self.rng.random() < 0.5
        if honored:
            subj = Subject(self.pick(L.HONORED), "honored")
        else:
            plain = [n for n in L.NAMES + L.CHILDREN if n not in L.ELDERS]
            subj = Subject(self.pick(plain), "name" if self.rng.random() < 0.5 else "person")
        r = self.rng.random()
        past = self.rng.random() < 0.5
        out = (ko.transitive(subj, past) if r < 0.5 else ko.intransitive(subj, past) if r < 0.7 else
               ko.motion(subj, past) if r < 0.85 else ko.purchase(subj, past))
        if out is None:
            return None
        text, keys = out
        if not text.startswith(subj.phrase()) and subj.phrase() not in text.split(" "):
            return None
        key = next(k for k in keys if k[0] == "sv" and k[1] == subj.noun)
        forms = L.FORMS[key[2]]
        good_form = text[:-1].split(" ")[-1]
        i = forms.index(good_form)
        bad_form = forms[(i + 2) % 4]
        if bad_form == good_form:
            return None
        bad = text[:-1].rsplit(" ", 1)[0] + " " + bad_form + "."
        prefix = text[:-1].rsplit(" ", 1)[0] + " "
        return {"phenomenon": "honorific agreement", "prefix": prefix, "good": text, "bad": bad,
                "cue": subj.phrase(), "held_out": [subj.noun, key[2]]}, key

    def cls(self):
        ko = self.ko
        cl = self.pick(list(L.CLASSIFIER))
        noun = self.pick(L.CLASSIFIER[cl])
        out = ko.counting(noun)
        if out is None:
            return None
        text, keys = out
        key = next((k for k in keys if k[0] == "cls"), None)
        if key is None:
            return None
        right = classifier_of(noun)
        wrong = self.pick([c for c in L.CLASSIFIER if c != right and c != "개" and c not in L.CLASSIFIER_NEAR[right]])
        phrase = f"{noun} {key[2]} "
        at = text.find(phrase + right)
        if at < 0:
            return None
        after = text[at + len(phrase) + len(right):]
        particle = after.split(" ")[0].rstrip(".")
        kind = {"이": "subj", "가": "subj", "을": "obj", "를": "obj"}.get(particle)
        if kind is None:
            return None
        bad = text[:at] + phrase + josa(wrong, kind) + after[len(particle):]
        return {"phenomenon": "numeral classifier", "prefix": text[:at] + phrase, "good": text, "bad": bad,
                "cue": noun, "held_out": [noun, key[2]]}, key

    # ------------------------------------------------------------ English
    def agree(self):
        en = self.en
        plural = self.rng.random() < 0.5
        out = en.agreement(plural=plural, a_plural=not plural)
        if out is None:
            return None
        subject, verb, rest, keys, attractor = out
        head = subject.split(" that ")[0].split(" who ")[0]
        head_noun = next(k[1] for k in keys)
        other = {"is": "are", "are": "is", "was": "were", "were": "was"}.get(verb)
        if other is None:
            sing = {s.split()[0]: p.split()[0] for c in E.VERB_PRED.values() for s, p in c}
            plur = {v: k for k, v in sing.items()}
            other = sing.get(verb) or plur.get(verb)
        if other is None:
            return None
        tail = (" " + rest if rest else "") + "."
        cue = E.ALL_NOUNS[head_noun] if plural else head_noun
        if f" {cue}" not in " " + head:
            return None
        return {"phenomenon": "agreement across an attractor", "prefix": subject + " ", "good": f"{subject} {verb}{tail}",
                "bad": f"{subject} {other}{tail}", "cue": cue, "held_out": [head_noun, attractor]}, \
            ("agr", head_noun, attractor)


def candidate_pairs(seed, per):
    """Per phenomenon, about 1.5 x `per` pairs on per / PAIRS_PER_KEY held-out combinations
    (the extra ones make up for pairs `fair` drops), and the set of held-out keys."""
    import random
    rng = random.Random(seed * 7919 + 11)
    maker = PairMaker(rng)
    makers = {"particle 을/를": maker.obj, "particle 이/가": maker.subj, "particle 은/는": maker.top,
              "particle 과/와": maker.and_, "particle (으)로": maker.ro, "honorific agreement": maker.hon,
              "numeral classifier": maker.cls, "agreement across an attractor": maker.agree}
    pairs, held = [], set()
    want = (per * 3) // 2
    for ph in PHENOMENA:
        by_key = collections.OrderedDict()
        seen = set()
        tries = 0
        while sum(len(v) for v in by_key.values()) < want and tries < want * 400:
            tries += 1
            out = makers[ph]()
            if out is None:
                continue
            pair, key = out
            if key in LESSON_KEYS or central(key) or pair["good"] in seen or pair["bad"] == pair["good"]:
                continue
            per_key = PAIRS_PER_KEY[ph]
            if key not in by_key:
                if len(by_key) >= (want + per_key - 1) // per_key:
                    continue
                by_key[key] = []
            if len(by_key[key]) >= per_key:
                continue
            seen.add(pair["good"])
            by_key[key].append(pair)
        for key, ps in by_key.items():
            held.add(same_verb(key))
            pairs += ps
    return pairs, held


def fair(pairs, corpus_words, per, readable=None):
    """The first `per` pairs of each phenomenon whose word forms the training text has
    (all of them but the particle pairs' wrong form, which no text has), and, with
    `readable`, that it accepts (cue_before_form: the model reads the cue before the two
    forms part)."""
    out, count = [], collections.Counter()
    for p in pairs:
        if count[p["phenomenon"]] >= per:
            continue
        if readable is not None and not readable(p):
            continue
        good = [w.rstrip(".") for w in p["good"].split()]
        bad = [w.rstrip(".") for w in p["bad"].split()]
        if not all(w in corpus_words for w in good):
            continue
        new = [w for w in bad if w not in good]
        if not p["phenomenon"].startswith("particle") and not all(w in corpus_words for w in new):
            continue
        out.append(p)
        count[p["phenomenon"]] += 1
    return out


def cue_before_form(sp):
    """A test for `fair`: whether, in the tokenizer `sp`'s pieces, a piece of the cue
    comes before the first piece where the good and the bad sentence differ, as `mhaviz
    pairs` requires. A noun and its particle can be one piece (▁형은 against ▁형 는):
    then the model would choose the form before it has read the cue."""
    def readable(p):
        good, bad = [sp.bos_id()] + sp.encode(p["good"]), [sp.bos_id()] + sp.encode(p["bad"])
        k = 0
        while k < min(len(good), len(bad)) and good[k] == bad[k]:
            k += 1
        # The cue's bytes in " " + good (the tokenizer's dummy prefix), as mhaviz finds them.
        begin = len(p["good"][:p["good"].find(p["cue"])].encode("utf-8")) + 1
        end = begin + len(p["cue"].encode("utf-8"))
        offset, first = 0, None
        for i in range(1, len(good)):
            piece = sp.id_to_piece(good[i])
            n = 1 if sp.is_byte(good[i]) else len(piece.replace("\u2581", " ").encode("utf-8"))
            lo = offset + (1 if piece.startswith("\u2581") else 0)
            if lo < offset + n and lo < end and offset + n > begin:
                first = i
                break
            offset += n
        return first is not None and first <= k - 1
    return readable
