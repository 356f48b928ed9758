#!/usr/bin/python3
"""Trains mhaviz-small's SentencePiece tokenizer on the training mix: the real text
(train.txt.gz, from scripts/build_corpus.py) and the designed teaching text
(train-designed.txt.gz, from scripts/make_teaching_corpus.py).

Every character of the designed text is a required character, so the teaching sentences
never fall back to byte pieces; byte fallback stays for characters the corpus never has.

  /usr/bin/python3 scripts/train_tokenizer.py --corpus assets/corpus --prefix assets/models/mhaviz-small
"""
import argparse
import glob
import gzip
import os
import sys
import tempfile

import sentencepiece as spm

VOCAB = 4000


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read().decode("utf-8")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, help="directory with train.txt[.gz] and train-*.txt[.gz]")
    ap.add_argument("--prefix", required=True, help="writes PREFIX.model and PREFIX.vocab")
    ap.add_argument("--vocab", type=int, default=VOCAB)
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.corpus, "train.txt*")))[:1] + \
        sorted(glob.glob(os.path.join(args.corpus, "train-*.txt*")))
    if not files:
        sys.exit(f"{args.corpus} has no train.txt[.gz]: run scripts/build_corpus.py first")
    texts = [read(f) for f in files]
    designed = "".join(texts[1:])
    required = "".join(sorted(set(designed) - {"\n", " "}))
    with tempfile.NamedTemporaryFile("wb", suffix=".txt", delete=False) as plain:
        for t in texts:
            plain.write(t.encode("utf-8"))
            if not t.endswith("\n"):
                plain.write(b"\n")
    spm.set_random_generator_seed(15)  # the same seed as scripts/build_corpus.py's spm_train
    try:
        # The same options as scripts/build_corpus.py's tokenizer, plus the required characters.
        spm.SentencePieceTrainer.train(
            input=plain.name, model_prefix=args.prefix, vocab_size=args.vocab, model_type="unigram",
            character_coverage=0.9995, byte_fallback=True, normalization_rule_name="identity", split_digits=True,
            input_sentence_size=3000000, shuffle_input_sentence=True, seed_sentencepiece_size=1000000,
            num_threads=1, max_sentence_length=8192, required_chars=required,
            minloglevel=1)
    finally:
        os.unlink(plain.name)
    print(f"{args.prefix}.model: {args.vocab} pieces from {', '.join(os.path.basename(f) for f in files)}; "
          f"{len(required)} required characters")


if __name__ == "__main__":
    main()
