#!/usr/bin/python3
"""BERT's tokenizer (basic tokenization + WordPiece), standard library only.

An independent reference for memory/encoder/wordpiece.cc, written from the
rules in memory/encoder/wordpiece.h (BERT's BasicTokenizer and
WordpieceTokenizer, in HF tokenizers' order: clean, CJK, NFD and strip,
lower-case, split). It works on whole texts with str methods and
unicodedata, where the C++ streams code points through utf8proc, so the two
share no code and few habits.

  reference_tokenizer.py tokenize VOCAB_TXT [--no-lower] [--strip-accents yes|no]
                         [--max-length N] [--output ids|pieces|words] < texts.json

stdin: a JSON list of texts. stdout: a JSON list with, per text, its ids
([CLS] ... [SEP], truncated to --max-length), its pieces (no [CLS]/[SEP],
not truncated) or its words (basic tokenization only).
"""
import argparse
import json
import sys
import unicodedata

CJK_RANGES = [
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
]
# Rust's char::is_whitespace outside Zs/Zl/Zp: what HF splits on. Those in
# it that are Cc are dropped first when the text is cleaned.
EXTRA_SPACES = set("\t\n\r\x0b\x0c\x85")


def is_space(ch):
    return ch == " " or ch in EXTRA_SPACES or unicodedata.category(ch) in ("Zs", "Zl", "Zp")


def is_control(ch):
    return ch not in "\t\n\r" and unicodedata.category(ch)[0] == "C"


def is_punct(ch):
    o = ord(ch)
    if 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126:
        return True
    return unicodedata.category(ch)[0] == "P"


def is_cjk(ch):
    o = ord(ch)
    return any(lo <= o <= hi for lo, hi in CJK_RANGES)


def words(text, lower=True, strip=None, clean=True, chinese=True):
    """Basic tokenization: the list of words."""
    if strip is None:
        strip = lower
    kept = []
    for ch in text:
        if clean and (ch in "\x00\ufffd" or is_control(ch)):
            continue
        if is_space(ch):
            kept.append(" ")
        elif chinese and is_cjk(ch):
            kept.append(" " + ch + " ")
        else:
            kept.append(ch)
    text = "".join(kept)
    if strip:
        nfd = unicodedata.normalize("NFD", text)
        text = "".join(ch for ch in nfd if unicodedata.category(ch) != "Mn")
    if lower:
        # One code point at a time: no final sigma ("Σ".lower() alone is "σ").
        text = "".join(ch.lower() for ch in text)
    out = []
    for chunk in text.split(" "):
        word = ""
        for ch in chunk:
            if is_punct(ch):
                if word:
                    out.append(word)
                out.append(ch)
                word = ""
            else:
                word += ch
        if word:
            out.append(word)
    return out


def pieces_of(word, vocab, unk="[UNK]", prefix="##", max_chars=100):
    if len(word) > max_chars:
        return [unk]
    pieces = []
    start = 0
    while start < len(word):
        end = len(word)
        piece = None
        while end > start:
            candidate = word[start:end] if start == 0 else prefix + word[start:end]
            if candidate in vocab:
                piece = candidate
                break
            end -= 1
        if piece is None:
            return [unk]
        pieces.append(piece)
        start = end
    return pieces


def load_vocab(path):
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    vocab = {}
    for i, line in enumerate(lines):
        piece = line.rstrip(" \t\r\n\x0b\x0c")
        if piece in vocab:
            sys.exit(f"{path}: piece {piece!r} on line {i + 1} repeats line {vocab[piece] + 1}")
        vocab[piece] = i
    return vocab


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    tok = sub.add_parser("tokenize")
    tok.add_argument("vocab")
    tok.add_argument("--no-lower", action="store_true")
    tok.add_argument("--strip-accents", choices=["yes", "no"])
    tok.add_argument("--max-length", type=int, default=512)
    tok.add_argument("--output", choices=["ids", "pieces", "words"], default="ids")
    args = parser.parse_args()

    vocab = load_vocab(args.vocab)
    lower = not args.no_lower
    strip = None if args.strip_accents is None else args.strip_accents == "yes"
    results = []
    for text in json.load(sys.stdin):
        ws = words(text, lower=lower, strip=strip)
        if args.output == "words":
            results.append(ws)
            continue
        pieces = [p for w in ws for p in pieces_of(w, vocab)]
        if args.output == "pieces":
            results.append(pieces)
            continue
        ids = [vocab[p] for p in pieces][: args.max_length - 2]
        results.append([vocab["[CLS]"]] + ids + [vocab["[SEP]"]])
    json.dump(results, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
