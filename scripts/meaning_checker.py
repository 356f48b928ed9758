#!/usr/bin/python3
"""An independent checker of the teaching corpus's grammar of meaning.

scripts/korean_particles.py checks that every particle has the right form; this checks
what a native reader objects to in sentences whose particles are all right: a purchase
in a cave, a tiger eating a hamburger, "개나리는 빨갛다", a story that calls its known
hero 다은이 in every sentence, "at the room". Each error class is one function of a
sentence (or of a story) that returns how many times the class occurs there.

It shares nothing with the generator (scripts/make_teaching_corpus.py and its lexicon):
the word lists below are its own, written from what the words mean, so a category the
generator got wrong (a bus among the things people buy, 하늘 among the names) is caught
rather than copied.

  /usr/bin/python3 scripts/meaning_checker.py assets/corpus/train-designed.txt.gz
prints one JSON object: the count of each class, the share of repeated sentences, and a
few examples of each class found (--examples N).
"""
import argparse
import collections
import gzip
import json
import re
import sys

# ---------------------------------------------------------------- the checker's own words

KO_ANIMALS = set(
    "고양이 강아지 개 쥐 토끼 닭 오리 소 돼지 염소 호랑이 사자 곰 여우 늑대 원숭이 코끼리 기린 거북 물고기 "
    "개구리 나비 거미 다람쥐 펭귄 고래 사슴 참새 비둘기 까치 병아리 햄스터 앵무새 고슴도치 판다 낙타 하마 악어 "
    "얼룩말 부엉이 독수리 달팽이 개미 잠자리 너구리 두더지 수달 코알라 캥거루 표범 갈매기 제비 올빼미 메뚜기 "
    "잉어 말 양 새 거위 벌 꿀벌 물개 두꺼비 다람쥐 오소리 사마귀 금붕어".split())
# Animals a family keeps at home (키우다, 방, 거실).
KO_PETS = set("고양이 강아지 개 토끼 햄스터 앵무새 거북 물고기 금붕어 고슴도치 병아리".split())
# Buildings and rooms of people: no animal walks into a pharmacy.
KO_BUILDINGS = set(
    "학교 도서관 병원 교실 식당 카페 은행 우체국 극장 서점 빵집 꽃집 약국 호텔 미술관 박물관 체육관 교회 시청 "
    "회사 목욕탕 가게 역 공항 편의점 문구점 백화점 마트 슈퍼마켓 사무실 영화관".split())
# Where things are sold.
KO_SHOPS = set("시장 가게 빵집 서점 꽃집 약국 편의점 문구점 백화점 마트 슈퍼마켓 과일 가게 옷 가게 신발 가게 "
               "카페 식당 역 공항 매표소".split())
# Towns have shops somewhere: 서울에서 사과를 샀다 is fine.
KO_TOWNS = set("서울 부산 도시 마을 시내 읍내 동네".split())
# Dishes and drinks people make; animals eat what animals eat.
KO_HUMAN_FOOD = set(
    "국 김치 떡 과자 라면 국수 케이크 아이스크림 김밥 비빔밥 죽 수프 샐러드 피자 떡볶이 햄버거 쿠키 사탕 초콜릿 "
    "두부 만두 빵 커피 녹차 콜라 사이다 주스 홍차 코코아 식혜 보리차 두유 불고기 치킨 스파게티".split())
# What no one buys at a shop.
KO_BIG_VEHICLES = set("버스 시내버스 기차 비행기 지하철 전철 택시 트럭 배 케이블카 고속버스".split())
KO_MEANS = set("버스 시내버스 기차 비행기 지하철 전철 택시 트럭 배 케이블카 자동차 자전거 오토바이 차".split())
# Flowers' true colours (the adjective's stem: 노랗다 -> 노랗, 노래).
KO_FLOWER_COLOURS = {
    "개나리": {"노랗"}, "해바라기": {"노랗"}, "민들레": {"노랗", "하얗"}, "진달래": {"분홍", "빨갛"},
    "백합": {"하얗"}, "국화": {"노랗", "하얗"}, "코스모스": {"분홍", "하얗"}, "장미": {"빨갛", "하얗", "노랗", "분홍"},
    "튤립": {"빨갛", "노랗", "하얗", "분홍"}, "벚꽃": {"분홍", "하얗"}, "무궁화": {"분홍", "하얗"},
}
KO_COLOURS = {"빨갛": ("빨갛", "빨개", "빨간"), "노랗": ("노랗", "노래", "노란"), "하얗": ("하얗", "하얘", "하얀"),
              "파랗": ("파랗", "파래", "파란"), "까맣": ("까맣", "까매", "까만"), "분홍": ("분홍",)}
# Common nouns that read as the thing, not a person, when used as a name.
KO_NOUN_NAMES = set("하늘 태양 보람 나래 소라 바다 구름 이슬 새벽".split())
# What the sky, the sun, the sea ... do (하늘이 파랗다 is weather, not a person).
KO_NATURE_PREDICATES = ("파랗", "파랬", "맑", "많", "흐리", "흐렸", "어둡", "어두웠", "밝", "넓", "높", "뜬", "떴", "졌", "진다",
                        "깊", "푸르", "반짝", "예쁘", "예뻤", "아름답", "아름다웠", "흐른", "흘렀")
# Time expressions that name a moment or a habit: not said of liking or keeping (요즘 is).
KO_TIME_POINT = ["어제 저녁에", "오늘 아침에", "지난 주말에", "지난주에", "그저께", "어제", "아까", "오늘", "지금", "작년에",
                 "매일", "아침마다", "주말마다", "저녁마다", "날마다", "오늘 저녁에", "내일"]
KO_TIME_E = {w.split()[-1] for w in KO_TIME_POINT if w.endswith("에")} | {"옛날에", "주말에", "밤에", "낮에", "때에",
                                                                          "그다음에", "나중에", "처음에", "마지막에"}
KO_TIME_OK_WITH_STATE = {"요즘", "작년에"}
# Where a story's moments lie, earliest first (a story's time words must not run back).
KO_TIME_RANK = {"작년에": 0, "지난주에": 1, "지난 주말에": 2, "그저께": 3, "어제": 4, "어제 저녁에": 5, "오늘 아침에": 6,
                "아까": 7, "오늘": 7, "오늘 저녁에": 8, "지금": 8, "내일": 9}
KO_DETERMINERS = {"저", "그", "이", "우리", "한"}
# Instruments that do not do the job: (tool, object).
KO_BAD_INSTRUMENT = {
    ("연필", "이메일"), ("볼펜", "이메일"), ("만년필", "이메일"), ("색연필", "이메일"), ("붓", "이메일"),
    ("가위", "수박"), ("가위", "멜론"), ("가위", "케이크"), ("가위", "빵"), ("가위", "사과"),
    ("젓가락", "국"), ("젓가락", "수프"), ("젓가락", "죽"), ("젓가락", "아이스크림"), ("젓가락", "우유"),
    ("손", "국"), ("손", "수프"), ("손", "죽"), ("손", "라면"), ("손", "국수"), ("손", "아이스크림"), ("손", "비빔밥"),
    ("포크", "국"), ("포크", "수프"), ("포크", "죽"), ("숟가락", "국수"),
}
KO_TIME_WORDS_FIRST = {w.split()[0] for w in KO_TIME_POINT} | {"요즘", "옛날에", "그래서", "그리고", "그런데", "그다음에",
                                                               "그날", "나중에", "잠시", "곧"}

EN_ANIMALS = set(
    "cat dog mouse rabbit bird duck horse cow pig sheep goat tiger lion bear fox wolf monkey elephant giraffe "
    "turtle fish frog butterfly spider squirrel penguin whale deer owl bee puppy kitten hen donkey zebra camel "
    "hamster parrot goldfish".split())
EN_PEOPLE = set(
    "child boy girl man woman student teacher friend baby farmer doctor nurse cook singer painter driver "
    "neighbour sister brother uncle aunt player visitor mother father grandmother grandfather".split())
EN_PETS = set("cat dog puppy kitten rabbit bird fish turtle hamster parrot goldfish".split())
EN_PLURAL = {"mice": "mouse", "sheep": "sheep", "fish": "fish", "deer": "deer", "children": "child", "men": "man",
             "women": "woman", "wolves": "wolf", "leaves": "leaf", "shelves": "shelf", "knives": "knife",
             "geese": "goose", "feet": "foot", "teeth": "tooth", "people": "person"}
# Places one is "in", not "at", and the reverse.
EN_NOT_AT = set("room kitchen forest city garden yard classroom field village sea hill bedroom box bag basket".split())
EN_NOT_IN = set("beach hill".split())
# Head nouns that take "to the" and "of the" (the key to the cabinet, the picture of the dog).
EN_TO_HEADS = set("key door gate road way answer letter card gift present".split())
EN_OF_HEADS_ANY = set("picture photo map drawing painting story".split())
EN_OF_HEADS_ANIMATE = set("friend teacher owner mother father".split())
EN_OF_HEADS_THING = set("door lid leg window key top colour".split())
EN_THINGS = set(
    "key box ball bag hat book cup chair table lamp clock toy doll door window bottle pencil pen shoe sock coat "
    "umbrella basket letter picture map ring spoon plate bowl bicycle car bus train kite drawer shelf cabinet "
    "candle flower tree leaf stone photo card glass pillow blanket bucket bed jar pocket gate road gift present "
    "drawing painting story lid leg top".split())
EN_CONTAINERS = set("box bag basket drawer cup bowl bottle bucket cabinet car bus train glass pocket jar".split())
EN_FOOD = set("apple cake cookie egg banana orange pear potato carrot sandwich pie tomato peach plum lemon "
              "bread cheese grape strawberry".split())
EN_NOUNS = EN_ANIMALS | EN_PEOPLE | EN_THINGS | EN_FOOD
EN_HUMAN_FOOD = set("cake cookie sandwich pie bread pizza chocolate candy".split())
EN_FOOD_COLOURS = {"apple": {"red", "green", "yellow"}, "banana": {"yellow", "green"}, "lemon": {"yellow"},
                   "tomato": {"red", "green"}, "pear": {"yellow", "green"}, "plum": {"red"}, "orange": set(),
                   "peach": set(), "potato": set(), "carrot": set(), "egg": set(), "cake": set(), "cookie": set(),
                   "pie": set(), "sandwich": set(), "grape": {"green"}, "strawberry": {"red"}}
EN_COLOURS = set("red blue green yellow black white brown pink orange".split())
# What no apple or animal is: wooden, broken, ...
EN_NOT_FOOD_ADJ = set("wooden broken bright dark clean heavy".split())
EN_NOT_ANIMATE_ADJ = set("wooden broken bright dark clean heavy new red blue green yellow".split())
EN_ANIMAL_VERBS_INDOORS = re.compile(r"\b(?:in|at) the (?:library|school|classroom|shop|station|kitchen|room|house|"
                                     r"bank|museum|hospital|office|market)\b")

# ---------------------------------------------------------------- reading sentences

SENT = re.compile(r"[^.!?]+[.!?]")
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def sentences(paragraph):
    return [s.strip() for s in SENT.findall(paragraph)] or ([paragraph.strip()] if paragraph.strip() else [])


def words(sentence):
    return [w.strip(".,!?") for w in sentence.split()]


def is_korean(sentence):
    return bool(HANGUL.search(sentence))


SUBJECT_ENDINGS = ("께서는", "께서", "은", "는", "이", "가")


def ko_subject(ws):
    """(stem, particle) of the sentence's subject or topic, or None if it has none."""
    for w in ws:
        if w in KO_DETERMINERS or w in KO_TIME_WORDS_FIRST or w.endswith(("에", "에서", "마다")):
            continue
        for end in SUBJECT_ENDINGS:
            if w.endswith(end) and len(w) > len(end):
                stem = w[:-len(end)]
                # 이 and 가 end many words (아이, 고양이, 오이): take the stem only if it is one.
                return stem, end
        return None
    return None


def stem_of(word, endings):
    for end in endings:
        if word.endswith(end) and len(word) > len(end):
            return word[:-len(end)]
    return None


def ko_objects(ws):
    return [s for s in (stem_of(w, ("을", "를")) for w in ws) if s]


def ko_predicate(ws):
    return ws[-1] if ws else ""


def ko_times(sentence):
    """The time expressions of a Korean sentence, longest first, in order."""
    found, text = [], " " + sentence.rstrip(".") + " "
    for t in sorted(KO_TIME_POINT + ["요즘"], key=len, reverse=True):
        at = text.find(" " + t + " ")
        while at >= 0:
            found.append((at, t))
            text = text[:at] + " " + "_" * len(t) + text[at + len(t) + 1:]
            at = text.find(" " + t + " ")
    return [t for _, t in sorted(found)]


def verb_is(pred, *stems):
    return pred.startswith(stems)


BUY = ("산다", "샀다", "사신다", "사셨다", "사요", "샀어요", "판다", "팔았다", "파신다", "파셨다", "팔아요")
EAT = ("먹는다", "먹었다", "드신다", "드셨다", "마신다", "마셨다", "좋아한다", "좋아했다", "좋아하신다", "좋아하셨다")
LIKE_OR_KEEP = ("좋아하", "좋아했", "싫어하", "싫어했", "사랑하", "사랑했", "키운다", "키웠", "키우신", "키우셨")

# ---------------------------------------------------------------- the error classes (Korean)


def ko_sentence_errors(s, hero=None):
    """Counts per class for one Korean sentence; `hero` is the story's protagonist, who
    is the subject of a sentence that drops it."""
    ws = words(s)
    out = collections.Counter()
    pred = ko_predicate(ws)
    subj = ko_subject(ws)
    subject = subj[0] if subj else hero
    subject = subject if subject is None else subject.split()[-1]
    objects = ko_objects(ws)
    places = [w[:-2] for w in ws if w.endswith("에서")] + [w[:-1] for w in ws if w.endswith("에") and len(w) > 1
                                                           and w not in KO_TIME_E]
    # 떠나다 and 이사하다 go somewhere with (으)로, not 에 ("*은행에 떠났다").
    for a, b in zip(ws, ws[1:]):
        if a.endswith("에") and not a.endswith("에서") and b.startswith(("떠나", "떠났", "이사하", "이사했")):
            out["motion_with_e"] += 1
    # Two (으)로 phrases in one clause ("버스로 도시로 이사했다").
    ro = [w for w in ws if w.endswith("로") and w not in ("새로", "서로", "정말로", "바로", "실제로", "스스로")]
    if len(ro) >= 2:
        out["double_ro"] += 1
    # On foot, by bus: no transport with 걸어가다 or 뛰어가다.
    if verb_is(pred, "걸어가", "걸어갔", "뛰어가", "뛰어갔") and any(stem_of(w, ("으로", "로")) in KO_MEANS for w in ws):
        out["walk_with_transport"] += 1
    # 함께 needs a partner (X와 함께, or X와 Y가 함께), and once is enough.
    together = [i for i, w in enumerate(ws) if w == "함께"]
    if len(together) >= 2:
        out["together_twice"] += 1
    if together:
        before = ws[:together[0]]
        partner = any(w.endswith(("와", "과")) and w not in ("사과",) for w in before)
        if not partner:
            out["together_alone"] += 1
    # Liking and keeping are states: no moment or habit (요즘 and 작년에 are fine).
    if verb_is(pred, *LIKE_OR_KEEP) and any(t not in KO_TIME_OK_WITH_STATE for t in ko_times(s)):
        out["time_with_state"] += 1
    # Buying and selling happen in shops and markets.
    if pred.startswith(BUY) and objects and any(p not in KO_SHOPS | KO_TOWNS for p in places):
        out["purchase_outside_shop"] += 1
    if pred.startswith(BUY) and any(o.split()[-1] in KO_BIG_VEHICLES for o in objects):
        out["vehicle_purchase"] += 1
    if subject in KO_ANIMALS:
        if pred.startswith(EAT) and any(o in KO_HUMAN_FOOD for o in objects):
            out["animal_human_food"] += 1
        if any(p in KO_BUILDINGS for p in places) or (subject not in KO_PETS and
                                                       any(p in ("방", "거실", "부엌", "침대") for p in places)):
            out["animal_indoors"] += 1
    if verb_is(pred, "키운다", "키웠", "키우신", "키우셨") and any(o in KO_ANIMALS and o not in KO_PETS for o in objects):
        out["keeps_wild_animal"] += 1
    for a, b in zip(ws, ws[1:]):
        tool = stem_of(a, ("으로", "로"))
        obj = stem_of(b, ("을", "를"))
        if tool and obj and (tool, obj) in KO_BAD_INSTRUMENT:
            out["wrong_instrument"] += 1
    # True colours: 개나리는 노랗다, never 빨갛다.
    if subj and subj[0] in KO_FLOWER_COLOURS:
        colour = next((c for c, forms in KO_COLOURS.items() if pred.startswith(forms)), None)
        if colour and colour not in KO_FLOWER_COLOURS[subj[0]]:
            out["wrong_colour"] += 1
    # A name that is a common noun (하늘이 도시로 이사한다).
    person_verb = pred.startswith(("만나", "만났", "도와", "도왔", "돕", "기다리", "기다렸"))
    for w in ws:
        stem = stem_of(w, ("께서는", "께서", "은", "는", "이", "가", "과", "와"))
        if stem is None and person_verb:
            stem = stem_of(w, ("을", "를"))
        if stem in KO_NOUN_NAMES and not pred.startswith(KO_NATURE_PREDICATES) and not pred.endswith(("온다", "왔다")):
            out["noun_as_name"] += 1
            break
    return out


def ko_story_errors(sents):
    """Counts per class that only a story shows (two or more Korean sentences)."""
    out = collections.Counter()
    first = ko_subject(words(sents[0]))
    hero = first[0].split()[-1] if first else None
    if hero and len(sents) > 1:
        for s in sents[1:]:
            ws = words(s)
            if any(w in (hero + "이", hero + "가", hero + "께서") for w in ws):
                out["story_hero_marked_new"] += 1
    if len(set(sents)) < len(sents):
        out["story_repeats_sentence"] += 1
    ranks = [KO_TIME_RANK[t] for s in sents for t in ko_times(s)[:1] if t in KO_TIME_RANK]
    if any(b < a for i, a in enumerate(ranks) for b in ranks[i + 1:]):
        out["story_time_backwards"] += 1
    # The object that comes back is 그 X (or dropped), not a bare X.
    seen = set()
    for s in sents:
        ws = words(s)
        for i, w in enumerate(ws):
            o = stem_of(w, ("을", "를"))
            if o is None:
                continue
            if o in seen and (i == 0 or ws[i - 1] not in ("그", "이", "저")):
                out["story_object_without_geu"] += 1
                break
            seen.add(o)
        else:
            continue
        break
    return out, hero


# ---------------------------------------------------------------- the error classes (English)


def en_singular(w):
    w = w.lower()
    if w in EN_PLURAL:
        return EN_PLURAL[w]
    for end, rep in (("ies", "y"), ("oes", "o"), ("ches", "ch"), ("shes", "sh"), ("xes", "x"), ("ses", "s"),
                     ("s", "")):
        if w.endswith(end) and len(w) > len(end) + 1:
            cand = w[:-len(end)] + rep
            if cand in EN_ANIMALS | EN_PEOPLE | EN_FOOD | EN_CONTAINERS or end == "s":
                return cand
    return w


EN_PREPS = ("to", "of", "from", "in", "on", "under", "with", "near", "behind", "beside", "by", "next to", "inside")


def en_noun_phrase(toks, i):
    """(noun, end) of "the [adjective] noun" starting at toks[i] == "the", or None."""
    for j in (i + 1, i + 2):
        if j < len(toks) and en_singular(toks[j]) in EN_NOUNS:
            return en_singular(toks[j]), j + 1
    return None


def en_attractor_phrases(s):
    """(head, preposition, attractor) for every "the N PREP the M" of a sentence."""
    toks = [t.strip(".,!?").lower() for t in s.split()]
    out = []
    for i, t in enumerate(toks):
        if t != "the":
            continue
        head = en_noun_phrase(toks, i)
        if head is None:
            continue
        k = head[1]
        prep = " ".join(toks[k:k + 2]) if toks[k:k + 2] == ["next", "to"] else (toks[k] if k < len(toks) else "")
        k += len(prep.split())
        if prep in EN_PREPS and k < len(toks) and toks[k] == "the":
            attr = en_noun_phrase(toks, k)
            if attr:
                out.append((head[0], prep, attr[0]))
    return out


def en_sentence_errors(s, hero=None):
    out = collections.Counter()
    low = s.lower()
    for m in re.finditer(r"\bat the (\w+)", low):
        if m.group(1) in EN_NOT_AT:
            out["en_at_in"] += 1
    for m in re.finditer(r"\bin the (\w+)", low):
        if m.group(1) in EN_NOT_IN:
            out["en_at_in"] += 1
    for head, prep, attr in en_attractor_phrases(s):
        animate_attr = attr in EN_ANIMALS or attr in EN_PEOPLE
        bad = False
        if prep == "to":
            bad = head not in EN_TO_HEADS
        elif prep == "of":
            bad = not (head in EN_OF_HEADS_ANY or (head in EN_OF_HEADS_ANIMATE and animate_attr) or
                       (head in EN_OF_HEADS_THING and not animate_attr))
        elif prep == "from":
            bad = head not in EN_TO_HEADS or not animate_attr
        elif prep in ("in", "inside"):
            bad = animate_attr or (attr not in EN_CONTAINERS and attr not in EN_NOT_AT)
        elif prep == "under":
            bad = attr in EN_PEOPLE
        elif prep == "on":
            bad = attr in EN_PEOPLE and head not in ("hat", "coat", "shoe", "sock", "ring", "bag")
        if bad:
            out["en_preposition"] += 1
    for m in re.finditer(r"\b[A-Z][a-z]+ (?:has|had|keeps|kept) an? (\w+)\b", s):
        if m.group(1) in EN_ANIMALS and m.group(1) not in EN_PETS:
            out["en_wild_pet"] += 1
    for m in re.finditer(r"\bthe (\w+) (\w+)\b", low):
        adj, noun = m.group(1), en_singular(m.group(2))
        if noun in EN_FOOD and (adj in EN_NOT_FOOD_ADJ or (adj in EN_COLOURS and
                                                            adj not in EN_FOOD_COLOURS.get(noun, EN_COLOURS))):
            out["en_adjective"] += 1
        elif (noun in EN_ANIMALS or noun in EN_PEOPLE) and adj in EN_NOT_ANIMATE_ADJ:
            out["en_adjective"] += 1
    subj = re.match(r"(?:the (?:\w+ )?)?(\w+)", low)
    subject = en_singular(subj.group(1)) if subj else None
    if subject in ("he", "she", "it", "they") and hero:
        subject = hero
    if subject in EN_ANIMALS:
        if re.search(r"\b(?:eats|ate|eat|likes|liked|like) (?:the |a |an )?(?:\w+ )?(cakes?|cookies|cookie|"
                     r"sandwich(?:es)?|pies?|bread|pizza|chocolate|candy)\b", low):
            out["animal_human_food"] += 1
        if EN_ANIMAL_VERBS_INDOORS.search(low) and not (subject in EN_PETS and
                                                        re.search(r"\b(?:in|at) the (?:room|house|kitchen)\b", low)):
            out["animal_indoors"] += 1
    if re.search(r"\b(?:buys|bought|buy) (?:the |a |an )(?:\w+ )?(bus|buses|train|trains)\b", low):
        out["vehicle_purchase"] += 1
    return out


def en_story_errors(sents):
    out = collections.Counter()
    if len(set(sents)) < len(sents):
        out["story_repeats_sentence"] += 1
    m = re.match(r"(?:the (?:\w+ )?)?(\w+)", sents[0].lower())
    return out, (en_singular(m.group(1)) if m else None)


# ---------------------------------------------------------------- the whole text

CLASSES = [
    "story_hero_marked_new", "story_object_without_geu", "story_repeats_sentence", "story_time_backwards",
    "motion_with_e", "double_ro", "walk_with_transport", "together_alone", "together_twice", "time_with_state",
    "purchase_outside_shop", "vehicle_purchase", "animal_human_food", "animal_indoors", "keeps_wild_animal",
    "wrong_instrument", "wrong_colour", "noun_as_name",
    "en_at_in", "en_preposition", "en_wild_pet", "en_adjective",
    "sentence_over_cap",
]


def check_paragraphs(paragraphs, cap=10, exempt=(), examples=0):
    """Counts per error class over the paragraphs (each a sentence or a story), the
    repeat statistics, and up to `examples` sentences per class."""
    counts = collections.Counter({c: 0 for c in CLASSES})
    found = collections.defaultdict(list)
    copies = collections.Counter()
    ko_n = en_n = 0

    def note(counter, where):
        for c, n in counter.items():
            counts[c] += n
            if n and len(found[c]) < examples:
                found[c].append(where)

    for para in paragraphs:
        sents = sentences(para)
        if not sents:
            continue
        korean = is_korean(para)
        if len(sents) > 1:
            story, hero = (ko_story_errors if korean else en_story_errors)(sents)
            note(story, para)
        else:
            hero = None
        for i, s in enumerate(sents):
            copies[s] += 1
            if korean:
                ko_n += 1
            else:
                en_n += 1
            if korean:
                note(ko_sentence_errors(s, hero if i > 0 else None), s)
            else:
                note(en_sentence_errors(s, hero if i > 0 else None), s)
    over = {s: n for s, n in copies.items() if n > cap and s not in exempt}
    counts["sentence_over_cap"] = sum(n - cap for n in over.values())
    for s in sorted(over, key=lambda x: -over[x])[:examples]:
        found["sentence_over_cap"].append(f"{s} ({over[s]} copies)")
    ko_rep = sum(n - 1 for s, n in copies.items() if is_korean(s))
    en_rep = sum(n - 1 for s, n in copies.items() if not is_korean(s))
    stats = {"korean_sentences": ko_n, "english_sentences": en_n,
             "korean_repeat_share": round(ko_rep / max(1, ko_n), 4),
             "english_repeat_share": round(en_rep / max(1, en_n), 4),
             "most_copies": max(copies.values()) if copies else 0, "cap": cap}
    return dict(counts), stats, dict(found)


def read_paragraphs(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("text", help="the designed text, one paragraph a line (.txt or .txt.gz)")
    ap.add_argument("--cap", type=int, default=10, help="copies of one sentence allowed (default 10)")
    ap.add_argument("--examples", type=int, default=3, help="examples printed per class")
    args = ap.parse_args()
    try:
        paragraphs = read_paragraphs(args.text)
    except (OSError, UnicodeDecodeError) as e:
        print(f"meaning_checker: cannot read {args.text}: {e}", file=sys.stderr)
        return 1
    counts, stats, found = check_paragraphs(paragraphs, args.cap, examples=args.examples)
    print(json.dumps({"counts": counts, "stats": stats, "examples": found}, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
