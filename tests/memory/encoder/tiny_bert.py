#!/usr/bin/python3
"""A tiny BERT sentence encoder, and its reference forward pass in numpy.

  tiny_bert.py make DIR [--seed S] [--layers 2] [--hidden 32] [--heads 4]
      [--intermediate 64] [--max-position 64] [--pooling mean|cls]
      [--dtype F32|F16|BF16] [--act gelu|gelu_new|gelu_pytorch_tanh|relu]
      [--prefix bert.] [--lowercase true|false] [--truncation N]
      [--old-norm-names] [--position-ids]
    writes a sentence-transformers model directory with random weights:
    config.json, vocab.txt, tokenizer.json, tokenizer_config.json,
    special_tokens_map.json, model.safetensors, modules.json,
    1_Pooling/config.json, 2_Normalize/, sentence_bert_config.json.
  tiny_bert.py encode DIR IDS_JSON
    prints a JSON list with one unit vector per token-id list in IDS_JSON,
    computed in float64 from DIR's files (the safetensors file read here,
    by this script, independently of the C++ reader).

Run with Debian's /usr/bin/python3 (python3-numpy); nothing else needed.
The tests (tests/memory/encoder/bert_test.cc) compare limbic's encoder
with `encode` within 1e-5 per component.
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ("the a an is are was of and to in it that this with for on as be by at "
         "from hello world cat dog sat mat run walk talk read memory agent event "
         "time day night sun moon water fire good bad new old big small one two "
         "three you we they he she not no yes what when where why how").split()
SUFFIXES = ["ing", "s", "ed", "er", "ly", "es", "tion", "ment", "est", "ness"]
PUNCTUATION = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + ["¿", "¡", "«", "»", "—", "…"]
ACCENTED = list("éèêàâäüöôñçøåß")
CJK = list("中国人日本語的是我你大小")


def vocabulary():
    pieces = list(SPECIALS)
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    upper = [c.upper() for c in letters]
    digits = [str(d) for d in range(10)]
    for group in (letters, upper, digits, ACCENTED):
        pieces += group
        pieces += ["##" + p for p in group]
    pieces += WORDS + ["##" + s for s in SUFFIXES] + PUNCTUATION + CJK
    seen, out = set(), []
    for p in pieces:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


# --- safetensors, by hand -------------------------------------------------

def to_bytes(a, dtype):
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "F32":
        return a.astype("<f4").tobytes()
    if dtype == "F16":
        return a.astype("<f2").tobytes()
    bits = a.view(np.uint32).astype(np.uint64)  # BF16: round to nearest even
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype("<u2").tobytes()


def write_safetensors(path, tensors):
    """tensors: list of (name, dtype, shape, bytes)."""
    header, offset = {}, 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, _, data in tensors:
            f.write(data)


def read_safetensors(path):
    """name -> float64 array (float dtypes only; others are skipped)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        chunk = data[begin:end]
        if info["dtype"] == "F32":
            a = np.frombuffer(chunk, dtype="<f4")
        elif info["dtype"] == "F16":
            a = np.frombuffer(chunk, dtype="<f2")
        elif info["dtype"] == "BF16":
            a = (np.frombuffer(chunk, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            continue
        out[name] = a.astype(np.float64).reshape(info["shape"])
    return out


# --- make -----------------------------------------------------------------

def make(args):
    rng = np.random.default_rng(args.seed)
    os.makedirs(os.path.join(args.dir, "1_Pooling"), exist_ok=True)
    os.makedirs(os.path.join(args.dir, "2_Normalize"), exist_ok=True)
    vocab = vocabulary()
    h, i, L = args.hidden, args.intermediate, args.layers
    lower = args.lowercase == "true"

    def dump(name, value):
        with open(os.path.join(args.dir, name), "w", encoding="utf-8") as f:
            json.dump(value, f, indent=2, ensure_ascii=False)
            f.write("\n")

    dump("config.json", {
        "architectures": ["BertModel"], "model_type": "bert",
        "attention_probs_dropout_prob": 0.1, "hidden_dropout_prob": 0.1,
        "hidden_act": args.act, "hidden_size": h, "initializer_range": 0.02,
        "intermediate_size": i, "layer_norm_eps": 1e-12,
        "max_position_embeddings": args.max_position, "num_attention_heads": args.heads,
        "num_hidden_layers": L, "pad_token_id": 0, "position_embedding_type": "absolute",
        "torch_dtype": {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[args.dtype],
        "transformers_version": "4.41.0", "type_vocab_size": 2, "use_cache": True,
        "vocab_size": len(vocab)})
    with open(os.path.join(args.dir, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(p + "\n" for p in vocab))
    specials = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
                "cls_token": "[CLS]", "mask_token": "[MASK]"}
    dump("special_tokens_map.json", specials)
    dump("tokenizer_config.json", dict(
        specials, do_lower_case=lower, model_max_length=args.max_position,
        tokenizer_class="BertTokenizer", strip_accents=None, tokenize_chinese_chars=True,
        do_basic_tokenize=True, clean_up_tokenization_spaces=True))
    ids = {p: n for n, p in enumerate(vocab)}

    def special(name, type_id):
        return {"SpecialToken": {"id": name, "type_id": type_id}}

    dump("tokenizer.json", {
        "version": "1.0",
        "truncation": None if args.truncation is None else {
            "direction": "Right", "max_length": args.truncation,
            "strategy": "LongestFirst", "stride": 0},
        "padding": None,
        "added_tokens": [{"id": ids[s], "content": s, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}
                         for s in SPECIALS],
        "normalizer": {"type": "BertNormalizer", "clean_text": True,
                       "handle_chinese_chars": True, "strip_accents": None,
                       "lowercase": lower},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special("[CLS]", 0), {"Sequence": {"id": "A", "type_id": 0}},
                       special("[SEP]", 0)],
            "pair": [special("[CLS]", 0), {"Sequence": {"id": "A", "type_id": 0}},
                     special("[SEP]", 0), {"Sequence": {"id": "B", "type_id": 1}},
                     special("[SEP]", 1)],
            "special_tokens": {s: {"id": s, "ids": [ids[s]], "tokens": [s]}
                               for s in ("[CLS]", "[SEP]")}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
                  "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                  "vocab": ids}})
    dump("modules.json", [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling",
         "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize",
         "type": "sentence_transformers.models.Normalize"}])
    dump("1_Pooling/config.json", {
        "word_embedding_dimension": h,
        "pooling_mode_cls_token": args.pooling == "cls",
        "pooling_mode_mean_tokens": args.pooling == "mean",
        "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False,
        "pooling_mode_weightedmean_tokens": False, "pooling_mode_lasttoken": False,
        "include_prompt": True})
    dump("sentence_bert_config.json", {"max_seq_length": args.max_position,
                                       "do_lower_case": False})

    tensors = []

    def add(name, shape, kind="weight"):
        if kind == "weight":
            a = rng.standard_normal(shape) * 0.1
        elif kind == "gamma":
            a = 1.0 + rng.standard_normal(shape) * 0.1
        else:
            a = rng.standard_normal(shape) * 0.1
        tensors.append((args.prefix + name, args.dtype, shape, to_bytes(a, args.dtype)))

    def norm(base):
        w, b = ("gamma", "beta") if args.old_norm_names else ("weight", "bias")
        add(base + "." + w, (h,), "gamma")
        add(base + "." + b, (h,))

    if args.position_ids:  # the I64 buffer of older HF checkpoints
        tensors.append((args.prefix + "embeddings.position_ids", "I64", (1, args.max_position),
                        np.arange(args.max_position, dtype="<i8").tobytes()))
    add("embeddings.word_embeddings.weight", (len(vocab), h))
    add("embeddings.position_embeddings.weight", (args.max_position, h))
    add("embeddings.token_type_embeddings.weight", (2, h))
    norm("embeddings.LayerNorm")
    for n in range(L):
        p = "encoder.layer.%d." % n
        for part in ("query", "key", "value"):
            add(p + "attention.self.%s.weight" % part, (h, h))
            add(p + "attention.self.%s.bias" % part, (h,))
        add(p + "attention.output.dense.weight", (h, h))
        add(p + "attention.output.dense.bias", (h,))
        norm(p + "attention.output.LayerNorm")
        add(p + "intermediate.dense.weight", (i, h))
        add(p + "intermediate.dense.bias", (i,))
        add(p + "output.dense.weight", (h, i))
        add(p + "output.dense.bias", (h,))
        norm(p + "output.LayerNorm")
    add("pooler.dense.weight", (h, h))  # ignored by a sentence encoder
    add("pooler.dense.bias", (h,))
    write_safetensors(os.path.join(args.dir, "model.safetensors"), tensors)


# --- encode ---------------------------------------------------------------

ERF = np.vectorize(math.erf)


def activation(x, act):
    if act == "gelu":
        return 0.5 * x * (1.0 + ERF(x / math.sqrt(2.0)))
    if act in ("gelu_new", "gelu_pytorch_tanh"):
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    if act == "relu":
        return np.maximum(x, 0.0)
    raise ValueError("unknown activation " + act)


def layer_norm(x, w, b, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def encode(args):
    with open(os.path.join(args.dir, "config.json")) as f:
        config = json.load(f)
    with open(os.path.join(args.dir, "1_Pooling", "config.json")) as f:
        cls_pooling = json.load(f)["pooling_mode_cls_token"]
    with open(args.ids) as f:
        batch = json.load(f)
    t = read_safetensors(os.path.join(args.dir, "model.safetensors"))
    pre = "bert." if "bert.embeddings.word_embeddings.weight" in t else ""

    def w(name):
        return t[pre + name]

    def norm(base):
        if pre + base + ".weight" in t:
            return w(base + ".weight"), w(base + ".bias")
        return w(base + ".gamma"), w(base + ".beta")

    h, heads = config["hidden_size"], config["num_attention_heads"]
    d, eps, act = h // heads, config["layer_norm_eps"], config["hidden_act"]
    out = []
    for ids in batch:
        n = len(ids)
        x = (w("embeddings.word_embeddings.weight")[ids]
             + w("embeddings.position_embeddings.weight")[:n]
             + w("embeddings.token_type_embeddings.weight")[0])
        x = layer_norm(x, *norm("embeddings.LayerNorm"), eps)
        for layer in range(config["num_hidden_layers"]):
            p = "encoder.layer.%d." % layer

            def linear(v, name):
                return v @ w(p + name + ".weight").T + w(p + name + ".bias")

            q = linear(x, "attention.self.query").reshape(n, heads, d).transpose(1, 0, 2)
            k = linear(x, "attention.self.key").reshape(n, heads, d).transpose(1, 0, 2)
            v = linear(x, "attention.self.value").reshape(n, heads, d).transpose(1, 0, 2)
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(d)
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            ctx = (scores @ v).transpose(1, 0, 2).reshape(n, h)
            x = layer_norm(x + linear(ctx, "attention.output.dense"),
                           *norm(p + "attention.output.LayerNorm"), eps)
            ffn = activation(linear(x, "intermediate.dense"), act)
            x = layer_norm(x + linear(ffn, "output.dense"), *norm(p + "output.LayerNorm"), eps)
        pooled = x[0] if cls_pooling else x.mean(axis=0)
        length = np.linalg.norm(pooled)
        out.append((pooled / length if length > 0 else pooled).tolist())
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("dir")
    m.add_argument("--seed", type=int, default=1)
    m.add_argument("--layers", type=int, default=2)
    m.add_argument("--hidden", type=int, default=32)
    m.add_argument("--heads", type=int, default=4)
    m.add_argument("--intermediate", type=int, default=64)
    m.add_argument("--max-position", type=int, default=64)
    m.add_argument("--pooling", choices=["mean", "cls"], default="mean")
    m.add_argument("--dtype", choices=["F32", "F16", "BF16"], default="F32")
    m.add_argument("--act", choices=["gelu", "gelu_new", "gelu_pytorch_tanh", "relu"],
                   default="gelu")
    m.add_argument("--prefix", default="")
    m.add_argument("--lowercase", choices=["true", "false"], default="true")
    m.add_argument("--truncation", type=int, default=None)
    m.add_argument("--old-norm-names", action="store_true",
                   help="LayerNorm parameters as gamma/beta")
    m.add_argument("--position-ids", action="store_true",
                   help="add the I64 embeddings.position_ids buffer")
    e = sub.add_parser("encode")
    e.add_argument("dir")
    e.add_argument("ids")
    args = parser.parse_args()
    make(args) if args.command == "make" else encode(args)


if __name__ == "__main__":
    main()
