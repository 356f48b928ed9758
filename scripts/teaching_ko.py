"""Korean sentences and stories of mhaviz-small's designed teaching corpus.

Every sentence comes with its keys: the combinations of words it puts together, ("sv",
subject, verb), ("ov", object, verb), ("and", noun, noun), ("ro", place, verb), ("cls",
noun, numeral). The minimal pairs hold some combinations out of the training text
(scripts/teaching_pairs.py), so a pair tests the construction on words the model has read,
never a combination it has memorised.

Every choice goes through self.rng, so a seed fixes the text.
"""
import teaching_lexicon as L


def final_consonant(word):
    """The index of the last Hangul syllable's final consonant (0: none, 8: ㄹ)."""
    code = ord(word[-1]) - 0xAC00
    if not 0 <= code < 11172:
        raise ValueError(f"{word!r} does not end in a Hangul syllable")
    return code % 28


PARTICLES = {"subj": ("이", "가"), "obj": ("을", "를"), "top": ("은", "는"), "and": ("과", "와"), "ro": ("으로", "로")}


def josa(word, kind):
    """word + the particle of that kind, in the allomorph its last syllable takes."""
    fc = final_consonant(word)
    after_consonant, after_vowel = PARTICLES[kind]
    if kind == "ro":
        return word + (after_consonant if fc and fc != 8 else after_vowel)
    return word + (after_consonant if fc else after_vowel)


def wrong_josa(word, kind):
    """The allomorph the word does not take (for the minimal pairs)."""
    right = josa(word, kind)[len(word):]
    a, b = PARTICLES[kind]
    return word + (b if right == a else a)


def classifier_of(noun):
    for cl, ns in L.CLASSIFIER.items():
        if noun in ns:
            return cl
    return None


class Subject:
    """Who does it: the noun, its kind (name, person, honored, animal, pronoun)."""

    def __init__(self, noun, kind, det=""):
        self.noun, self.kind, self.det = noun, kind, det

    @property
    def honored(self):
        return self.kind == "honored"

    def phrase(self, topic=False):
        if self.kind == "pronoun":
            return self.noun + ("는" if topic else "가") if self.noun == "우리" else ("나는" if topic else "내가")
        if self.honored:
            return self.noun + ("께서는" if topic else "께서")
        return self.det + josa(self.noun, "top" if topic else "subj")


class Ko:
    def __init__(self, rng):
        self.rng = rng
        # In a story the time words are the story's (scripts/teaching_ko_story.py): a
        # sentence of it takes none of its own.
        self.quiet_time = False
        # The corpus's copies of each sentence so far, and the most it may have (set by
        # make_teaching_corpus.py), so a story can say a step another way.
        self.copies, self.cap = None, None

    def at_cap(self, sentence):
        return self.copies is not None and self.copies[sentence] >= self.cap

    def pick(self, seq):
        return seq[self.rng.randrange(len(seq))]

    def chance(self, p):
        return self.rng.random() < p

    # ------------------------------------------------------------ words
    def person(self, kinds=("name", "name", "person", "person", "honored", "honored", "pronoun"), child=None):
        kind = self.pick(kinds)
        if kind == "name":
            return Subject(self.pick(L.NAMES), "name")
        if kind == "honored":
            return Subject(self.pick(L.HONORED), "honored")
        if kind == "pronoun":
            return Subject(self.pick(["나", "우리"]), "pronoun")
        pool = L.CHILDREN if child else L.PEOPLE
        return Subject(self.pick(pool), "person", self.pick(L.DETERMINERS) if self.chance(0.15) else "")

    def animal(self, kinds=None):
        pool = [a for a, (k, _, _) in L.ANIMALS.items() if kinds is None or k in kinds]
        a = self.pick(pool)
        dets = L.DETERMINERS if L.ANIMALS[a][0] == "pet" else L.DETERMINERS[:3]
        return Subject(a, "animal", self.pick(dets) if self.chance(0.2) else "")

    def verb(self, lemma, subj, past):
        return L.FORMS[lemma][(2 if subj.honored else 0) + (1 if past else 0)]

    def time(self, past, stative=False):
        if stative:
            return self.pick(["작년에"] if past else ["요즘"])
        return self.pick(L.TIME_PAST if past else L.TIME_PRESENT)

    @staticmethod
    def grown_up(subj):
        return subj.kind in ("honored", "name") or (subj.kind == "person" and subj.noun not in L.CHILDREN)

    # ------------------------------------------------------------ sentences
    def finish(self, subj, parts, lemma, past, keys, time=None, dropped=False, topic=False):
        """Puts the sentence together: [time] subject ... verb, and its keys."""
        words = [] if dropped else [subj.phrase(topic)]
        if time and not self.quiet_time:
            words.insert(0 if self.chance(0.6) else len(words), time)
        words += [p for p in parts if p]
        words.append(self.verb(lemma, subj, past))
        keys = set(keys) | {("sv", subj.noun, lemma)}
        return " ".join(words) + ".", keys

    def partner(self, subj):
        """X와 함께: someone to do it with, never the subject."""
        pool = L.NAMES + L.PEOPLE[:12] if subj.kind != "animal" else []
        mate = self.pick(pool)
        if mate == subj.noun:
            return None, set()
        return josa(mate, "and") + " 함께", {("and", mate, "함께")}

    def transitive(self, subj=None, past=None, lemma=None, obj=None, dropped=False, topic=False, with_time=True,
                   obj_det="", place=None, mate=None, adverb=None):
        """아이가 어제 도서관에서 책을 조용히 읽었다."""
        subj = subj or self.person()
        past = self.chance(0.5) if past is None else past
        for _ in range(30):
            v = lemma or self.pick([v for v in L.PERSON_VERBS if v != "사다"])
            objs, places, adverbs = L.PERSON_VERBS[v]
            if v in L.GROWN_UP_VERBS and not self.grown_up(subj):
                continue
            if v == "가르치다" and subj.noun not in ("선생님", "교수님") and subj.kind != "name":
                continue
            o = obj or self.pick(objs)
            if o != subj.noun:
                break
        else:
            return None
        stative = v in L.STATIVE
        parts, keys = [], {("ov", o, v)}
        if mate:
            parts.append(josa(mate, "and") + " 함께")
            keys.add(("and", mate, "함께"))
        elif self.chance(0.1) and not stative and subj.kind != "animal" and v not in ("만나다", "돕다", "기다리다"):
            p, k = self.partner(subj)
            parts.append(p)
            keys |= k
        if place is not None:  # "" for none
            parts += [place] if place else []
        elif places and self.chance(0.4):
            parts.append(self.pick(places.split()) + "에서")
        parts.append(obj_det + josa(o, "obj"))
        if adverb is not None:
            parts += [adverb] if adverb else []
        elif adverbs and self.chance(0.2):
            parts.append(self.pick(adverbs.split()))
        t = self.time(past, stative) if with_time and self.chance(0.35 if not stative else 0.25) else None
        return self.finish(subj, parts, v, past, keys, t, dropped, topic)

    def purchase(self, subj=None, past=None, shop=None, good=None, dropped=False, count=False, topic=False):
        """민수가 시장에서 사과 세 개를 샀다: buying only in shops, only what they sell."""
        subj = subj or self.person()
        past = self.chance(0.5) if past is None else past
        shop = shop or self.pick(list(L.SHOPS))
        good = good or self.pick(L.SHOPS[shop])
        keys = {("ov", good, "사다")}
        thing = good
        if count and classifier_of(good) and good not in ("물", "표"):
            num = self.pick(L.NUMERALS)
            thing = f"{good} {num} {classifier_of(good)}"
            keys.add(("cls", good, num))
        parts = [shop + "에서", josa(thing, "obj")]
        t = self.time(past) if self.chance(0.3) else None
        return self.finish(subj, parts, "사다", past, keys, t, dropped, topic)

    def selling(self, past=None):
        """점원이 빵집에서 빵을 판다."""
        past = self.chance(0.5) if past is None else past
        seller = Subject(self.pick(list(L.SELLERS)), "person")
        if seller.noun == "사장님":
            seller.kind = "honored"
        shop = self.pick(L.SELLERS[seller.noun])
        good = self.pick([g for g in L.SHOPS[shop] if seller.noun != "농부" or g in L.FRUIT_VEG])
        return self.finish(seller, [shop + "에서", josa(good, "obj")], "팔다", past, {("ov", good, "팔다")})

    def intransitive(self, subj=None, past=None, lemma=None, dropped=False, topic=False, mate=None):
        subj = subj or self.person()
        past = self.chance(0.5) if past is None else past
        if subj.kind == "animal":
            kind, homes, _ = L.ANIMALS[subj.noun]
            pool = [v for v in L.ANIMAL_INTRANSITIVE if v != "날다" or subj.noun in L.FLIERS]
            v = lemma or self.pick(pool)
            parts = [self.pick(homes.split()) + "에서"] if self.chance(0.6) and v != "날다" else []
            adv = L.ANIMAL_INTRANSITIVE[v]
            if adv and self.chance(0.25):
                parts.append(adv)
        else:
            pool = [v for v in L.PERSON_INTRANSITIVE if v not in L.GROWN_UP_VERBS or self.grown_up(subj)]
            v = lemma or self.pick(pool)
            places, adverbs = L.PERSON_INTRANSITIVE[v]
            if places == "WORK":
                places = L.WORKPLACE.get(subj.noun, "회사")
            parts = [self.pick(places.split()) + "에서"] if places and self.chance(0.5) else []
            if adverbs and self.chance(0.3):
                parts.append(self.pick(adverbs.split()))
        keys = set()
        if mate:
            parts.insert(0, josa(mate, "and") + " 함께")
            keys.add(("and", mate, "함께"))
        t = self.time(past) if self.chance(0.35) else None
        return self.finish(subj, parts, v, past, keys, t, dropped, topic)

    def destination(self, kind, subj):
        if subj.kind == "animal":
            return self.pick(L.ANIMALS[subj.noun][1].split())
        pools = {"any": L.PUBLIC + list(L.SHOPS) + L.TOWNS + ["집"], "home": ["집"] * 3 + L.TOWNS,
                 "inside": L.INSIDE, "far": L.FAR, "town": L.TOWNS,
                 "near": ["학교", "공원", "놀이터", "운동장", "시장", "집", "도서관", "가게", "역"]}
        return self.pick(pools[kind])

    def motion(self, subj=None, past=None, lemma=None, dest=None, dropped=False, topic=False, with_time=True,
               means=True):
        """할머니께서 기차를 타고 부산에 가셨다; 민수가 학교로 뛰어갔다; 부모님께서 서울로 이사하셨다."""
        subj = subj or self.person(("name", "person", "honored", "honored", "pronoun"))
        past = self.chance(0.5) if past is None else past
        if subj.kind == "animal":
            v = lemma or self.pick(["뛰어가다", "들어가다", "돌아오다"] if L.ANIMALS[subj.noun][0] == "pet" else ["가다"])
        else:
            v = lemma or self.pick([m for m in L.MOTION if m != "이사하다" or self.grown_up(subj)])
        dest = dest or self.destination(L.MOTION[v], subj)
        parts, keys = [], set()
        ro = v in ("떠나다", "이사하다") or self.chance(0.45)
        if means and subj.kind != "animal" and v in ("가다", "오다", "돌아오다", "떠나다") and self.chance(0.3):
            means = self.pick(L.MEANS_FAR[dest].split() if dest in L.MEANS_FAR else L.MEANS_NEAR)
            # One (으)로 phrase at most: "버스를 타고 도시로", or "버스로 도시에".
            if ro or self.chance(0.5):
                parts.append(josa(means, "obj") + " 타고")
            else:
                parts.append(josa(means, "ro"))
                keys.add(("ro", means, v))
            keys.add(("ov", means, "타다"))
        if ro:
            parts.append(josa(dest, "ro"))
            keys.add(("ro", dest, v))
        else:
            parts.append(dest + "에")
        t = self.time(past) if with_time and self.chance(0.35) else None
        return self.finish(subj, parts, v, past, keys, t, dropped, topic)

    def exist(self, subj=None, past=None, dropped=False, topic=False):
        """숲에 곰이 있다 / 할머니께서 부엌에 계신다."""
        subj = subj or (self.animal() if self.chance(0.5) else self.person(("name", "person", "honored")))
        past = self.chance(0.5) if past is None else past
        if subj.kind == "animal":
            place = self.pick(L.ANIMALS[subj.noun][1].split())
        else:
            place = self.pick(L.PUBLIC + L.HOME + ["집"])
        if not dropped and self.chance(0.4):
            text = f"{place}에 {subj.phrase(topic)} {self.verb('있다', subj, past)}."
            return text, {("sv", subj.noun, "있다")}
        return self.finish(subj, [place + "에"], "있다", past, set(), None, dropped, topic)

    def thing_place(self):
        """가방이 책상 위에 있다."""
        noun = self.pick(L.THINGS + L.BOOKS + L.PENS + L.PAPERS + ["사과", "귤", "빵", "컵"])
        spot = self.pick(["책상 위에", "의자 위에", "식탁 위에", "상자 안에", "가방 안에", "방에", "거실에"])
        if noun in spot:
            return None
        return f"{josa(noun, 'subj')} {spot} {self.pick(['있다', '있었다'])}.", {("sv", noun, "있다")}

    # ------------------------------------------------------------ animals
    def animal_eats(self, subj=None, past=None, dropped=False, topic=False, food=None):
        """토끼가 마당에서 당근을 먹는다: each animal its own food, where it lives."""
        subj = subj or self.animal()
        past = self.chance(0.5) if past is None else past
        _, homes, foods = L.ANIMALS[subj.noun]
        food = food or self.pick(foods.split())
        parts = [self.pick(homes.split()) + "에서"] if self.chance(0.4) else []
        parts.append(josa(food, "obj"))
        t = self.time(past) if self.chance(0.3) else None
        return self.finish(subj, parts, "먹다", past, {("ov", food, "먹다")}, t, dropped, topic)

    def animal_catches(self, subj=None, past=None, dropped=False, topic=False):
        """고양이가 마당에서 쥐를 잡았다."""
        subj = subj or Subject(self.pick(list(L.PREY)), "animal")
        if subj.noun not in L.PREY:
            return None
        past = self.chance(0.6) if past is None else past
        prey = self.pick(L.PREY[subj.noun].split())
        parts = [self.pick(L.ANIMALS[subj.noun][1].split()) + "에서"] if self.chance(0.4) else []
        parts.append(josa(prey, "obj"))
        t = self.time(past) if self.chance(0.3) else None
        return self.finish(subj, parts, "잡다", past, {("ov", prey, "잡다")}, t, dropped, topic)

    def animal_likes(self, subj=None, topic=True):
        """저 고양이는 생선을 좋아한다 (a state: no moment, 요즘 at most)."""
        subj = subj or self.animal()
        food = self.pick(L.ANIMALS[subj.noun][2].split())
        t = "요즘" if self.chance(0.1) else None
        return self.finish(subj, [josa(food, "obj")], "좋아하다", False, {("ov", food, "좋아하다")}, t, False, topic)

    def sees_animal(self, subj=None, past=None, dropped=False, topic=False):
        """아이가 동물원에서 코끼리를 봤다: where that animal is."""
        subj = subj or self.person()
        past = self.chance(0.5) if past is None else past
        a = self.pick(list(L.ANIMALS))
        parts = [self.pick(L.ANIMALS[a][1].split()) + "에서"] if self.chance(0.6) else []
        parts.append(josa(a, "obj"))
        t = self.time(past) if self.chance(0.3) else None
        return self.finish(subj, parts, "보다", past, {("ov", a, "보다")}, t, dropped, topic)

    # ------------------------------------------------------------ counting, pairs of nouns, tools
    def counted(self, noun, num):
        return f"{noun} {num} {classifier_of(noun)}"

    def counting(self, noun=None, num=None, past=None):
        """마당에 고양이 두 마리가 있다 / 민수가 빵집에서 빵 세 개를 샀다 / 정원에 장미 다섯 송이를 심었다."""
        past = self.chance(0.5) if past is None else past
        cl = self.pick(list(L.CLASSIFIER)) if noun is None else classifier_of(noun)
        noun = noun or self.pick(L.CLASSIFIER[cl])
        num = num or self.pick(L.NUMERALS)
        phrase = self.counted(noun, num)
        keys = {("cls", noun, num)}
        where = self.count_place(noun, cl)
        r = self.rng.random()
        if r < 0.45 and where:
            return f"{where}에 {josa(phrase, 'subj')} {self.verb('있다', Subject('', 'person'), past)}.", \
                keys | {("sv", noun, "있다")}
        subj = self.person(("name", "person", "honored", "pronoun"))
        if subj.noun == noun:
            return None
        shop = next((s for s in L.SHOPS if noun in L.SHOPS[s]), None)
        verb = {"마리": "보다", "명": "만나다", "권": "읽다", "잔": "마시다", "그루": "심다", "송이": "받다", "통": "보내다",
                "채": "보다", "장": "받다", "대": "보다" if noun in L.VEHICLES else "사다"}.get(cl, "사다")
        if verb == "읽다" and noun not in L.READABLE:
            verb = "사다"
        if shop and (verb == "사다" or r < 0.75):
            return self.purchase(subj, past, shop, noun, count=True) if noun not in ("물", "표") else None
        if cl == "마리" and L.ANIMALS[noun][0] == "pet" and self.chance(0.5):
            verb = "키우다"
        if verb == "보다" and cl == "마리":
            parts = [self.pick(L.ANIMALS[noun][1].split()) + "에서"]
        elif verb == "보다" and cl == "대":
            parts = [self.pick(["거리", "주차장", "역"]) + "에서"]
        elif verb == "심다":
            parts = [self.pick(["정원", "마당", "산", "공원"]) + "에"]
        elif verb == "만나다":
            parts = [self.pick(["공원", "학교", "역", "카페"]) + "에서"]
        else:
            parts = []
        parts.append(josa(phrase, "obj"))
        t = self.time(past, verb in L.STATIVE) if self.chance(0.25) else None
        return self.finish(subj, parts, verb, past, keys | {("ov", noun, verb)}, t)

    @staticmethod
    def count_place(noun, cl):
        if cl == "마리":
            return L.ANIMALS[noun][1].split()[0]
        return {"명": "교실", "권": "책상 위", "대": "주차장" if noun in L.VEHICLES else "거실", "그루": "정원",
                "송이": "꽃병", "채": "마을", "벌": "방", "켤레": "방", "잔": "식탁 위", "자루": "필통",
                "장": "책상 위", "통": "책상 위", "개": "상자 안"}.get(cl)

    def coordination(self, past=None):
        """고양이와 강아지가 마당에서 함께 논다."""
        past = self.chance(0.5) if past is None else past
        if self.chance(0.4):
            a, b = self.rng.sample([x for x, (k, _, _) in L.ANIMALS.items() if k == "pet"], 2)
            v = self.pick(["놀다", "자다", "쉬다"])
            place = self.pick(["마당", "거실"])
        else:
            pool = L.NAMES + L.CHILDREN
            a, b = self.rng.sample(pool, 2)
            v = self.pick(["놀다", "공부하다", "노래하다", "춤추다", "운동하다", "산책하다", "웃다"])
            place = self.pick((L.PERSON_INTRANSITIVE[v][0] or "공원 방").split())
        words = [josa(a, "and"), josa(b, "subj")]
        if self.chance(0.5):
            words.append(place + "에서")
        if self.chance(0.4):
            words.append("함께")
        words.append(L.FORMS[v][1 if past else 0])
        if self.chance(0.3):
            words.insert(0, self.time(past))
        return " ".join(words) + ".", {("and", a, b), ("sv", a, v), ("sv", b, v)}

    def object_pair(self, past=None):
        """어머니께서 시장에서 사과와 배추를 사셨다."""
        past = self.chance(0.5) if past is None else past
        subj = self.person(("name", "person", "honored"))
        if self.chance(0.6):
            shop = self.pick([s for s in L.SHOPS if len(L.SHOPS[s]) > 3])
            a, b = self.rng.sample(L.SHOPS[shop], 2)
            parts, v = [shop + "에서"], "사다"
        else:
            a, b = self.rng.sample(L.EDIBLE, 2)
            parts, v = [], self.pick(["먹다", "좋아하다"])
        parts += [josa(a, "and"), josa(b, "obj")]
        t = self.time(past, v in L.STATIVE) if self.chance(0.25) else None
        return self.finish(subj, parts, v, past, {("and", a, b), ("ov", a, v), ("ov", b, v)}, t)

    def instrument(self, past=None):
        """아이가 연필로 그림을 그린다: the tool that does the job."""
        past = self.chance(0.5) if past is None else past
        subj = self.person()
        v = self.pick(list(L.INSTRUMENTS))
        tool = self.pick(list(L.INSTRUMENTS[v]))
        o = self.pick(L.INSTRUMENTS[v][tool])
        keys = {("ov", o, v), ("ro", tool, v)}
        t = self.time(past) if self.chance(0.25) else None
        return self.finish(subj, [josa(tool, "ro"), josa(o, "obj")], v, past, keys, t)

    # ------------------------------------------------------------ states
    def describe(self):
        """저 코끼리는 크다 / 개나리는 노랗다 / 할머니께서는 건강하시다: true of what it is said of."""
        r = self.rng.random()
        if r < 0.3:
            adj = self.pick(["크다", "작다", "빠르다", "느리다", "귀엽다"])
            pool = L.ANIMAL_SIZE.get(adj) or L.ANIMAL_SPEED.get(adj) or L.CUTE
            noun, det = self.pick([a for a in pool if a in L.ANIMALS]), self.pick(["", "", "저 ", "이 "])
        elif r < 0.45:
            flower = self.pick([f for f, c in L.FLOWER_COLOUR.items() if c])
            adj = self.pick(L.FLOWER_COLOUR[flower] + ["예쁘다"])
            return f"{josa(flower, self.pick(['top', 'subj']))} {adj}.", {("sv", flower, adj)}
        elif r < 0.6:
            adj = self.pick(list(L.FOOD_ADJ))
            noun, det = self.pick(L.FOOD_ADJ[adj]), self.pick(["", "", "이 ", "그 "])
        elif r < 0.72:
            adj = self.pick(list(L.THING_ADJ))
            noun, det = self.pick(L.THING_ADJ[adj]), self.pick(["", "이 ", "그 ", "저 "])
        elif r < 0.82:
            adj = self.pick(list(L.PLACE_ADJ))
            noun, det = self.pick(L.PLACE_ADJ[adj]), self.pick(["", "이 "])
        else:
            subj = self.person(("name", "person", "honored"))
            adj = self.pick(["친절하다", "바쁘다", "건강하다"] if subj.honored else ["착하다", "친절하다", "바쁘다"])
            if subj.noun == "아기":
                adj = "귀엽다"
            forms = L.ADJECTIVES[adj]
            pred = forms[2] if subj.honored else forms[0]
            return f"{subj.phrase(self.chance(0.7))} {pred}.", {("sv", subj.noun, adj)}
        forms = L.ADJECTIVES[adj]
        mark = "top" if self.chance(0.65) else "subj"
        adv = self.pick(["", "", "정말 ", "아주 "])
        return f"{det}{josa(noun, mark)} {adv}{forms[0]}.", {("sv", noun, adj)}

    def likes(self, subj=None, dropped=False, topic=None):
        """민수는 요즘 수학을 좋아한다: a state, so no moment (요즘 at most)."""
        subj = subj or self.person()
        topic = self.chance(0.6) if topic is None else topic
        return self.transitive(subj, False, "좋아하다", dropped=dropped, topic=topic)

    def weather(self, past=None):
        past = self.chance(0.5) if past is None else past
        forms = self.pick([("비가 온다", "비가 왔다"), ("눈이 온다", "눈이 왔다"), ("바람이 분다", "바람이 불었다"),
                           ("날씨가 맑다", "날씨가 맑았다"), ("날씨가 춥다", "날씨가 추웠다"), ("날씨가 흐리다", "날씨가 흐렸다"),
                           ("날씨가 덥다", "날씨가 더웠다"), ("하늘이 파랗다", "하늘이 파랬다"), ("날씨가 시원하다", "날씨가 시원했다"),
                           ("구름이 많다", "구름이 많았다")])
        text = forms[1] if past else forms[0]
        where = self.pick(L.TOWNS + L.NATURE + ["학교", "공원", "마을"]) + "에 " if self.chance(0.6) else ""
        when = self.time(past) + " " if self.chance(0.8) else ""
        if text.startswith("날씨") and where:
            where = where[:-2] + "의 "
        return f"{when}{where}{text}.", set()

    # ------------------------------------------------------------ one sentence
    def sentence(self):
        table = ((self.transitive, 0.20), (self.purchase, 0.07), (self.selling, 0.02), (self.intransitive, 0.08),
                 (self.motion, 0.10), (self.exist, 0.04), (self.thing_place, 0.02), (self.counting, 0.15),
                 (self.coordination, 0.04), (self.object_pair, 0.03), (self.instrument, 0.03),
                 (self.describe, 0.06), (self.likes, 0.02), (self.weather, 0.03),
                 (lambda: self.transitive(self.person(), lemma="만나다"), 0.01),
                 (lambda: self.intransitive(self.animal()), 0.03), (lambda: self.animal_eats(), 0.03),
                 (lambda: self.animal_catches(), 0.01), (lambda: self.animal_likes(), 0.01),
                 (lambda: self.sees_animal(), 0.02), (lambda: self.motion(self.animal()), 0.01))
        r = self.rng.random() * sum(p for _, p in table)
        for f, p in table:
            if r < p:
                return f()
            r -= p
        return self.weather()
