#!/usr/bin/python3
"""models/gpt2/merges.txt: merges for the tiny GPT-2 test model's 40-token vocab.json, so that
`attn trace --params tests/reference/models/gpt2/model.safetensors --text "..."` tokenizes the
words it has ("The robot reads the book" -> 3 6 7 4 8). Each multi-character token is built
left to right ("Ġ r", "Ġr o", ...): first the tokens that start a word (Ġ), then the others
("T h", "e d", "i n", ...), so that a suffix merge never takes a letter a word's own merges
need. A word the vocabulary lacks leaves pieces it does not have: attn says which.
Run: /usr/bin/python3 tests/reference/make_tiny_merges.py"""
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
folder = os.path.join(here, "models", "gpt2")
with open(os.path.join(folder, "vocab.json")) as f:
    vocab = json.load(f)
words = [t for t in vocab if len(t) > 1 and not t.startswith("<|")]
merges = []
for group in ([t for t in words if t.startswith("Ġ")], [t for t in words if not t.startswith("Ġ")]):
    for token in group:
        for i in range(1, len(token)):
            merge = token[:i] + " " + token[i]
            if merge not in merges:
                merges.append(merge)
with open(os.path.join(folder, "merges.txt"), "w") as f:
    f.write("#version: 0.2\n" + "\n".join(merges) + "\n")
print(len(merges), "merges")
