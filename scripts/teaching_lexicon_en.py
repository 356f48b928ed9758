"""The English word lists of mhaviz-small's designed teaching corpus (scripts/make_teaching_corpus.py).

English is there for subject-verb agreement across an attractor (The keys to the cabinet
are ...) and for stories, so the lists are built around noun phrases: each noun has its
plural, its category and what it may be said to be (adjectives by category), and each
preposition the head nouns it follows (a key to a cabinet, a picture of a dog, a letter
from a girl), so the attractor phrases are ones a person would write.
"""


def nouns(text):
    return dict(x.split(":") for x in text.split())


PETS = nouns("cat:cats dog:dogs puppy:puppies kitten:kittens rabbit:rabbits hamster:hamsters parrot:parrots "
             "turtle:turtles")
FARM = nouns("horse:horses cow:cows pig:pigs goat:goats hen:hens duck:ducks donkey:donkeys")
WILD = nouns("tiger:tigers lion:lions bear:bears fox:foxes wolf:wolves monkey:monkeys elephant:elephants "
             "giraffe:giraffes zebra:zebras camel:camels penguin:penguins owl:owls squirrel:squirrels")
SMALL = nouns("bird:birds bee:bees butterfly:butterflies spider:spiders frog:frogs")
ANIMALS = {**PETS, **FARM, **WILD, **SMALL}
# What each animal eats, and where it is (in: in the garden; at: at the zoo).
ANIMAL_FOOD = {"cat": "fish", "dog": "meat", "puppy": "meat", "kitten": "fish", "rabbit": "carrots",
               "hamster": "seeds", "parrot": "seeds", "turtle": "leaves", "horse": "apples", "cow": "grass",
               "pig": "potatoes", "goat": "grass", "hen": "seeds", "duck": "seeds", "donkey": "carrots",
               "tiger": "meat", "lion": "meat", "bear": "honey", "fox": "meat", "wolf": "meat", "monkey": "bananas",
               "elephant": "grass", "giraffe": "leaves", "zebra": "grass", "camel": "grass", "penguin": "fish",
               "owl": "mice", "squirrel": "nuts", "bird": "seeds", "bee": "honey", "butterfly": "honey",
               "spider": "flies", "frog": "flies"}
ANIMAL_PLACES = {"pet": "in the garden|in the yard|in the house|in the kitchen|in the park",
                 "farm": "on the farm|in the field",
                 "wild": "at the zoo|in the forest",
                 "small": "in the garden|in the field|in the park"}
PEOPLE = nouns("child:children boy:boys girl:girls man:men woman:women student:students teacher:teachers "
               "friend:friends baby:babies farmer:farmers doctor:doctors nurse:nurses cook:cooks singer:singers "
               "painter:painters driver:drivers neighbour:neighbours sister:sisters brother:brothers uncle:uncles "
               "aunt:aunts player:players visitor:visitors")
FOOD = nouns("apple:apples cake:cakes cookie:cookies egg:eggs banana:bananas orange:oranges pear:pears "
             "potato:potatoes carrot:carrots sandwich:sandwiches pie:pies tomato:tomatoes peach:peaches "
             "plum:plums lemon:lemons")
CONTAINERS = nouns("box:boxes bag:bags basket:baskets drawer:drawers cup:cups bowl:bowls bottle:bottles "
                   "bucket:buckets cabinet:cabinets jar:jars")
SURFACES = nouns("table:tables shelf:shelves chair:chairs bed:beds desk:desks")
SMALL_THINGS = nouns("key:keys ball:balls hat:hats book:books toy:toys doll:dolls pencil:pencils pen:pens "
                     "shoe:shoes sock:socks coat:coats umbrella:umbrellas letter:letters picture:pictures map:maps "
                     "ring:rings spoon:spoons plate:plates kite:kites candle:candles card:cards photo:photos "
                     "glass:glasses pillow:pillows blanket:blankets lamp:lamps clock:clocks")
BIG_THINGS = nouns("door:doors window:windows tree:trees car:cars bicycle:bicycles house:houses")
THINGS = {**CONTAINERS, **SURFACES, **SMALL_THINGS, **BIG_THINGS}
ALL_NOUNS = {**ANIMALS, **PEOPLE, **FOOD, **THINGS}
CATEGORY = {**{n: "animal" for n in ANIMALS}, **{n: "person" for n in PEOPLE}, **{n: "food" for n in FOOD},
            **{n: "thing" for n in THINGS}}

# Adjectives by category (a red apple, a wooden box, a hungry dog; never a wooden apple).
ADJ = {
    "animal": "small big little old young hungry happy sleepy".split(),
    "person": "tall young old happy kind busy tired".split(),
    "food": "fresh sweet small big ripe".split(),
    "thing": "old new small big red blue green yellow heavy wooden broken clean".split(),
}
FOOD_COLOUR = {"apple": "red green", "banana": "yellow", "lemon": "yellow", "tomato": "red", "pear": "green",
               "plum": "red"}
NOT_WOODEN = {"glass", "glasses", "candle", "letter", "card", "photo", "picture", "map", "sock", "coat", "blanket",
              "pillow", "book", "kite", "umbrella", "tree", "car", "bicycle", "house", "ring", "key", "cup", "bottle",
              "jar", "shoe", "hat", "clock", "lamp", "ball", "doll", "pen", "pencil", "toy"}

# Attractor frames: preposition -> (head nouns it follows, attractor nouns it takes).
PREP_FRAMES = {
    "to": (["key", "door"], ["cabinet", "box", "house", "car", "drawer"]),
    "of": (["picture", "photo", "map"], list(ANIMALS) + list(PEOPLE) + ["house", "tree"]),
    "from": (["letter", "card"], list(PEOPLE)),
    "in": (list(SMALL_THINGS)[:8] + list(FOOD), list(CONTAINERS)),
    "on": (list(SMALL_THINGS) + list(FOOD), list(SURFACES)),
    "near": (None, list(SURFACES) + list(BIG_THINGS) + list(CONTAINERS)),
    "behind": (None, list(SURFACES) + list(BIG_THINGS)),
    "beside": (None, list(SURFACES) + list(BIG_THINGS) + list(PEOPLE)),
    "under": (list(SMALL_THINGS) + list(PETS) + ["spider", "frog"], list(SURFACES) + ["tree", "car"]),
    "next to": (None, list(SURFACES) + list(BIG_THINGS) + list(PEOPLE)),
    "with": (list(PEOPLE) + list(CONTAINERS), list(SMALL_THINGS)[:14] + list(PETS)),
}
# Relative clauses: "The keys that the man lost", "The dogs that the girl feeds".
RC_VERBS = {  # verb: (3rd singular, plural/base, past), heads it takes
    "lose": ("loses", "lose", "lost", list(SMALL_THINGS)),
    "find": ("finds", "find", "found", list(SMALL_THINGS) + list(PETS)),
    "like": ("likes", "like", "liked", list(ANIMALS) + list(FOOD) + list(SMALL_THINGS)),
    "see": ("sees", "see", "saw", list(ANIMALS) + list(PEOPLE) + list(BIG_THINGS)),
    "feed": ("feeds", "feed", "fed", list(PETS) + list(FARM)),
    "make": ("makes", "make", "made", ["cake", "cookie", "pie", "sandwich", "kite", "toy", "basket", "box"]),
    "help": ("helps", "help", "helped", list(PEOPLE)),
    "wash": ("washes", "wash", "washed", ["cup", "plate", "bowl", "spoon", "glass", "apple", "car", "dog"]),
}
# What a subject of each category may be said to be, or do (singular, plural).
BE_PRED = {
    "animal": ["hungry", "asleep", "very quiet", "happy", "tired", "small", "big"],
    "person": ["happy", "very kind", "tired", "busy", "here", "at school", "in the kitchen"],
    "food": ["fresh", "sweet", "ready", "on the table", "in the basket"],
    "thing": ["very old", "new"],
}
# What a thing may be said to be, by what it is (a door is not on the shelf, a letter not broken).
THING_PRED = {
    "big": ["broken", "big", "very old", "new", "red", "clean"],
    "surface": ["too heavy", "broken", "in the room", "very old", "new", "clean"],
    "container": ["on the table", "on the shelf", "too heavy", "empty", "broken", "new"],
    "paper": ["on the table", "in the box", "on the shelf", "very old", "new"],
    "soft": ["on the bed", "in the box", "very old", "new", "clean"],
    "small": ["on the table", "in the box", "on the shelf", "by the door", "under the bed", "broken", "new"],
}
PAPER = {"letter", "card", "photo", "picture", "map", "book"}
SOFT = {"pillow", "blanket", "sock", "coat", "hat", "doll"}
VERB_PRED = {  # (singular, plural) predicate verbs by head category
    "animal": [("sleeps", "sleep"), ("plays", "play"), ("runs", "run"), ("eats", "eat")],
    "person": [("sings", "sing"), ("works", "work"), ("smiles", "smile"), ("reads", "read"), ("waits", "wait")],
    "food": [("looks fresh", "look fresh"), ("tastes sweet", "taste sweet")],
    "thing": [("looks new", "look new"), ("looks old", "look old")],
}
NAMES_HE = "Tom Ben Leo Sam Max Noah Jack Alex Finn Theo".split()
NAMES_SHE = "Mina Sara Jisu Anna Lily Emma Yuna Mia Nora Rosa".split()
# Places by the preposition they take.
PLACES = {"in": ["the park", "the garden", "the kitchen", "the forest", "the room", "the city", "the village",
                 "the yard", "the field", "the classroom", "the library", "the shop"],
          "at": ["the school", "the station", "the market", "the zoo", "the lake", "the playground", "the library",
                 "the shop", "the beach"],
          "on": ["the farm", "the hill", "the beach"]}
# Verbs of simple sentences: (3rd singular, past), objects, and who does them.
EN_VERBS = {
    "read": (("reads", "read"), ["book", "letter", "map", "card"], "person"),
    "write": (("writes", "wrote"), ["letter", "card"], "person"),
    "buy": (("buys", "bought"), list(FOOD) + ["book", "hat", "ball", "toy", "kite", "cup", "lamp"], "person"),
    "eat": (("eats", "ate"), list(FOOD), "person"),
    "carry": (("carries", "carried"), list(CONTAINERS)[:6] + ["book", "ball"], "person"),
    "open": (("opens", "opened"), ["box", "door", "window", "bag", "drawer", "bottle", "cabinet"], "person"),
    "close": (("closes", "closed"), ["box", "door", "window", "bag", "drawer", "cabinet"], "person"),
    "wash": (("washes", "washed"), ["cup", "plate", "bowl", "spoon", "apple", "car", "dog"], "person"),
    "find": (("finds", "found"), list(SMALL_THINGS)[:12], "person"),
    "lose": (("loses", "lost"), list(SMALL_THINGS)[:12], "person"),
    "paint": (("paints", "painted"), ["door", "chair", "table", "picture", "box", "house"], "person"),
    "make": (("makes", "made"), ["cake", "cookie", "pie", "sandwich", "kite", "toy", "basket"], "person"),
    "help": (("helps", "helped"), list(PEOPLE), "person"),
    "meet": (("meets", "met"), list(PEOPLE), "person"),
    "feed": (("feeds", "fed"), list(PETS) + list(FARM), "person"),
    "see": (("sees", "saw"), list(ANIMALS) + list(PEOPLE), "any"),
    "chase": (("chases", "chased"), ["cat", "bird", "ball", "butterfly", "squirrel"], "dog"),
}
EN_INTRANSITIVE = {"sleep": ("sleeps", "slept"), "play": ("plays", "played"), "run": ("runs", "ran"),
                   "sing": ("sings", "sang"), "laugh": ("laughs", "laughed"), "walk": ("walks", "walked"),
                   "wait": ("waits", "waited"), "rest": ("rests", "rested"), "dance": ("dances", "danced"),
                   "swim": ("swims", "swam"), "jump": ("jumps", "jumped")}
ANIMAL_INTRANSITIVE = ["sleep", "play", "run", "rest", "jump"]
TIME_PAST = ["yesterday", "this morning", "last week", "last night"]
TIME_PRESENT = ["every day", "every morning", "today", "now"]
LESSON_SENTENCES_EN = ["The cat sat on the mat.", "The keys to the cabinet are on the table.",
                       "The animal didn't cross the street because it was too tired.",
                       "I saw the man with the telescope."]
