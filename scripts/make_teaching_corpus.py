#!/usr/bin/python3
"""Writes mhaviz-small's designed teaching corpus and its minimal-pair test set.

The corpus is designed, not found: simple Korean and English sentences and short stories
(animals, family, school, food, places, weather) built from the word lists in
teaching_lexicon.py, so that a small model has to learn what the course wants its heads
to show:
  - Korean particle allomorphy (이/가, 을/를, 은/는, 과/와, (으)로), chosen by whether the
    noun's last syllable has a final consonant (ㄹ takes 로);
  - honorific agreement (할머니께서 ... 주무신다 vs 아이가 ... 잔다), the subject several
    words before the verb;
  - numeral classifiers (고양이 두 마리, 책 세 권) with native numerals;
  - English subject-verb agreement across an attractor (The keys to the old cabinet are);
  - names and objects that come back across a story's sentences (induction).

The minimal pairs (pairs.jsonl) are built from words held out of the construction they
test (teaching_lexicon.HELD_OUT_*), and no sentence of a pair is in the training text.

The same --seed always gives the same bytes:
  /usr/bin/python3 scripts/make_teaching_corpus.py --out assets/corpus --seed 1
writes assets/corpus/train-designed.txt.gz and assets/corpus/pairs.jsonl.
"""
import argparse
import gzip
import hashlib
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import teaching_lexicon as L  # noqa: E402


# ---------------------------------------------------------------- Korean forms

def final_consonant(word):
    """The index of the last Hangul syllable's final consonant (0: none, 8: ㄹ)."""
    code = ord(word[-1]) - 0xAC00
    if not 0 <= code < 11172:
        raise ValueError(f"{word!r} does not end in a Hangul syllable")
    return code % 28


def josa(word, kind):
    """word + the particle of that kind, in the allomorph its last syllable takes."""
    fc = final_consonant(word)
    if kind == "subj":
        return word + ("이" if fc else "가")
    if kind == "obj":
        return word + ("을" if fc else "를")
    if kind == "top":
        return word + ("은" if fc else "는")
    if kind == "and":
        return word + ("과" if fc else "와")
    if kind == "ro":
        return word + ("으로" if fc and fc != 8 else "로")
    raise ValueError(kind)


def wrong_josa(word, kind):
    """The allomorph the word does not take (for the minimal pairs)."""
    right = josa(word, kind)[len(word):]
    other = {"이": "가", "가": "이", "을": "를", "를": "을", "은": "는", "는": "은", "과": "와", "와": "과",
             "으로": "로", "로": "으로"}[right]
    return word + other


def nouns(cat):
    return L.KO_NOUNS[cat].split()


ANIMATE_CATS = ("animal", "person")
PLAIN_VERBS_ANIMAL = ["먹다", "마시다", "잡다", "좋아하다", "찾다", "보다"]
# What an animal eats, drinks, likes, looks for or looks at (a sparrow does not like music).
ANIMAL_OBJECTS = {"먹다": ["food"], "마시다": ["drink:물", "drink:우유"], "좋아하다": ["food", "animal"],
                  "찾다": ["food", "thing:공"], "보다": ["animal"], "잡다": None}
# Verbs that take neither a place nor a manner adverb here.
STATIVE = {"좋아하다", "기다리다"}
OUTDOOR = ["서울", "부산", "마을", "시골", "산", "바다", "숲", "들판", "도시", "섬", "공원"]
TOWNS = ["서울", "부산", "마을", "시골", "도시", "섬", "아파트"]


class Ko:
    """Korean sentences. Every choice goes through self.rng, so a seed fixes the text."""

    def __init__(self, rng, training=True):
        self.rng = rng
        self.training = training

    def pick(self, seq):
        return seq[self.rng.randrange(len(seq))]

    # -- noun phrases
    def noun(self, cat, exclude=()):
        while True:
            w = self.pick(nouns(cat))
            if w not in exclude:
                return w

    def subject(self, cat=None, noun=None, topic=False, det=None):
        """(phrase, honored, noun) for a subject: honored people take 께서 and -(으)시-."""
        if noun is None:
            cat = cat or self.pick(["animal", "animal", "person", "person", "honored", "honored", "name", "pronoun"])
            if cat == "name":
                noun = self.pick(L.KO_NAMES)
            elif cat == "pronoun":
                return (self.pick(["나는", "우리는", "내가", "우리가"]) if not topic else
                        self.pick(["나는", "우리는"])), False, None
            else:
                excl = L.HELD_OUT_TOPIC if topic else L.HELD_OUT_SUBJECT
                noun = self.noun(cat, excl)
        honored = noun in nouns("honored")
        if honored:
            return noun + ("께서는" if topic else "께서"), True, noun
        det = "" if noun in L.KO_NAMES else (self.pick(L.KO_DET) if det is None else det)
        return det + josa(noun, "top" if topic else "subj"), False, noun

    def obj(self, spec):
        """An object noun for a verb's object spec ("food" or "food:빵"), never held out of 을/를."""
        cat, _, word = spec.partition(":")
        if word:
            if word in L.HELD_OUT_OBJECT:
                return None
            return word
        if cat == "person":
            return self.noun("person", L.HELD_OUT_OBJECT)
        return self.noun(cat, L.HELD_OUT_OBJECT)

    def verb(self, forms, honored, past, dict_form=None):
        if honored and dict_form in L.HELD_OUT_HONORIFIC and self.training:
            raise AssertionError("a held-out honorific verb in the training text")
        return forms[(2 if honored else 0) + (1 if past else 0)]

    def time(self, past):
        return self.pick(L.KO_TIME_PAST if past else L.KO_TIME_PRESENT)

    def place(self, exclude=()):
        return self.noun("place", exclude)

    # -- sentences (each ends with a full stop)
    def transitive(self, subj=None, obj_noun=None, past=None):
        past = self.rng.random() < 0.5 if past is None else past
        s_phrase, honored, s_noun = subj or self.subject()
        animal = s_noun in nouns("animal")
        for _ in range(100):
            v = self.pick(PLAIN_VERBS_ANIMAL if animal else list(L.KO_VERBS))
            forms, specs = L.KO_VERBS[v]
            if not specs or (honored and v in L.HELD_OUT_HONORIFIC):
                continue
            if obj_noun is not None:
                if not any(self.fits(obj_noun, sp) for sp in specs):
                    continue
                o = obj_noun
            else:
                o = self.obj(self.pick(specs))
            if animal and ANIMAL_OBJECTS[v] is not None and not any(self.fits(o, sp) for sp in ANIMAL_OBJECTS[v]):
                if obj_noun is not None:
                    continue
                o = self.obj(self.pick(ANIMAL_OBJECTS[v]))
            if o is None or o == s_noun:
                continue
            if animal and v == "잡다" and o == "공" and s_noun not in ("고양이", "강아지", "개"):
                continue
            break
        else:
            return None
        words = [s_phrase]
        r = self.rng.random()
        if r < 0.35:
            words.insert(0 if self.rng.random() < 0.5 else 1, self.time(past))
        if not animal and s_noun is not None and self.rng.random() < 0.12 and v not in STATIVE:
            mate = self.pick(L.KO_NAMES + nouns("person"))
            if mate != s_noun and mate not in L.HELD_OUT_AND:
                words.append(josa(mate, "and") + " 함께")
        if self.rng.random() < 0.35 and v not in STATIVE:
            words.append(self.place() + "에서")
        words.append(josa(o, "obj"))
        if self.rng.random() < 0.2 and v not in STATIVE:
            words.append(self.pick(L.KO_FOOD_ADVERB if v in ("먹다", "마시다") else L.KO_ADVERB))
        words.append(self.verb(forms, honored, past, v))
        return " ".join(words) + "."

    def fits(self, noun, spec):
        cat, _, word = spec.partition(":")
        return noun == word if word else noun in nouns(cat)

    def intransitive(self, subj=None, past=None):
        past = self.rng.random() < 0.5 if past is None else past
        s_phrase, honored, s_noun = subj or self.subject()
        animal = s_noun in nouns("animal")
        pool = [v for v, (_, sp) in L.KO_VERBS.items() if sp is None]
        if animal:
            pool = [v for v in pool if v in ("자다", "놀다", "달리다", "쉬다", "울다")]
        v = self.pick(pool)
        words = [s_phrase]
        if self.rng.random() < 0.4:
            words.insert(0, self.time(past))
        if self.rng.random() < 0.5:
            words.append(self.place() + "에서")
        if self.rng.random() < 0.3:
            words.append(self.pick([a for a in L.KO_ADVERB if a != "함께"]))
        words.append(self.verb(L.KO_VERBS[v][0], honored, past, v))
        return " ".join(words) + "."

    def motion(self, subj=None, past=None):
        past = self.rng.random() < 0.5 if past is None else past
        s_phrase, honored, s_noun = subj or self.subject(self.pick(["person", "honored", "name", "animal"]))
        v = self.pick(list(L.KO_MOTION))
        words = [s_phrase]
        if self.rng.random() < 0.4:
            words.insert(0, self.time(past))
        if self.rng.random() < 0.25 and s_noun not in nouns("animal"):
            words.append(josa(self.pick(L.KO_MEANS), "ro"))
        if v == "이사하다":
            words.append(josa(self.pick(TOWNS), "ro"))
        elif self.rng.random() < 0.6:
            words.append(josa(self.place(L.HELD_OUT_RO), "ro"))
        else:
            words.append(self.place() + "에")
        words.append(self.verb(L.KO_MOTION[v], honored, past, v))
        return " ".join(words) + "."

    def exist(self, subj=None, past=None):
        past = self.rng.random() < 0.5 if past is None else past
        s_phrase, honored, _ = subj or self.subject(self.pick(["animal", "person", "honored", "name"]))
        words = [self.place() + "에", s_phrase] if self.rng.random() < 0.3 else [s_phrase, self.place() + "에"]
        words.append(self.verb(L.KO_EXIST, honored, past))
        return " ".join(words) + "."

    def counted(self, noun, num):
        cat = self.category(noun)
        return f"{noun} {num} {L.KO_CLASSIFIER[cat]}"

    def category(self, noun):
        for cat in L.KO_CLASSIFIER:
            if noun in nouns(cat):
                return cat
        return None

    def countable(self, exclude=L.HELD_OUT_CLASSIFIER):
        while True:
            cat = self.pick(list(L.KO_CLASSIFIER))
            pool = [n for n in nouns(cat) if n not in exclude and (cat != "food" or n in L.KO_COUNTABLE_FOOD)]
            if pool:
                return self.pick(pool)

    def counting(self, past=None, noun=None):
        """고양이 두 마리가 마당에 있다 / 민수가 시장에서 사과 세 개를 샀다."""
        past = self.rng.random() < 0.5 if past is None else past
        n = noun or self.countable()
        num = self.pick(L.KO_NUMERALS)
        phrase = self.counted(n, num)
        cat = self.category(n)
        r = self.rng.random()
        if r < 0.4:
            place = self.place()
            return " ".join([place + "에", josa(phrase, "subj"), self.verb(L.KO_EXIST, False, past)]) + "."
        s_phrase, honored, s_noun = self.subject(self.pick(["person", "honored", "name"]))
        verb = {"animal": "보다", "person": "만나다", "book": "읽다", "food": "사다", "drink": "마시다",
                "vehicle": "보다", "paper": "받다", "clothes": "사다", "pair": "사다", "flower": "받다",
                "tree": "심다", "pencil": "빌리다", "letter": "보내다", "house": "보다", "thing": "사다"}[cat]
        if r < 0.7 and cat not in ("person", "letter", "drink", "tree"):
            verb = "사다"
        if honored and verb in L.HELD_OUT_HONORIFIC:
            verb = "사다" if cat not in ("person", "tree") else "보다"
        words = [s_phrase]
        if self.rng.random() < 0.4:
            words.append(self.time(past))
        if self.rng.random() < 0.4:
            words.append(self.place() + "에서")
        words += [josa(phrase, "obj"), self.verb(L.KO_VERBS[verb][0], honored, past, verb)]
        return " ".join(words) + "."

    def coordination(self, past=None):
        """고양이와 개가 마당에서 논다."""
        past = self.rng.random() < 0.5 if past is None else past
        cat = self.pick(["animal", "person", "name"])
        if cat == "name":
            a, b = self.rng.sample(L.KO_NAMES, 2)
        else:
            a = self.noun(cat, L.HELD_OUT_AND)
            b = self.noun(cat, set(L.HELD_OUT_SUBJECT) | {a})
        v = self.pick(["놀다", "자다", "쉬다", "달리다"] if cat == "animal" else
                      ["놀다", "공부하다", "노래하다", "춤추다", "운동하다", "산책하다", "웃다"])
        words = [josa(a, "and"), josa(b, "subj")]
        if self.rng.random() < 0.5:
            words.append(self.place() + "에서")
        if self.rng.random() < 0.5:
            words.append("함께")
        words.append(L.KO_VERBS[v][0][1 if past else 0])
        if self.rng.random() < 0.3:
            words.insert(0, self.time(past))
        return " ".join(words) + "."

    def object_pair(self, past=None):
        """아이가 시장에서 사과와 배를 샀다: 과/와 between two objects."""
        past = self.rng.random() < 0.5 if past is None else past
        s_phrase, honored, _ = self.subject(self.pick(["person", "honored", "name"]))
        cat = self.pick(["food", "thing", "book", "flower"])
        a = self.noun(cat, L.HELD_OUT_AND)
        b = self.noun(cat, set(L.HELD_OUT_OBJECT) | {a})
        v = self.pick(["사다", "좋아하다"] + (["먹다"] if cat == "food" else []))
        words = [s_phrase]
        if self.rng.random() < 0.4:
            words.append(self.place() + "에서")
        words += [josa(a, "and"), josa(b, "obj"), self.verb(L.KO_VERBS[v][0], honored, past, v)]
        return " ".join(words) + "."

    def instrument(self, past=None):
        """아이가 연필로 그림을 그린다."""
        past = self.rng.random() < 0.5 if past is None else past
        s_phrase, honored, _ = self.subject(self.pick(["person", "honored", "name"]))
        v = self.pick([v for v in L.KO_INSTRUMENT if not (honored and v in L.HELD_OUT_HONORIFIC)] or ["먹다"])
        tool = self.pick(L.KO_INSTRUMENT[v])
        forms, specs = L.KO_VERBS[v]
        for _ in range(20):
            o = self.obj(self.pick(specs))
            if o:
                break
        words = [s_phrase, josa(tool, "ro"), josa(o, "obj"), self.verb(forms, honored, past, v)]
        return " ".join(words) + "."

    def topic(self, subj=None):
        """저 고양이는 생선을 좋아한다 / 할머니께서는 친절하시다."""
        s_phrase, honored, s_noun = subj or self.subject(self.pick(["animal", "person", "honored", "name"]),
                                                         topic=True)
        cat = "honored" if honored else ("animal" if s_noun in nouns("animal") else "person")
        if self.rng.random() < 0.5:
            return f"{s_phrase} {self.pick(L.KO_ADJ[cat])[0]}."
        food = self.noun("food", L.HELD_OUT_OBJECT)
        forms = L.KO_VERBS["좋아하다"][0]
        return f"{s_phrase} {josa(food, 'obj')} {self.verb(forms, honored, False, '좋아하다')}."

    def thing_topic(self):
        """수박은 정말 크다 / 가방이 책상 위에 있다: things and places as topics and subjects."""
        cat = self.pick(["food", "thing", "flower", "place"])
        n = self.noun(cat)
        adj = self.pick(L.KO_ADJ[cat])[0]
        if self.rng.random() < 0.5 and n not in L.HELD_OUT_TOPIC:
            return f"{josa(n, 'top')} {self.pick(['정말 ', '아주 ', ''])}{adj}."
        if n in L.HELD_OUT_SUBJECT:
            return None
        if cat in ("thing", "food") and self.rng.random() < 0.5:
            return f"{josa(n, 'subj')} {self.pick(['책상', '의자', '상자', '바구니', '식탁'])} 위에 있다."
        return f"{josa(n, 'subj')} {self.pick(['정말 ', '아주 ', ''])}{adj}."

    def weather(self, past=None):
        past = self.rng.random() < 0.5 if past is None else past
        forms = self.pick([("비가 온다", "비가 왔다"), ("눈이 온다", "눈이 왔다"), ("바람이 분다", "바람이 불었다"),
                           ("날씨가 맑다", "날씨가 맑았다"), ("날씨가 춥다", "날씨가 추웠다"),
                           ("날씨가 덥다", "날씨가 더웠다"), ("하늘이 파랗다", "하늘이 파랬다")])
        text = forms[1] if past else forms[0]
        if text[0] in "비눈" and self.rng.random() < 0.5:
            return f"{self.time(past)} {self.pick(OUTDOOR)}에 {text}."
        return f"{self.time(past)} {text}."

    def sentence(self):
        r = self.rng.random()
        for f, p in ((self.transitive, 0.30), (self.intransitive, 0.10), (self.motion, 0.10), (self.exist, 0.06),
                     (self.counting, 0.14), (self.coordination, 0.06), (self.object_pair, 0.04),
                     (self.instrument, 0.05), (self.topic, 0.07), (self.thing_topic, 0.05), (self.weather, 1.0)):
            if r < p:
                return f()
            r -= p
        return self.weather()

    def story(self):
        """2-4 sentences about one protagonist and one object that come back (induction)."""
        past = self.rng.random() < 0.6
        kind = self.pick(["name", "name", "animal", "honored", "person"])
        if kind == "name":
            noun = self.pick(L.KO_NAMES)
        else:
            noun = self.noun(kind, set(L.HELD_OUT_SUBJECT) | set(L.HELD_OUT_TOPIC) | set(L.HELD_OUT_OBJECT))
        out = []
        first = self.subject(noun=noun, topic=True, det="")
        later = self.subject(noun=noun, det="")
        animal = noun in nouns("animal")
        # the object that comes back
        if animal:
            v = self.pick(["먹다", "좋아하다", "잡다"] if noun in ("고양이", "강아지", "개") else ["먹다", "좋아하다"])
        else:
            v = self.pick(["먹다", "사다", "좋아하다", "찾다", "그리다", "키우다", "받다", "읽다", "만들다"])
            if first[1] and v in L.HELD_OUT_HONORIFIC:
                v = "사다"
        specs = L.KO_VERBS[v][1]
        obj = None
        while obj is None:
            obj = self.obj(self.pick(specs))
        out.append(self.transitive(first, obj, past=False if self.rng.random() < 0.5 else past))
        for _ in range(self.rng.randrange(1, 4)):
            r = self.rng.random()
            s = None
            if r < 0.4:
                s = self.transitive(later, obj, past=past)
            elif r < 0.6:
                s = self.motion(later, past=past) if not animal else self.intransitive(later, past=past)
            elif r < 0.75:
                s = self.intransitive(later, past=past)
            elif r < 0.9:
                s = self.exist(later, past=past)
            else:
                s = self.weather(past)
            if s:
                out.append(s)
        return " ".join(x for x in out if x)


# ---------------------------------------------------------------- English

def en_nouns(cat):
    return [tuple(x.split(":")) for x in L.EN_NOUNS[cat].split()]


EN_AGREE = {cat: [(s, p) for s, p in en_nouns(cat) if s != p] for cat in L.EN_NOUNS}


class En:
    def __init__(self, rng, training=True):
        self.rng = rng
        self.training = training

    def pick(self, seq):
        return seq[self.rng.randrange(len(seq))]

    def np(self, cat=None, plural=None, exclude=()):
        cat = cat or self.pick(["animal", "person", "thing", "food"])
        while True:
            s, p = self.pick(en_nouns(cat))
            if s not in exclude:
                break
        plural = self.rng.random() < 0.4 if plural is None else plural
        adj = self.pick(L.EN_ADJ) + " " if self.rng.random() < 0.3 and cat in ("thing", "food") else ""
        return f"the {adj}{p if plural else s}", plural, s, cat

    def simple(self, subj=None, past=None):
        past = self.rng.random() < 0.5 if past is None else past
        if subj is None:
            r = self.rng.random()
            if r < 0.3:
                name = self.pick(L.EN_NAMES)
                subj = (name, False, name, "person")
            else:
                subj = self.np(self.pick(["animal", "person"]))
        phrase, plural, noun, cat = subj
        for _ in range(50):
            v = self.pick(list(L.EN_VERBS))
            (third, pst), specs = L.EN_VERBS[v]
            if cat == "animal" and v not in ("sleep", "play", "run", "jump", "swim", "eat", "like", "see",
                                             "find", "catch", "chase", "rest", "walk"):
                continue
            break
        verb = pst if past else (v if plural else third)
        words = [phrase[0].upper() + phrase[1:], verb]
        if specs:
            spec = self.pick(specs)
            c, _, w = spec.partition(":")
            if w:
                words.append("the " + (self.pick(L.EN_ADJ) + " " if self.rng.random() < 0.3 and c == "thing" else "")
                             + w)
            else:
                words.append(self.np(c)[0])
        if self.rng.random() < 0.4:
            words.append(self.pick(["in", "near", "at"]) + " " + self.pick(L.EN_PLACES))
        if self.rng.random() < 0.2:
            words.append(self.pick(["yesterday", "this morning", "last week"]) if past else
                         self.pick(["every day", "every morning", "today", "now"]))
        return " ".join(words) + "."

    def agreement(self, head=None, plural=None, attractor_plural=None, past=None):
        """The keys to the old cabinet are on the table."""
        cat = self.pick(["animal", "person", "thing", "food"])
        if head is not None:
            cat = next(c for c in EN_AGREE if any(s == head for s, _ in EN_AGREE[c]))
        else:
            head = self.pick([s for s, _ in EN_AGREE[cat] if s not in L.HELD_OUT_AGREEMENT])
        hs, hp = next((s, p) for s, p in EN_AGREE[cat] if s == head)
        plural = self.rng.random() < 0.5 if plural is None else plural
        a_cat = self.pick(["thing", "thing", "thing", "animal", "person"] if cat in ("animal", "person") else
                          ["thing", "thing", "thing", "food"])
        a_s, a_p = self.pick([x for x in EN_AGREE[a_cat] if x[0] != hs])
        attractor_plural = (self.rng.random() < 0.5) if attractor_plural is None else attractor_plural
        prep = self.pick(L.EN_PREPS)
        adj = self.pick(L.EN_ADJ) + " " if self.rng.random() < 0.5 else ""
        past = self.rng.random() < 0.3 if past is None else past
        verb = ("were" if plural else "was") if past else ("are" if plural else "is")
        subject = f"The {hp if plural else hs} {prep} the {adj}{a_p if attractor_plural else a_s}"
        pred = self.pick(L.EN_PRED_BE[cat])
        return subject, verb, pred

    def agreement_sentence(self):
        r = self.rng.random()
        if r < 0.8:
            subject, verb, pred = self.agreement()
            return f"{subject} {verb} {pred}."
        # a lexical verb agreeing across the attractor
        cat = self.pick(["animal", "person"])
        hs, hp = self.pick([x for x in EN_AGREE[cat] if x[0] not in L.HELD_OUT_AGREEMENT])
        plural = self.rng.random() < 0.5
        a_s, a_p = self.pick(EN_AGREE["thing"])
        a_plural = self.rng.random() < 0.5
        v = self.pick(["sleep", "play", "like", "see", "run"] if cat == "animal" else ["like", "see", "help", "play"])
        (third, _), specs = L.EN_VERBS[v]
        obj = ""
        if specs:
            c, _, w = self.pick(specs).partition(":")
            obj = " the " + w if w else " " + self.np(c)[0]
        return (f"The {hp if plural else hs} {self.pick(['near', 'with', 'behind', 'by'])} the "
                f"{a_p if a_plural else a_s} {v if plural else third}{obj}.")

    def story(self):
        name = self.pick(L.EN_NAMES)
        s, p = self.pick(EN_AGREE["animal"] + EN_AGREE["thing"])
        pet = s in dict(EN_AGREE["animal"])
        out = [f"{name} has a {s}." if s[0] not in "aeiou" else f"{name} has an {s}."]
        past = self.rng.random() < 0.5
        for _ in range(self.rng.randrange(1, 4)):
            r = self.rng.random()
            if r < 0.3:
                out.append(self.simple((name, False, name, "person"), past))
            elif r < 0.6 and pet:
                out.append(self.simple((f"the {s}", False, s, "animal"), past))
            elif r < 0.8:
                verb = self.pick([("likes", "liked"), ("finds", "found"), ("holds", "held"), ("sees", "saw")])
                out.append(f"{name} {verb[1] if past else verb[0]} the {s} {self.pick(['again', 'every day', 'in the garden', 'at home'])}.")
            else:
                out.append(f"The {s} {'was' if past else 'is'} {self.pick(['very small', 'new', 'old', 'happy' if pet else 'red'])}.")
        return " ".join(out)

    def sentence(self):
        r = self.rng.random()
        if r < 0.45:
            return self.agreement_sentence()
        return self.simple()


# ---------------------------------------------------------------- minimal pairs

def make_pairs(seed, per_phenomenon):
    """BLiMP-style pairs from held-out words: {phenomenon, good, bad, prefix, cue}."""
    rng = random.Random(seed * 7919 + 11)
    ko, en = Ko(rng, training=False), En(rng, training=False)
    pairs = []
    seen = set()

    def add(ph, prefix, good_tail, bad_tail, cue):
        good, bad = prefix + good_tail, prefix + bad_tail
        if good in seen or good == bad:
            return False
        seen.add(good)
        pairs.append({"phenomenon": ph, "prefix": prefix, "good": good, "bad": bad, "cue": cue})
        return True

    def fill(ph, make):
        n, tries = 0, 0
        while n < per_phenomenon and tries < per_phenomenon * 50:
            tries += 1
            if make():
                n += 1

    # 을/를 on nouns never seen with it
    held_obj = sorted(L.HELD_OUT_OBJECT)

    def obj_pair():
        n = ko.pick(held_obj)
        cat = ko.category(n) or "animal"
        v = ko.pick(["보다", "좋아하다", "찾다", "그리다", "키우다"] if cat == "animal" else ["먹다", "사다", "좋아하다"])
        s_phrase, honored, _ = ko.subject(ko.pick(["person", "name", "honored"]))
        if honored and v in L.HELD_OUT_HONORIFIC:
            return False
        past = rng.random() < 0.5
        pre = s_phrase + " " + (ko.time(past) + " " if rng.random() < 0.4 else "")
        tail = " " + ko.verb(L.KO_VERBS[v][0], honored, past, v) + "."
        return add("particle 을/를", pre + n, josa(n, "obj")[len(n):] + tail, wrong_josa(n, "obj")[len(n):] + tail, n)
    fill("obj", obj_pair)

    held_subj = sorted(L.HELD_OUT_SUBJECT)

    def subj_pair():
        n = ko.pick(held_subj)
        cat = ko.category(n)
        pre = (ko.time(False) + " " if rng.random() < 0.3 else "")
        if cat not in L.KO_ADJ or (rng.random() < 0.5 and cat in ("thing", "food")):
            tail = f" {ko.pick(['책상', '의자', '상자', '식탁', '침대'])} 위에 있다."
        else:
            tail = f" {ko.pick(['정말 ', '아주 ', ''])}{ko.pick(L.KO_ADJ[cat])[0]}."
        return add("particle 이/가", pre + n, josa(n, "subj")[len(n):] + tail, wrong_josa(n, "subj")[len(n):] + tail, n)
    fill("subj", subj_pair)

    held_top = sorted(L.HELD_OUT_TOPIC)

    def top_pair():
        n = ko.pick(held_top)
        cat = ko.category(n)
        if cat == "animal":
            tail = " " + ko.pick([josa(ko.noun("food", L.HELD_OUT_OBJECT), "obj") + " 좋아한다.",
                                  ko.pick(L.KO_ADJ["animal"])[0] + ".", "마당에서 논다.", "방에서 잔다."])
        else:
            tail = " " + ko.pick(["정말 ", "아주 ", ""]) + ko.pick(L.KO_ADJ["food"])[0] + "."
        pre = ko.pick(L.KO_DET)
        return add("particle 은/는", pre + n, josa(n, "top")[len(n):] + tail, wrong_josa(n, "top")[len(n):] + tail, n)
    fill("top", top_pair)

    held_and = sorted(L.HELD_OUT_AND)

    def and_pair():
        n = ko.pick(held_and)
        cat = ko.category(n) or "animal"
        if cat == "animal":
            b = ko.noun("animal", set(L.HELD_OUT_SUBJECT) | {n})
            tail = f" {josa(b, 'subj')} {ko.pick(['마당에서 ', '함께 ', ''])}{ko.pick(['논다', '잔다', '쉰다'])}."
            pre = ""
        else:
            b = ko.noun("food", set(L.HELD_OUT_OBJECT) | {n})
            s_phrase, honored, _ = ko.subject(ko.pick(["person", "name"]))
            tail = f" {josa(b, 'obj')} {ko.pick(['샀다', '먹었다', '좋아한다'])}."
            pre = s_phrase + " "
        return add("particle 과/와", pre + n, josa(n, "and")[len(n):] + tail, wrong_josa(n, "and")[len(n):] + tail, n)
    fill("and", and_pair)

    held_ro = sorted(L.HELD_OUT_RO)

    def ro_pair():
        n = ko.pick(held_ro)
        s_phrase, honored, _ = ko.subject(ko.pick(["person", "name", "honored"]))
        past = rng.random() < 0.5
        v = ko.pick(["가다", "오다", "돌아오다", "들어가다", "걸어가다", "뛰어가다"])
        pre = s_phrase + " " + (ko.time(past) + " " if rng.random() < 0.4 else "")
        tail = " " + ko.verb(L.KO_MOTION[v], honored, past, v) + "."
        return add("particle (으)로", pre + n, josa(n, "ro")[len(n):] + tail, wrong_josa(n, "ro")[len(n):] + tail, n)
    fill("ro", ro_pair)

    # honorific agreement on verbs never seen in an honorific form
    held_hon = sorted(L.HELD_OUT_HONORIFIC)

    def hon_pair():
        v = ko.pick(held_hon)
        forms, specs = L.KO_VERBS[v]
        honored = rng.random() < 0.5
        s_phrase, _, _ = ko.subject("honored" if honored else ko.pick(["person", "name"]))
        if s_phrase.startswith(("나", "우리", "내")):
            return False
        past = rng.random() < 0.5
        o = None
        while o is None:
            o = ko.obj(ko.pick(specs))
        mid = []
        if rng.random() < 0.6:
            mid.append(ko.time(past))
        if rng.random() < 0.6:
            mid.append(ko.place() + "에서")
        mid.append(josa(o, "obj"))
        pre = " ".join([s_phrase] + mid) + " "
        good = forms[(2 if honored else 0) + past]
        bad = forms[(0 if honored else 2) + past]
        return add("honorific agreement", pre, good + ".", bad + ".", s_phrase)
    fill("hon", hon_pair)

    # classifiers on nouns never counted in the training text
    held_cls = sorted(n for n in L.HELD_OUT_CLASSIFIER)
    classifiers = sorted(set(L.KO_CLASSIFIER.values()))

    def cls_pair():
        n = ko.pick(held_cls)
        cat = ko.category(n)
        right = L.KO_CLASSIFIER[cat]
        wrong = ko.pick([c for c in classifiers if c != right])
        num = ko.pick(L.KO_NUMERALS)
        if rng.random() < 0.5:
            pre = f"{ko.place()}에 {n} {num} "
            return add("numeral classifier", pre, josa(right, "subj") + " 있다.", josa(wrong, "subj") + " 있다.", n)
        s_phrase, honored, _ = ko.subject(ko.pick(["person", "name"]))
        pre = f"{s_phrase} {n} {num} "
        v = {"person": "만났다", "animal": "봤다", "tree": "봤다", "house": "봤다"}.get(cat, "샀다")
        return add("numeral classifier", pre, josa(right, "obj") + " " + v + ".", josa(wrong, "obj") + " " + v + ".", n)
    fill("cls", cls_pair)

    # English agreement across an attractor of the other number, head nouns never seen with one
    held_agree = sorted(L.HELD_OUT_AGREEMENT)

    def agree_pair():
        head = en.pick(held_agree)
        plural = rng.random() < 0.5
        subject, verb, pred = en.agreement(head=head, plural=plural, attractor_plural=not plural)
        wrong = {"is": "are", "are": "is", "was": "were", "were": "was"}[verb]
        cue = subject.split()[1]
        return add("agreement across an attractor", subject + " ", f"{verb} {pred}.", f"{wrong} {pred}.", cue)
    fill("agree", agree_pair)
    return pairs


# ---------------------------------------------------------------- the corpus

def make_corpus(seed, lines, banned):
    """`lines` paragraphs: Korean and English sentences and stories, none in `banned`."""
    rng = random.Random(seed)
    ko, en = Ko(rng), En(rng)
    out = []
    lessons = L.LESSON_SENTENCES_KO + L.LESSON_SENTENCES_EN
    while len(out) < lines:
        r = rng.random()
        if len(out) % 997 == 0:
            para = lessons[(len(out) // 997) % len(lessons)]
        elif r < 0.38:
            para = ko.sentence()
        elif r < 0.62:
            para = ko.story()
        elif r < 0.86:
            para = en.sentence()
        else:
            para = en.story()
        if not para or any(s in banned for s in split_sentences(para)):
            continue
        out.append(para)
    return out


def leaked(pair, corpus, _cache={}):
    """Whether the training text has the form a pair tests on its held-out word after all
    (a word held out of one construction that another template still put there): such a
    pair would test memory, so it is dropped."""
    key = id(corpus)
    if key not in _cache:
        words, counted, attracted = set(), set(), set()
        numerals, preps = set(L.KO_NUMERALS), set(L.EN_PREPS) | {"next"}
        for para in corpus:
            ws = [w.rstrip(".") for w in para.split()]
            words.update(ws)
            counted.update(a for a, b in zip(ws, ws[1:]) if b in numerals)
            attracted.update(b for a, b, c in zip(ws, ws[1:], ws[2:]) if a == "The" and c in preps)
        _cache.clear()
        _cache[key] = (words, counted, attracted)
    words, counted, attracted = _cache[key]
    ph, cue = pair["phenomenon"], pair["cue"]
    if ph.startswith("particle"):
        good_word = pair["good"][len(pair["prefix"]) - len(cue):].split()[0].rstrip(".")
        return good_word in words
    if ph == "honorific agreement":
        return any(w in words for w in pair["good"][len(pair["prefix"]):].split()
                   if w.rstrip(".") in {f for v in L.HELD_OUT_HONORIFIC for f in L.KO_VERBS[v][0][2:]})
    if ph == "numeral classifier":
        return cue in counted
    if ph == "agreement across an attractor":
        forms = next({s, p} for c in L.EN_NOUNS.values() for s, p in (x.split(":") for x in c.split())
                     if cue in (s, p))
        return bool(forms & attracted)
    return False


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


def write_gzip(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f:
            f.write(data)
    os.replace(tmp, path)


def write_text(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="directory for train-designed.txt.gz and pairs.jsonl")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lines", type=int, default=200000, help="paragraphs of training text")
    ap.add_argument("--pairs", type=int, default=200, help="minimal pairs per phenomenon")
    ap.add_argument("--print", action="store_true", help="write the training text to stdout instead")
    args = ap.parse_args()
    if args.lines < 1 or args.pairs < 1:
        ap.error("--lines and --pairs must be at least 1")
    pairs = make_pairs(args.seed, args.pairs)
    banned = {p["good"] for p in pairs} | {p["bad"] for p in pairs}
    corpus = make_corpus(args.seed, args.lines, banned)
    pairs = [p for p in pairs if not leaked(p, corpus)]
    text = ("\n".join(corpus) + "\n").encode("utf-8")
    if args.print:
        sys.stdout.buffer.write(text)
        return
    if not args.out:
        ap.error("give --out DIR or --print")
    os.makedirs(args.out, exist_ok=True)
    write_gzip(os.path.join(args.out, "train-designed.txt.gz"), text)
    pairs_text = "".join(json.dumps(p, ensure_ascii=False, sort_keys=True) + "\n" for p in pairs).encode("utf-8")
    write_text(os.path.join(args.out, "pairs.jsonl"), pairs_text)
    print(json.dumps({"paragraphs": len(corpus), "characters": sum(len(c) for c in corpus),
                      "train-designed.txt.sha256": hashlib.sha256(text).hexdigest(),
                      "pairs": len(pairs), "pairs.jsonl.sha256": hashlib.sha256(pairs_text).hexdigest()}))


if __name__ == "__main__":
    main()
