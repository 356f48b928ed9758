"""The designed teaching corpus means what it says: scripts/meaning_checker.py, which shares
no code or word list with the generator, finds no error of any class in the shipped
text (a purchase in a cave, a sparrow eating a hamburger, a story that calls its known
hero 다은이 in every sentence, "at the room", a sentence written more than ten times), and
it does find each class in the sentences of the corpus that came before.

usage: test_corpus_meaning.py MHAVIZ [TEXT]   (TEXT: another designed text to judge, .txt
or .txt.gz; the binary is not needed, the argument keeps the other CLI tests' convention)
"""
import os
import sys

from checks import check, main

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import meaning_checker as M  # noqa: E402

SHIPPED = os.path.join(ROOT, "assets", "corpus", "train-designed.txt.gz")
TEXT = sys.argv[2] if len(sys.argv) > 2 else SHIPPED
LESSONS = ["고양이가 쥐를 잡았다.", "나는 어제 친구와 함께 영화를 봤다.", "저 고양이는 생선을 좋아한다.",
           "The cat sat on the mat.", "The keys to the cabinet are on the table.",
           "The animal didn't cross the street because it was too tired.", "I saw the man with the telescope."]

# Each class, as the corpus before this one wrote it, and as a person would say it.
CASES = {
    "story_hero_marked_new": ("다은이 기차를 탔다. 다은이 표를 샀다.", "다은이 기차를 탔다. 다은은 표를 샀다."),
    "story_object_without_geu": ("현우가 빵을 샀다. 현우는 빵을 먹었다.", "현우가 빵을 샀다. 현우는 그 빵을 먹었다."),
    "story_repeats_sentence": ("지우는 게임을 좋아했다. 지우는 게임을 좋아했다.", "지우는 게임을 좋아했다. 지우는 공부했다."),
    "story_time_backwards": ("할머니께서 어제 자동차를 타셨다. 할머니께서는 그저께 자동차를 타셨다.",
                             "할머니께서 그저께 자동차를 타셨다. 할머니께서는 어제 버스를 타셨다."),
    "motion_with_e": ("유나가 은행에 떠났다.", "유나가 서울로 떠났다."),
    "double_ro": ("농부가 버스로 도시로 이사했다.", "농부가 버스를 타고 도시로 이사했다."),
    "walk_with_transport": ("은비가 전철로 숲에 뛰어갔다.", "은비가 숲으로 뛰어갔다."),
    "together_alone": ("영희가 표를 함께 산다.", "영희가 민수와 함께 역에서 표를 산다."),
    "together_twice": ("형이 짝꿍과 함께 감자를 함께 씻었다.", "형이 짝꿍과 함께 감자를 씻었다."),
    "time_with_state": ("그저께 할머니께서 게임을 좋아하셨다.", "요즘 할머니께서 게임을 좋아하신다."),
    "purchase_outside_shop": ("간호사가 동굴에서 샐러드를 산다.", "간호사가 가게에서 샐러드를 산다."),
    "vehicle_purchase": ("다은이 기차를 샀다.", "다은이 기차를 탔다."),
    "animal_human_food": ("독수리가 햄버거를 먹는다.", "독수리가 쥐를 먹는다."),
    "animal_indoors": ("코끼리가 학교에서 울었다.", "코끼리가 동물원에서 울었다."),
    "keeps_wild_animal": ("승민이 호랑이를 키웠다.", "승민이 고양이를 키웠다."),
    "wrong_instrument": ("어머니께서 가위로 수박을 자르신다.", "어머니께서 칼로 수박을 자르신다."),
    "wrong_colour": ("개나리는 빨갛다.", "개나리는 노랗다."),
    "noun_as_name": ("하늘이 도시로 이사한다.", "하늘이 파랗다."),
    "en_at_in": ("The goat sleeps at the room.", "The goat sleeps on the farm."),
    "en_preposition": ("The woman of the maps is tired.", "The woman with the maps is tired."),
    "en_wild_pet": ("Max has a wolf.", "Max has a puppy."),
    "en_adjective": ("The donkey ate the green sandwich.", "The girl ate the fresh sandwich."),
}


def classes_caught(mhaviz, tmp):
    for name, (bad, good) in CASES.items():
        got_bad, _, _ = M.check_paragraphs([bad])
        got_good, _, _ = M.check_paragraphs([good])
        check(got_bad[name] >= 1, f"{name}: found in {bad!r} ({got_bad[name]})")
        wrong = {c: n for c, n in got_good.items() if n}
        check(not wrong, f"{name}: nothing found in {good!r} ({wrong})")
    # The cap: an eleventh copy of one sentence is an error, the tenth is not.
    counts, stats, _ = M.check_paragraphs(["아까 날씨가 추웠다."] * 11)
    check(counts["sentence_over_cap"] == 1 and stats["most_copies"] == 11, f"11 copies are one over the cap: {counts}")
    counts, _, _ = M.check_paragraphs(["아까 날씨가 추웠다."] * 10)
    check(counts["sentence_over_cap"] == 0, "10 copies are within the cap")
    check(set(CASES) | {"sentence_over_cap"} == set(M.CLASSES), "every class has a case")


def shipped_text(mhaviz, tmp):
    paragraphs = M.read_paragraphs(TEXT)
    counts, stats, found = M.check_paragraphs(paragraphs, exempt=LESSONS, examples=2)
    print(f"{os.path.basename(TEXT)}: {len(paragraphs):,} paragraphs; {stats}")
    for name in M.CLASSES:
        check(counts[name] == 0, f"{name}: {counts[name]} in the text {found.get(name, [])}")
    check(stats["korean_sentences"] > 50000 and stats["english_sentences"] > 30000,
          f"the text has both languages in numbers ({stats['korean_sentences']:,} Korean, "
          f"{stats['english_sentences']:,} English sentences)")


if __name__ == "__main__":
    main([classes_caught, shipped_text])
