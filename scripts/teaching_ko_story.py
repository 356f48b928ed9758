"""Korean stories of mhaviz-small's designed teaching corpus: 2-4 sentences about one
protagonist, as a person would tell them.

- The protagonist is introduced with 이/가 (께서), and afterwards, being known, takes 는
  (께서는) or is dropped; 는 again when another subject came in between.
- An object that comes back is 그 + noun: 민수가 시장에서 사과를 샀다. 집에서 그 사과를 먹었다.
- Time runs forward: the story's moment comes first, then 그리고, 그다음에, 나중에.
- A plan says what happens in what order (you buy before you eat), and no sentence
  comes twice.
The keys of every sentence are kept, those of a dropped subject included, so the
held-out combinations stay out of the stories too.
"""
import teaching_lexicon as L
from teaching_ko import Subject, classifier_of, josa

USES = [  # what one does with a thing one bought, by what it is
    (L.FOOD["fruit"] + L.FOOD["baked"] + L.FOOD["sweet"] + ["김밥", "라면", "두부"], "먹다", "집에서 부엌에서 거실에서"),
    (L.DRINKS, "마시다", "집에서 거실에서"),
    (L.READABLE + ["지도"], "읽다", "방에서 거실에서"),
    (L.CLOTHES, "입다", ""),
    (L.PAIRS_OF, "신다", ""),
    (["공"], "던지다", "마당에서 공원에서"),
    (["엽서", "카드"], "쓰다", "방에서"),
]
HABIT_START = ["매일", "아침마다", "주말마다", "저녁마다"]


class KoStory:
    def __init__(self, ko):
        self.ko = ko
        self.pick, self.chance = ko.pick, ko.chance

    def story(self):
        plans = [(self.errand, 0.22), (self.meeting, 0.1), (self.letter, 0.06), (self.kitchen, 0.1), (self.school, 0.08),
                 (self.pet, 0.1), (self.library, 0.06), (self.garden, 0.05), (self.trip, 0.08), (self.animal_day, 0.1),
                 (self.rainy_day, 0.05)]
        r = self.ko.rng.random() * sum(p for _, p in plans)
        for plan, p in plans:
            if r < p:
                break
            r -= p
        self.ko.quiet_time = True
        try:
            steps = plan()
        finally:
            self.ko.quiet_time = False
        if not steps or len(steps) < 2 or any(s is None for s in steps):
            return None
        texts = [t for t, _ in steps]
        if len(set(texts)) < len(texts):
            return None
        return " ".join(texts), set().union(*(k for _, k in steps))

    # ------------------------------------------------------------ telling
    def begin(self, hero, past):
        self.hero, self.past, self.steps, self.last = hero, past, [], None
        self.timed = False  # whether the story's moment has been said

    def say(self, make, joint=True, optional=False, **kw):
        """One sentence about the hero: introduced first, then known (는 or dropped);
        `joint`: whether 그리고 or 그다음에 may lead it (not before a state). A sentence the
        corpus already has `cap` times is made again (another place, time or word); an
        `optional` step that cannot be made afresh is left out."""
        first = not self.steps
        if first:
            kw.update(dropped=False, topic=kw.get("topic", False))
        elif self.last is not None and self.last != self.hero.noun:
            kw.update(dropped=False, topic=True)
        else:
            drop = self.chance(0.6)
            kw.update(dropped=drop, topic=not drop)
        for _ in range(4):
            out = make(subj=self.hero, past=self.past, **kw)
            if out is None:
                break
            text, keys = out
            if first and not self.timed:
                when = self.pick(L.STORY_START) if self.past else self.pick(HABIT_START)
                if self.chance(0.6 if self.past else 0.8):
                    text = when + " " + text
            elif not first and joint and self.chance(0.3):
                text = self.pick(L.STORY_NEXT) + " " + text
            if not self.ko.at_cap(text):
                break
        else:
            out = None
        if out is None:
            if not optional:
                self.steps.append(None)
            return
        self.timed = True
        self.steps.append((text, keys))
        self.last = self.hero.noun

    def aside(self, text, keys, subject):
        """A sentence about someone else (the hero's pet, the weather)."""
        self.steps.append((text, keys))
        self.last = subject

    def hero_person(self, kinds=("name", "name", "person", "honored")):
        h = self.ko.person(kinds)
        h.det = ""
        return h

    # ------------------------------------------------------------ plans
    def errand(self):
        """민수가 시장에 갔다. 사과 두 개를 샀다. 그리고 집으로 돌아왔다. 부엌에서 그 사과를 먹었다."""
        ko = self.ko
        self.begin(self.hero_person(), self.chance(0.75))
        shop = self.pick([s for s in L.SHOPS if s != "역"])
        good = self.pick(L.SHOPS[shop])
        use = next(((v, places) for goods, v, places in USES if good in goods), None)
        go = self.chance(0.6)
        if go:
            self.say(ko.motion, lemma="가다", dest=shop, optional=True)
        self.say(ko.purchase, shop=shop, good=good, count=self.chance(0.3) and good not in ("물", "표"))
        if self.chance(0.5):
            self.say(ko.motion, lemma="돌아오다", dest="집", means=False, optional=True)
        if use and (len(self.steps) < 3 or self.chance(0.7)):
            v, places = use
            place = self.pick(places.split()) if places and self.chance(0.5) else None
            self.say(ko.transitive, lemma=v, obj=good, obj_det="그 ", place=place,
                     adverb="맛있게" if v == "먹다" and self.chance(0.3) else None)
        return self.steps

    def meeting(self):
        """지우가 공원에서 민수를 만났다. 민수와 함께 놀았다. 저녁에 집으로 돌아왔다."""
        ko = self.ko
        self.begin(self.hero_person(("name", "name", "person")), self.chance(0.8))
        friend = self.pick([n for n in L.NAMES + L.CHILDREN if n != self.hero.noun])
        place = self.pick(["공원", "학교", "도서관", "놀이터", "카페"])
        self.say(ko.transitive, lemma="만나다", obj=friend, place=place + "에서")
        act = {"공원": "놀다 산책하다 운동하다", "학교": "공부하다 놀다", "도서관": "공부하다",
               "놀이터": "놀다", "카페": "쉬다"}[place]
        self.say(ko.intransitive, lemma=self.pick(act.split()), mate=friend)
        if self.chance(0.5):
            self.say(ko.motion, lemma="돌아오다", dest="집", means=False, optional=True)
        return self.steps

    def letter(self):
        """수진이 방에서 편지를 썼다. 우체국에 갔다. 그 편지를 보냈다."""
        ko = self.ko
        self.begin(self.hero_person(), self.chance(0.75))
        what = self.pick(["편지", "엽서", "카드"])
        self.say(ko.transitive, lemma="쓰다", obj=what, place=self.pick(["방에서", "거실에서", None]))
        if self.chance(0.6):
            self.say(ko.motion, lemma="가다", dest="우체국", optional=True)
        self.say(ko.transitive, lemma="보내다", obj=what, obj_det="그 ", place="")
        return self.steps

    def kitchen(self):
        """어머니께서 부엌에서 감자를 씻으셨다. 그 감자를 구우셨다. 그리고 그 감자를 드셨다."""
        ko = self.ko
        self.begin(self.hero_person(), self.chance(0.7))
        chains = [(["씻다", "자르다", "먹다"], ["사과", "수박", "멜론"]), (["씻다", "굽다", "먹다"], ["감자", "고구마"]),
                  (["씻다", "먹다"], ["딸기", "포도", "토마토", "참외", "복숭아", "자두", "오이", "당근"]),
                  (["굽다", "자르다", "먹다"], ["빵", "케이크"]), (["만들다", "먹다"], ["김밥", "만두", "샐러드", "피자"]),
                  (["끓이다", "먹다"], ["국", "라면", "죽", "수프"]), (["굽다", "먹다"], ["쿠키", "고기", "생선"])]
        verbs, foods = self.pick(chains)
        food = self.pick(foods)
        for i, v in enumerate(verbs):
            self.say(ko.transitive, lemma=v, obj=food, obj_det="" if i == 0 else "그 ",
                     place="부엌에서" if i == 0 and self.chance(0.6) else "",
                     adverb="맛있게" if v == "먹다" and self.chance(0.4) else "")
        return self.steps

    def school(self):
        """준호가 아침에 일찍 일어났다. 버스를 타고 학교에 갔다. 교실에서 수학을 배웠다."""
        ko = self.ko
        self.begin(self.hero_person(("name", "name", "person")), self.chance(0.6))
        if self.hero.kind == "person" and self.hero.noun not in L.CHILDREN:
            self.hero = Subject(self.pick(L.CHILDREN), "person")
        if self.chance(0.6):
            self.say(ko.intransitive, lemma="일어나다", optional=True)
        self.say(ko.motion, lemma="가다", dest="학교")
        self.say(ko.transitive, lemma="배우다", place="교실에서" if self.chance(0.5) else "")
        if self.chance(0.4):
            self.say(ko.motion, lemma="돌아오다", dest="집", means=False, optional=True)
        return self.steps

    def pet(self):
        """민수가 고양이 한 마리를 키운다. 그 고양이는 마당에서 논다. 민수는 그 고양이를 좋아한다."""
        ko = self.ko
        self.begin(self.hero_person(), False)
        pet = self.pick([a for a, (k, _, _) in L.ANIMALS.items() if k == "pet"])
        self.timed = True  # keeping a pet is a state: no moment
        num = self.pick(["한", "한", "두"])
        phrase = f"{pet} {num} {classifier_of(pet)}"
        self.say(lambda subj, past, **kw: ko.finish(subj, [josa(phrase, "obj")], "키우다", past,
                                                    {("ov", pet, "키우다"), ("cls", pet, num)}, None, **kw),
                 joint=False)
        animal = Subject(pet, "animal", "그 ")
        r = self.ko.rng.random()
        if r < 0.5:
            out = ko.intransitive(animal, False, topic=True)
        else:
            out = ko.animal_eats(animal, False, topic=True)
        if out:
            self.aside(out[0], out[1], pet)
        if self.chance(0.6):
            if pet in ("강아지", "개") and self.chance(0.5):
                self.say(ko.intransitive, lemma="산책하다", mate="그 " + pet, optional=True)
            else:
                self.say(ko.transitive, lemma="좋아하다", obj=pet, obj_det="그 ", joint=False, optional=True)
        return self.steps

    def library(self):
        """은비가 도서관에 갔다. 동화책을 빌렸다. 방에서 그 동화책을 읽었다."""
        ko = self.ko
        self.begin(self.hero_person(), self.chance(0.8))
        book = self.pick(L.READABLE)
        if self.chance(0.6):
            self.say(ko.motion, lemma="가다", dest="도서관", optional=True)
        self.say(ko.transitive, lemma="빌리다", obj=book, place="도서관에서" if not self.steps else "")
        self.say(ko.transitive, lemma="읽다", obj=book, obj_det="그 ", place=self.pick(["방에서", "거실에서", ""]))
        return self.steps

    def garden(self):
        """할아버지께서 꽃집에서 장미를 사셨다. 정원에 그 장미를 심으셨다."""
        ko = self.ko
        self.begin(self.hero_person(), self.chance(0.8))
        flower = self.pick(L.FLOWERS)
        self.say(ko.purchase, shop="꽃집", good=flower)
        self.say(ko.transitive, lemma="심다", obj=flower, obj_det="그 ", place=self.pick(["정원에", "마당에"]))
        return self.steps

    def trip(self):
        """부모님께서 기차를 타고 부산에 가셨다. 해변에서 산책하셨다. 그다음에 집으로 돌아오셨다."""
        ko = self.ko
        self.begin(self.hero_person(("name", "person", "honored", "honored")), True)
        if not ko.grown_up(self.hero):
            self.hero = Subject(self.pick(L.HONORED), "honored")
        dest = self.pick(["부산", "서울", "시골", "섬", "바다", "산"])
        self.say(ko.motion, lemma=self.pick(["가다", "떠나다"]), dest=dest)
        acts = {"부산": ["산책하다:해변에서", "구경하다:시장", "수영하다:바다에서"],
                "서울": ["구경하다:박물관", "구경하다:미술관", "구경하다:시장"],
                "시골": ["산책하다:들판에서", "쉬다:"], "섬": ["산책하다:해변에서", "수영하다:바다에서"],
                "바다": ["수영하다:", "산책하다:해변에서"], "산": ["산책하다:숲에서", "쉬다:"]}[dest]
        act, where = self.pick(acts).split(":")
        if act == "구경하다":
            self.say(ko.transitive, lemma=act, obj=where)
        else:
            self.say(lambda subj, past, **kw: ko.finish(subj, [where] if where else [], act, past, set(), None, **kw))
        if self.chance(0.5):
            self.say(ko.motion, lemma="돌아오다", dest="집", means=False, optional=True)
        return self.steps

    def animal_day(self):
        """고양이가 마당에서 놀았다. 그다음에 쥐를 잡았다. 생선을 먹었다. 그리고 방에서 잤다."""
        ko = self.ko
        self.begin(ko.animal(), self.chance(0.75))
        self.hero.det = ""
        if self.chance(0.6):
            self.say(ko.intransitive, lemma=self.pick(["놀다", "달리다"] + (["날다"] if self.hero.noun in L.FLIERS else [])),
                     optional=True)
        caught = None
        if self.hero.noun in L.PREY and self.chance(0.6):
            self.say(ko.animal_catches)
            caught = next((k[1] for k in self.steps[-1][1] if k[0] == "ov"), None) if self.steps[-1] else None
        foods = L.ANIMALS[self.hero.noun][2].split()
        if caught in foods:
            self.say(ko.transitive, lemma="먹다", obj=caught, obj_det="그 ", place="", adverb="")
        else:
            self.say(ko.animal_eats, food=self.pick([f for f in foods if f != caught] or foods))
        if self.chance(0.5):
            self.say(ko.intransitive, lemma=self.pick(["자다", "쉬다"]), optional=True)
        return self.steps

    def rainy_day(self):
        """어제 비가 왔다. 민수가 집에서 책을 읽었다. 그리고 일찍 잤다."""
        ko = self.ko
        self.begin(self.hero_person(), True)
        when = self.pick(L.STORY_START)
        weather = self.pick(["비가 왔다", "눈이 왔다", "바람이 불었다", "날씨가 추웠다"])
        self.aside(f"{when} {weather}.", set(), "weather")
        self.timed = True
        first = self.steps
        self.steps = []
        self.say(ko.transitive, lemma=self.pick(["읽다", "그리다", "듣다"]), place="집에서")
        self.steps = first + self.steps
        if self.chance(0.6):
            self.say(ko.intransitive, lemma=self.pick(["자다", "쉬다"]), optional=True)
        return self.steps
