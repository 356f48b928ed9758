"""English sentences and stories of mhaviz-small's designed teaching corpus.

Most English sentences are there for subject-verb agreement across an attractor: a
subject whose head noun is one number and whose attractor, closer to the verb, is often
the other (The keys to the old cabinet are ...; The dog that the children feed is ...),
in several frames and at several distances. The rest are simple sentences and short
stories with the same restrictions of meaning as the Korean ones (pets only, in/at by
place, adjectives by category).

Each sentence comes with its keys: ("agr", subject noun, other noun) for every other noun
in it, so the minimal pairs' held-out combinations of head and attractor stay out.
"""
import teaching_lexicon_en as E

HE_SHE = {**{n: "he" for n in E.NAMES_HE}, **{n: "she" for n in E.NAMES_SHE}}
IN_HEADS = ["key", "ring", "pencil", "pen", "spoon", "card", "photo", "ball", "toy", "sock", "doll"] + list(E.FOOD)
IN_CONTAINERS = ["box", "bag", "basket", "drawer", "cabinet", "bucket"]
WITH_PERSON = ["hat", "bag", "ball", "kite", "umbrella", "book", "doll", "toy"] + list(E.PETS)
WITH_CONTAINER = ["key", "ring", "toy", "book", "doll", "ball", "card", "photo"] + list(E.FOOD)
PLACE_BY_VERB = {
    "read": ["in the library", "in the room", "in the park"], "write": ["in the room", "in the classroom"],
    "buy": ["at the market", "at the shop"], "eat": ["in the kitchen", "in the park"],
    "feed": ["on the farm", "in the garden", "in the yard"], "wash": ["in the kitchen"],
    "find": ["in the park", "in the room", "at school"], "lose": ["in the park", "at school"],
    "paint": ["in the yard", "in the room"], "make": ["in the kitchen", "in the classroom"],
    "help": ["at school", "in the kitchen", "on the farm"], "meet": ["at school", "at the station", "in the park"],
    "see": ["in the park", "at the zoo", "on the farm"], "carry": ["at the station", "in the park"],
    "open": [], "close": [], "chase": ["in the garden", "in the park"],
    "sleep": ["in the room", "in the house"], "play": ["in the park", "at the playground", "in the yard"],
    "run": ["in the park", "in the field"], "sing": ["in the classroom", "at school"], "laugh": [],
    "walk": ["in the park", "in the forest", "on the beach", "on the hill"], "wait": ["at the station", "at school"],
    "rest": ["in the garden", "in the room"], "dance": ["in the room", "at school"],
    "swim": ["in the lake", "at the beach"], "jump": ["in the yard", "in the park"],
}


FORMS = {**{s: s for s in E.ALL_NOUNS}, **{p: s for s, p in E.ALL_NOUNS.items()}}


def noun_keys(paragraph):
    """("agr", a, b) for every two nouns that share a sentence of the paragraph, both ways
    round: a held-out head and attractor then never meet, whichever is the subject."""
    keys = set()
    for sentence in paragraph.split(". "):
        nouns = {FORMS[w] for w in sentence.rstrip(".").lower().split() if w in FORMS}
        keys |= {("agr", a, b) for a in nouns for b in nouns if a != b}
    return keys


def article(word):
    return ("an " if word[0] in "aeiou" else "a ") + word


class En:
    def __init__(self, rng):
        self.rng = rng
        self.copies, self.cap = None, None  # as Ko's: a story leaves out a line the corpus has enough of

    def at_cap(self, sentence):
        return self.copies is not None and self.copies[sentence] >= self.cap

    def pick(self, seq):
        return seq[self.rng.randrange(len(seq))]

    def chance(self, p):
        return self.rng.random() < p

    def adj(self, noun, p=0.3):
        """An adjective that suits the noun's category, or ""."""
        if not self.chance(p):
            return ""
        cat = E.CATEGORY[noun]
        pool = E.ADJ[cat]
        if cat == "food":
            pool = pool + E.FOOD_COLOUR.get(noun, "").split()
        if cat == "thing" and noun in E.NOT_WOODEN:
            pool = [a for a in pool if a != "wooden"]
        return self.pick(pool) + " "

    def form(self, noun, plural):
        return E.ALL_NOUNS[noun] if plural else noun

    # ------------------------------------------------------------ the attractor's frames
    def attractor_frame(self, head=None, attractor=None):
        """(prep, heads, attractors) of a frame that takes `head` (and `attractor`)."""
        frames = [
            ("to", ["key"], ["cabinet", "box", "house", "car", "drawer"]),
            ("to", ["door"], ["house", "car", "cabinet"]),
            ("of", ["picture", "photo"], list(E.ANIMALS) + list(E.PEOPLE) + ["house", "tree"]),
            ("of", ["door", "window"], ["house", "car", "cabinet"]),
            ("from", ["letter", "card"], list(E.PEOPLE)),
            ("in", IN_HEADS, IN_CONTAINERS),
            ("on", list(E.SMALL_THINGS) + list(E.FOOD), list(E.SURFACES)),
            ("near", list(E.ANIMALS) + list(E.PEOPLE) + list(E.THINGS), list(E.SURFACES) + list(E.BIG_THINGS)),
            ("behind", list(E.ANIMALS) + list(E.PEOPLE) + list(E.SMALL_THINGS), list(E.SURFACES) + list(E.BIG_THINGS)),
            ("beside", list(E.ANIMALS) + list(E.PEOPLE), list(E.PEOPLE) + list(E.SURFACES)),
            ("next to", list(E.PEOPLE) + list(E.PETS), list(E.PEOPLE) + list(E.BIG_THINGS)),
            ("under", list(E.SMALL_THINGS) + list(E.PETS), list(E.SURFACES) + ["tree", "car"]),
            ("with", list(E.PEOPLE), WITH_PERSON),
            ("with", ["box", "bag", "basket"], WITH_CONTAINER),
        ]
        ok = [f for f in frames if (head is None or head in f[1]) and (attractor is None or attractor in f[2])]
        return self.pick(ok) if ok else None

    def rc_frames(self, head=None, attractor=None):
        """Relative clauses: ("obj", verb) for "The H that the A verb"; ("subj", verb) for
        "The H who verb the A" (H a person)."""
        out = []
        for v, (third, base, past, heads) in E.RC_VERBS.items():
            if (head is None or head in heads) and (attractor is None or attractor in E.PEOPLE):
                out.append(("obj", v))
            if (head is None or head in E.PEOPLE) and (attractor is None or attractor in heads):
                out.append(("subj", v))
        return out

    def subject_np(self, head, plural, attractor, a_plural, kind):
        """"The keys to the old cabinet" / "The dog that the children feed" / "The girl who feeds the cats"."""
        h = self.adj(head, 0.2) + self.form(head, plural)
        a = self.adj(attractor, 0.4) + self.form(attractor, a_plural)
        if kind[0] == "pp":
            return f"The {h} {kind[1]} the {a}"
        third, base, past, _ = E.RC_VERBS[kind[1]]
        if kind[0] == "obj":
            verb = past if self.chance(0.4) else (base if a_plural else third)
            return f"The {h} that the {a} {verb}"
        verb = past if self.chance(0.4) else (base if plural else third)
        return f"The {h} who {verb} the {a}"

    def predicate(self, head, plural, past, exclude=(), no_place=False):
        """(the agreeing verb, the rest): ("are", "on the table"), ("sleep", "")."""
        cat = E.CATEGORY[head]
        if self.chance(0.75) or past:
            preds = E.BE_PRED[cat] if cat != "thing" else E.THING_PRED[self.thing_kind(head)]
            if no_place:
                preds = [p for p in preds if not p.startswith(("on ", "in ", "under ", "by ", "at "))] or ["new"]
            for _ in range(10):
                rest = self.pick(preds)
                if not any(x in rest for x in exclude):
                    break
            verb = ("were" if plural else "was") if past else ("are" if plural else "is")
            return verb, rest
        sing, plur = self.pick(E.VERB_PRED[cat])
        verb, _, rest = (plur if plural else sing).partition(" ")
        return verb, rest

    @staticmethod
    def thing_kind(noun):
        if noun in E.BIG_THINGS:
            return "big"
        if noun in E.SURFACES:
            return "surface"
        if noun in E.CONTAINERS:
            return "container"
        return "paper" if noun in E.PAPER else "soft" if noun in E.SOFT else "small"

    def agreement(self, head=None, attractor=None, plural=None, a_plural=None, past=None, kind=None):
        """(subject, verb, rest, keys) of an agreement sentence; None if the frame does not fit."""
        plural = self.chance(0.5) if plural is None else plural
        if a_plural is None:
            a_plural = (not plural) if self.chance(0.7) else plural
        past = self.chance(0.25) if past is None else past
        if kind is None:
            if self.chance(0.3):
                rcs = self.rc_frames(head, attractor)
                if rcs:
                    kind = self.pick(rcs)
            if kind is None:
                f = self.attractor_frame(head, attractor)
                if f is None:
                    return None
                kind = ("pp", f[0])
                head = head or self.pick(f[1])
                attractor = attractor or self.pick([a for a in f[2] if a != head])
        if kind[0] != "pp":
            heads = E.RC_VERBS[kind[1]][3]
            if kind[0] == "obj":
                head = head or self.pick(heads)
                attractor = attractor or self.pick(list(E.PEOPLE))
            else:
                head = head or self.pick(list(E.PEOPLE))
                attractor = attractor or self.pick([x for x in heads if x != head])
        if head == attractor or head not in E.ALL_NOUNS or E.ALL_NOUNS[head] == head:
            return None
        subject = self.subject_np(head, plural, attractor, a_plural, kind)
        located = kind[0] == "pp" and kind[1] not in ("to", "of", "from", "with")
        verb, rest = self.predicate(head, plural, past, exclude=tuple(subject.lower().split()[1:]), no_place=located)
        nouns = {attractor} | {n for n in E.ALL_NOUNS if f" {n} " in f" {rest} " or f" {E.ALL_NOUNS[n]} " in f" {rest} "}
        keys = {("agr", head, n) for n in nouns if n != head}
        return subject, verb, rest, keys, attractor

    def agreement_sentence(self):
        out = self.agreement()
        if out is None:
            return None
        subject, verb, rest, keys, attractor = out
        f = self.attractor_frame(head=attractor)
        if f and self.chance(0.15) and subject.endswith(E.ALL_NOUNS[attractor] if subject.endswith("s") else attractor):
            # a second attractor, further from the head: The keys to the cabinet near the windows
            extra = self.pick([a for a in f[2] if a != attractor])
            subject += f" {f[0]} the {self.form(extra, self.chance(0.5))}"
            keys |= {(k[0], k[1], extra) for k in keys}
        return " ".join(x for x in (subject, verb, rest) if x) + ".", keys

    # ------------------------------------------------------------ simple sentences
    def subject(self, kind=None):
        """(phrase, plural, noun or name, kind)."""
        kind = kind or self.pick(["name", "person", "person", "animal"])
        if kind == "name":
            n = self.pick(E.NAMES_HE + E.NAMES_SHE)
            return n, False, n, "name"
        pool = list(E.PEOPLE) if kind == "person" else list(E.ANIMALS)
        n = self.pick(pool)
        plural = self.chance(0.4)
        return f"the {self.adj(n, 0.15)}{self.form(n, plural)}", plural, n, kind

    def simple(self, subj=None, past=None):
        past = self.chance(0.5) if past is None else past
        phrase, plural, noun, kind = subj or self.subject()
        keys = set()
        if kind == "animal":
            r = self.rng.random()
            if r < 0.4:
                v, obj = "eat", E.ANIMAL_FOOD[noun]
                forms = ("eats", "ate")
            elif r < 0.5 and noun in ("dog", "puppy"):
                v = "chase"
                forms, objs, _ = E.EN_VERBS[v]
                obj = "the " + self.pick(objs)
            else:
                v = self.pick(E.ANIMAL_INTRANSITIVE)
                forms, obj = E.EN_INTRANSITIVE[v], ""
            kind_places = next(k for k, d in (("pet", E.PETS), ("farm", E.FARM), ("wild", E.WILD), ("small", E.SMALL))
                               if noun in d)
            place = self.pick(E.ANIMAL_PLACES[kind_places].split("|")) if self.chance(0.5) else ""
        else:
            if self.chance(0.7) and noun != "baby":
                v = self.pick([v for v, (_, _, who) in E.EN_VERBS.items() if who in ("person", "any")])
                forms, objs, _ = E.EN_VERBS[v]
                o = self.pick(objs)
                if o == noun:
                    return None
                o_plural = self.chance(0.3)
                obj = f"the {self.adj(o, 0.3)}{self.form(o, o_plural)}"
                keys |= {("agr", noun, o)}
            else:
                v = self.pick(list(E.EN_INTRANSITIVE))
                forms, obj = E.EN_INTRANSITIVE[v], ""
            places = PLACE_BY_VERB.get(v, [])
            place = self.pick(places) if places and self.chance(0.5) else ""
        verb = forms[1] if past else (v if plural else forms[0])
        when = ""
        if self.chance(0.2):
            when = self.pick(E.TIME_PAST if past else E.TIME_PRESENT)
        words = [phrase[0].upper() + phrase[1:], verb, obj, place, when]
        return " ".join(w for w in words if w) + ".", keys

    # ------------------------------------------------------------ stories
    def story(self):
        """Mia has a puppy. She feeds it every morning. The puppy sleeps in the garden."""
        name = self.pick(E.NAMES_HE + E.NAMES_SHE)
        he = HE_SHE[name]
        out = []
        if self.chance(0.5):
            pet = self.pick(list(E.PETS))
            adj = self.pick(["", "", "little ", "young ", "old ", "small ", "big ", "happy "])
            out.append(f"{name} has {article(adj + pet)}.")
            lines = [f"{he.capitalize()} feeds it every {self.pick(['morning', 'evening', 'day'])}.",
                     f"The {pet} eats {E.ANIMAL_FOOD[pet]}.",
                     f"The {pet} sleeps {self.pick(['in the house', 'in the garden', 'in the kitchen'])}.",
                     f"{he.capitalize()} plays with the {pet} {self.pick(['in the garden', 'in the park', 'in the yard'])}.",
                     f"The {pet} is {self.pick(['very small', 'happy', 'hungry', 'sleepy', 'old', 'young'])}."]
            keys = {("agr", pet, "x")}
        else:
            shop, goods = self.pick([("the market", list(E.FOOD)), ("the shop", ["book", "hat", "ball", "kite", "cup"])])
            thing = self.pick(goods)
            plural = self.chance(0.5)
            it = "them" if plural else "it"
            when = self.pick(["yesterday", "last week", "this morning", "on Sunday", "after school",
                              "in the afternoon", "last night"])
            out.append(f"{name} went to {shop} {when}.")
            use = {"food": f"ate {it} in the kitchen", "book": f"read {it} in the room", "hat": f"wore {it} to school",
                   "ball": f"played with {it} in the park", "kite": f"flew {it} in the park",
                   "cup": f"washed {it} in the kitchen"}
            lines = [f"{he.capitalize()} bought {self.form(thing, plural) if plural else article(thing)} there.",
                     f"Then {he} went home.",
                     f"Later {he} {use.get(E.CATEGORY[thing], use.get(thing))}."]
            # Each line needs the one before it (what was bought): stop at the first the
            # corpus has enough of.
            for line in lines[:1 + self.rng.randrange(3)]:
                if self.at_cap(line):
                    break
                out.append(line)
            return (" ".join(out), set()) if len(out) > 1 else None
        self.rng.shuffle(lines)
        out += [line for line in lines[:1 + self.rng.randrange(3)] if not self.at_cap(line)]
        return (" ".join(out), keys) if len(out) > 1 else None

    def sentence(self):
        return self.agreement_sentence() if self.chance(0.7) else self.simple()
