#!/usr/bin/python3
"""Builds mhaviz-small's bilingual corpus and trains its SentencePiece tokenizer.

Sources (Debian 12 packages; licences in assets/corpus/LICENSES.md):
  Korean   libreoffice-help-ko (help pages, MPL-2.0) and the Korean side of the
           translation catalogues (.mo) of installed packages (each package's licence)
  English  libreoffice-help-en-us (the same pages, MPL-2.0), the English side of the same
           catalogues, sword-text-web (World English Bible, public domain, footnotes
           removed) and fortunes (BSD)

Cleaning: markup and shortcut markers stripped, printf placeholders removed, whitespace
collapsed, NFC, exact duplicates dropped, lines without letters dropped. English is capped
at about twice Korean's characters (an English piece covers about twice as many
characters), so both languages give the model a similar number of pieces. Every 20th
document (by a hash of its name) is held out for validation, whole, so no page is on
both sides. The training paragraphs are shuffled, then laid out in runs of one language
(corpus_order.py); the validation paragraphs are shuffled.

Writes DIR/train.txt.gz and DIR/valid.txt.gz (UTF-8, one paragraph a line), DIR/stats.json, and with
--tokenizer PREFIX runs spm_train (the sentencepiece package) on train.txt:

  /usr/bin/python3 scripts/build_corpus.py --out assets/corpus \\
      --tokenizer assets/models/mhaviz-small
"""
import argparse
import gettext
import glob
import gzip
import hashlib
import html
import html.parser
import json
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import unicodedata
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus_order  # noqa: E402

LO_HELP = "/usr/share/libreoffice/help"
MO_GLOBS = ["/usr/share/locale/ko/LC_MESSAGES/*.mo", "/usr/share/locale-langpack/ko/LC_MESSAGES/*.mo",
            "/usr/lib/libreoffice/program/resource/ko/LC_MESSAGES/*.mo"]
WEB = "/usr/share/sword/modules/texts/ztext/engWEB2015eb"
FORTUNES = "/usr/share/games/fortunes"
# The fortunes files Debian's "fortunes" package installs, not the offensive set.
FORTUNE_FILES = ["art", "computers", "cookie", "definitions", "disclaimer", "education", "ethnic", "food",
                 "fortunes", "goedel", "humorists", "kids", "law", "linuxcookie", "literature", "love",
                 "magic", "medicine", "men-women", "miscellaneous", "news", "people", "pets", "platitudes",
                 "politics", "riddles", "science", "songs-poems", "sports", "startrek", "translate-me",
                 "wisdom", "work", "zippy"]
HOLDOUT = 20          # every 20th document goes to validation
ENGLISH_PER_KOREAN = 2.0  # English characters per Korean character kept
SPM_VOCAB = 4000

HANGUL = re.compile(r"[\uac00-\ud7a3]")
LETTER = re.compile(r"[A-Za-z\uac00-\ud7a3]")
PRINTF = re.compile(r"%(\d+\$)?[-+ #0]*\d*(\.\d+)?(hh|h|ll|l|L|z|j|t|I64)?[diouxXeEfgGcsSpn]|%[A-Za-z_]*\{[^}]*\}|"
                    r"\$\([A-Za-z_]+\)|\$[A-Z_]{2,}\$?|\{[A-Za-z_0-9]*\}|%[0-9]")


def clean(text):
    """One paragraph as the model sees it: NFC, one space between words."""
    text = html.unescape(text)
    text = unicodedata.normalize("NFC", text)
    text = text.replace("\u00a0", " ").replace("\u200b", "")
    text = "".join(c if unicodedata.category(c)[0] != "C" else " " for c in text)
    return re.sub(r"\s+", " ", text).strip()


class HelpText(html.parser.HTMLParser):
    """The paragraphs, headings, list items and table cells of one help page."""

    BLOCKS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "td", "th", "div"}
    SKIP = {"script", "style", "header", "aside", "pre", "code", "noscript"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.paragraphs, self.buf, self.skip = [], [], 0

    def flush(self):
        text = clean("".join(self.buf))
        if text:
            self.paragraphs.append(text)
        self.buf = []

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.skip += 1
        elif tag in self.BLOCKS:
            self.flush()
        elif tag == "br":
            self.buf.append(" ")

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag in self.BLOCKS:
            self.flush()

    def handle_data(self, data):
        if not self.skip:
            self.buf.append(data)


def help_pages(lang):
    """(document name, paragraphs) of every help page of one language."""
    root = os.path.join(LO_HELP, lang, "text")
    for path in sorted(glob.glob(os.path.join(root, "**", "*.html"), recursive=True)):
        parser = HelpText()
        with open(path, encoding="utf-8") as f:
            parser.feed(f.read())
        parser.flush()
        yield "help:" + os.path.relpath(path, root), parser.paragraphs


def clean_ui(s):
    """A UI string: no ~ or _ or & shortcut markers, placeholders, markup or ellipsis dots."""
    s = re.sub(r"<[^>]+>", " ", s)
    s = re.sub(r"\(~?_?&?[A-Za-z0-9]\)", "", s)  # Korean shortcuts: "열기(_O)", "파일(~F)"
    s = re.sub(r"[~&](?=\w)", "", s)
    s = re.sub(r"(?<![A-Za-z0-9])_(?=[\w\uac00-\ud7a3])", "", s)
    s = PRINTF.sub(" ", s)
    s = s.replace("\\n", " ").replace("\\t", " ")
    s = re.sub(r"([\"'“‘«])\s*([\"'”’»])", " ", s)  # quotes left around a removed placeholder
    s = re.sub(r"\.\.\.$|…$", "", s.strip())
    return clean(s)


def catalogue_pairs():
    """(document name, [English], [Korean]) per .mo file: its English→Korean string pairs."""
    seen = set()
    for pattern in MO_GLOBS:
        for path in sorted(glob.glob(pattern)):
            name = os.path.basename(path)
            if name in seen:
                continue
            seen.add(name)
            try:
                with open(path, "rb") as f:
                    catalog = gettext.GNUTranslations(f)._catalog
            except Exception as e:  # a broken catalogue is skipped, not fatal
                print(f"skipping {path}: {e}", file=sys.stderr)
                continue
            en, ko = [], []
            for key, value in sorted(catalog.items(), key=lambda kv: str(kv[0])):
                msgid = key[0] if isinstance(key, tuple) else key
                if not msgid or not value or "\x04" in msgid and msgid.endswith("\x04"):
                    continue
                msgid = msgid.split("\x04")[-1]  # drop a msgctxt
                e, k = clean_ui(msgid), clean_ui(value)
                if LETTER.search(e) and HANGUL.search(k):
                    en.append(e)
                    ko.append(k)
            yield "mo:" + name, en, ko


def web_bible():
    """(document name, paragraphs) per book chapter of the World English Bible."""
    for testament in ("ot", "nt"):
        def read(ext):
            with open(os.path.join(WEB, testament + ext), "rb") as f:
                return f.read()
        bzs, bzv, bzz = read(".bzs"), read(".bzv"), read(".bzz")
        blocks = [struct.unpack_from("<III", bzs, i) for i in range(0, len(bzs), 12)]
        cache = {}
        chapter, name, paragraph, n = [], None, "", 0
        for i in range(0, len(bzv), 10):
            block, start, size = struct.unpack_from("<IIH", bzv, i)
            if size == 0:
                continue
            if block not in cache:
                cache.clear()
                off, length, _ = blocks[block]
                cache[block] = zlib.decompress(bzz[off:off + length])
            osis = cache[block][start:start + size].decode("utf-8")
            m = re.search(r'<chapter [^>]*osisID="([^"]+)"', osis)
            if m:
                if paragraph:
                    chapter.append(paragraph)
                if chapter:
                    yield "web:" + name, chapter
                chapter, name, paragraph = [], m.group(1), ""
                continue
            osis = re.sub(r"<note\b.*?</note>", " ", osis, flags=re.S)
            osis = re.sub(r"<title\b.*?</title>", " ", osis, flags=re.S)
            verse = clean(re.sub(r"<[^>]+>", "", osis))
            if not verse or name is None:
                continue
            paragraph = (paragraph + " " + verse).strip()
            if len(paragraph) >= 400:
                chapter.append(paragraph)
                paragraph = ""
        if paragraph:
            chapter.append(paragraph)
        if chapter:
            yield "web:" + name, chapter


def fortunes():
    """(document name, fortunes) per file, each fortune one paragraph."""
    for name in FORTUNE_FILES:
        path = os.path.join(FORTUNES, name)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            items = f.read().split("\n%\n")
        # A file is one document for the split; cut it in chunks so it is not all on one side.
        for start in range(0, len(items), 50):
            yield f"fortune:{name}:{start}", [clean(t) for t in items[start:start + 50]]


def held_out(doc):
    return int(hashlib.sha256(doc.encode()).hexdigest(), 16) % HOLDOUT == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="directory for train.txt, valid.txt, stats.json")
    ap.add_argument("--tokenizer", help="model prefix for spm_train (writes PREFIX.model, PREFIX.vocab)")
    args = ap.parse_args()

    korean, english = [], []  # (document, paragraphs)
    for doc, paras in help_pages("ko"):
        korean.append((doc, paras))
    for doc, paras in help_pages("en-US"):
        english.append((doc, paras))
    for doc, en, ko in catalogue_pairs():
        korean.append((doc, ko))
        english.append((doc, en))
    other_english = list(web_bible()) + list(fortunes())

    def keep(docs, lang_ok):
        seen, out = set(), []
        for doc, paras in docs:
            kept = []
            for p in paras:
                if p in seen or not LETTER.search(p) or not lang_ok(p):
                    continue
                seen.add(p)
                kept.append(p)
            if kept:
                out.append((doc, kept))
        return out

    is_korean = lambda p: HANGUL.search(p) is not None
    is_english = lambda p: HANGUL.search(p) is None
    korean = keep(korean, is_korean)
    english = keep(english + other_english, is_english)

    # English capped at ENGLISH_PER_KOREAN x Korean's characters, taking a fixed shuffled
    # order of documents so every source contributes.
    ko_chars = sum(len(p) for _, ps in korean for p in ps)
    budget = ENGLISH_PER_KOREAN * ko_chars
    random.Random(15).shuffle(english)
    capped, used = [], 0
    for doc, paras in english:
        if used >= budget:
            break
        capped.append((doc, paras))
        used += sum(len(p) for p in paras)
    english = capped

    train, valid = [], []
    stats = {"korean": {}, "english": {}}
    for lang, docs in (("korean", korean), ("english", english)):
        for doc, paras in docs:
            (valid if held_out(doc) else train).extend(paras)
            src = doc.split(":")[0]
            s = stats[lang].setdefault(src, {"paragraphs": 0, "characters": 0})
            s["paragraphs"] += len(paras)
            s["characters"] += sum(len(p) for p in paras)
    random.Random(16).shuffle(train)
    # Runs of one language (corpus_order.py): a page stays in its language, and the model
    # learns to go on in its language after a paragraph. The held-out text stays shuffled.
    train = corpus_order.language_runs(train, 18)
    random.Random(17).shuffle(valid)
    for lang in ("korean", "english"):
        stats[lang]["total_characters"] = sum(v["characters"] for v in stats[lang].values())
    stats["hangul_syllables"] = sum(len(HANGUL.findall(p)) for p in train + valid)
    stats["train_paragraphs"], stats["valid_paragraphs"] = len(train), len(valid)
    stats["train_characters"] = sum(len(p) for p in train)
    stats["valid_characters"] = sum(len(p) for p in valid)

    os.makedirs(args.out, exist_ok=True)
    for name, lines in (("train.txt", train), ("valid.txt", valid)):
        data = ("\n".join(lines) + "\n").encode("utf-8")
        stats[name + ".sha256"] = hashlib.sha256(data).hexdigest()
        # mtime 0 and no file name: the same text always gives the same bytes.
        with open(os.path.join(args.out, name + ".gz"), "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f:
                f.write(data)
    with open(os.path.join(args.out, "stats.json"), "w") as f:
        json.dump(stats, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(stats, indent=1, sort_keys=True))

    if args.tokenizer:
        # identity normalisation: the corpus is NFC already and the C++ side encodes NFC
        # text, so decode(encode(s)) gives s back (no NFKC rewriting of full-width forms).
        plain = tempfile.NamedTemporaryFile("wb", suffix=".txt", delete=False)
        plain.write(("\n".join(train) + "\n").encode("utf-8"))
        plain.close()
        cmd = ["spm_train", "--input=" + plain.name, "--model_prefix=" + args.tokenizer,
               f"--vocab_size={SPM_VOCAB}", "--model_type=unigram", "--character_coverage=0.9995",
               "--byte_fallback=true", "--normalization_rule_name=identity", "--split_digits=true",
               "--input_sentence_size=2000000", "--shuffle_input_sentence=true", "--seed_sentencepiece_size=1000000",
               "--num_threads=1", "--max_sentence_length=8192", "--random_seed=15"]
        print(" ".join(cmd), file=sys.stderr)
        try:
            subprocess.run(cmd, check=True)
        finally:
            os.unlink(plain.name)


if __name__ == "__main__":
    main()
