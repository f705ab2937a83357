#!/usr/bin/env python3
"""SentencePiece-family tokenizer.json files for the test suite, made the way the transformers
library converts SentencePiece models (its convert_slow_tokenizer.py), with ids from independent
references to check the files against.

  llama2_legacy   llama2.c's tok512.bin (stories260K's 512 pieces and scores) as LlamaConverter
                  writes a "legacy" Llama 2 tokenizer: BPE with byte fallback, merges from the
                  pieces' scores, normalizer Prepend "▁" + Replace " " -> "▁", no pre-tokenizer
  llama2_metaspace the same vocabulary as the non-legacy converter writes it: no normalizer, a
                  Metaspace pre-tokenizer with prepend_scheme "first"
  t5_unigram      a Unigram model trained here with python3-sentencepiece on a small text, as
                  the T5 converter writes it: Precompiled (its precompiled_charsmap) + Strip +
                  Replace " {2,}", Metaspace, "</s>" appended
  albert_unigram  the same model as AlbertConverter writes it (Replace, NFKD, StripAccents,
                  Lowercase, Precompiled, Replace; remove_space in its config)

Run as a script it writes each into a folder, with expected.json beside it: for each text, the
ids llama2.c's run.c encode gives (llama2_*) or SentencePiece itself gives (*_unigram):

  /usr/bin/python3 tests/models/spm_tokenizers.py OUT_DIR
      -> OUT_DIR/{llama2-legacy,llama2-metaspace,t5-unigram,albert-unigram}/
"""

import base64
import json
import os
import struct
import sys
import tempfile

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def find_tok512():
    """stories260K's tok512.bin: $ATTNLENS_TOK512, else the copy the package bundles, else
    models/stories260K/ in the repository or in a shared/ folder beside it or above it (where
    the original bytes are kept)."""
    if os.environ.get("ATTNLENS_TOK512"):
        return os.environ["ATTNLENS_TOK512"]
    bundled = os.path.join(REPO_ROOT, "web", "src", "models", "bundled", "stories260K", "tok512.bin")
    if os.path.exists(bundled):
        return bundled
    folders = [REPO_ROOT, os.path.join(REPO_ROOT, "web")]
    parent = REPO_ROOT
    while os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
        folders.append(os.path.join(parent, "shared"))
    for folder in folders:
        path = os.path.join(folder, "models", "stories260K", "tok512.bin")
        if os.path.exists(path):
            return path
    sys.exit("tok512.bin (stories260K) not found: set ATTNLENS_TOK512 to its path")

SPACE = "\u2581"

# Texts the ids are checked on (byte fallback, runs of spaces, tabs and newlines included).
TEXTS = [
    "Once upon a time, there was a little girl named Lily.",
    "  two  spaces\tand a tab\nand a new line\n\nend ",
    "Lily said: \"Wow!\" 你好 😀 café",
    "",
    " leading space",
]
UNIGRAM_TEXTS = [
    "Once upon a time, there was a little girl named Lily.",
    "the  cat\tsat on the mat\nand looked at the dog",
    "  leading and trailing spaces  ",
    "she liked the park very much",
]


def read_llama2c_tokenizer(path):
    """(pieces, scores) of a llama2.c tokenizer file, pieces with "▁" where it writes a space."""
    with open(path, "rb") as f:
        data = f.read()
    (max_len,) = struct.unpack_from("<i", data, 0)
    at = 4
    pieces, scores = [], []
    while at < len(data):
        score, length = struct.unpack_from("<fi", data, at)
        at += 8
        if length < 0 or length > max_len or at + length > len(data):
            raise ValueError(f"{path}: bad piece at byte {at}")
        pieces.append(data[at:at + length].decode("utf-8"))
        scores.append(score)
        at += length
    return pieces, scores


def generate_merges(vocab, vocab_scores):
    """transformers' generate_merges: every split of a piece into two pieces, best score first."""
    merges = []
    for piece, score in vocab_scores:
        local = []
        for i in range(1, len(piece)):
            left, right = piece[:i], piece[i:]
            if left in vocab and right in vocab:
                local.append((left, right, score))
        local.sort(key=lambda m: (vocab[m[0]], vocab[m[1]]))
        merges.extend(local)
    merges.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=True)
    return [[left, right] for left, right, _ in merges]


def added(token_id, content):
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": False, "special": True}


def llama2(legacy=True):
    pieces, scores = read_llama2c_tokenizer(find_tok512())
    specials = ["<unk>", "<s>", "</s>"]
    vocab_scores = [(t, 0.0) for t in specials]
    vocab_scores += [(p.replace(" ", SPACE), s) for p, s in zip(pieces[3:], scores[3:])]
    vocab = {piece: i for i, (piece, _) in enumerate(vocab_scores)}
    bos = {"SpecialToken": {"id": "<s>", "type_id": 0}}
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [added(i, t) for i, t in enumerate(specials)],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": SPACE},
            {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}]} if legacy else None,
        "pre_tokenizer": None if legacy else {
            "type": "Metaspace", "replacement": SPACE, "prepend_scheme": "first", "split": False},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [bos, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [bos, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<s>", "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}},
        },
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": "<unk>",
            "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": True,
            "byte_fallback": True, "ignore_merges": False, "vocab": vocab,
            "merges": generate_merges(vocab, vocab_scores)},
    }
    config = {
        "add_bos_token": True, "add_eos_token": False, "bos_token": "<s>", "eos_token": "</s>",
        "unk_token": "<unk>", "pad_token": None, "legacy": legacy,
        "clean_up_tokenization_spaces": False, "model_max_length": 512,
        "tokenizer_class": "LlamaTokenizer",
    }
    # run.c always puts a space piece first; Metaspace ("first") only where the text does not
    # already start with one.
    expected = [{"text": t, "ids": [1] + llama2c_encode(
        pieces, scores, t, dummy_prefix=legacy or not t.startswith(" "))} for t in TEXTS]
    return tokenizer, config, expected


def llama2c_encode(pieces, scores, text, dummy_prefix=True):
    """llama2.c's run.c encode (without BOS): a space piece first, each character's piece or its
    bytes (id = byte + 3), then merging the adjacent pair with the best-scoring piece."""
    index = {p: i for i, p in enumerate(pieces)}
    if not text:
        return []
    ids = [index[" "]] if dummy_prefix else []
    for ch in text:
        if ch in index:
            ids.append(index[ch])
        else:
            ids.extend(b + 3 for b in ch.encode("utf-8"))
    while True:
        best, best_at = None, -1
        for i in range(len(ids) - 1):
            merged = index.get(pieces[ids[i]] + pieces[ids[i + 1]])
            if merged is not None and (best is None or scores[merged] > scores[best]):
                best, best_at = merged, i
        if best is None:
            return ids
        ids[best_at:best_at + 2] = [best]


UNIGRAM_CORPUS = """Once upon a time there was a little girl named Lily. She liked to play in the
park with her friends, and she was very happy there. The cat sat on the mat and looked at the dog.
The dog ran to the park. Lily and the cat played all day. They were happy and they laughed.
A quick brown fox jumps over the lazy dog. Attention lets every token look back at the tokens
before it. The girl said hello to the world, and the world said hello back to the little girl."""


def protobuf_fields(data):
    """(field number, wire type, value) of one protobuf message (varints and byte strings)."""
    at = 0

    def varint():
        nonlocal at
        value, shift = 0, 0
        while True:
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    while at < len(data):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            yield field, wire, varint()
        elif wire == 2:
            length = varint()
            yield field, wire, data[at:at + length]
            at += length
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
        else:
            raise ValueError(f"unexpected protobuf wire type {wire}")


def precompiled_charsmap(model_bytes):
    """ModelProto.normalizer_spec (field 3).precompiled_charsmap (field 2) of a .model file."""
    for field, wire, value in protobuf_fields(model_bytes):
        if field == 3 and wire == 2:
            for inner, inner_wire, charsmap in protobuf_fields(value):
                if inner == 2 and inner_wire == 2:
                    return charsmap
    return b""


def t5_unigram(vocab_size=80, texts=None, prepare=lambda text: text):
    import sentencepiece as spm

    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus.txt")
        with open(corpus, "w", encoding="utf-8") as f:
            f.write(UNIGRAM_CORPUS * 4)
        prefix = os.path.join(tmp, "spm")
        spm.SentencePieceTrainer.train(
            input=corpus, model_prefix=prefix, model_type="unigram", vocab_size=vocab_size,
            character_coverage=1.0, pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
            pad_piece="<pad>", eos_piece="</s>", unk_piece="<unk>", minloglevel=2)
        processor = spm.SentencePieceProcessor(model_file=prefix + ".model")
        with open(prefix + ".model", "rb") as f:
            charsmap = base64.b64encode(precompiled_charsmap(f.read())).decode("ascii")
    size = processor.get_piece_size()
    vocab = [[processor.id_to_piece(i), processor.get_score(i)] for i in range(size)]
    specials = [i for i in range(size) if processor.is_control(i) or processor.is_unknown(i)]
    eos = {"SpecialToken": {"id": "</s>", "type_id": 0}}
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [added(i, vocab[i][0]) for i in specials],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": charsmap},
            {"type": "Strip", "strip_left": False, "strip_right": True},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": SPACE}]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always",
                          "split": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"Sequence": {"id": "A", "type_id": 0}}, eos],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, eos,
                     {"Sequence": {"id": "B", "type_id": 0}}, eos],
            "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}},
        },
        "decoder": {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always",
                    "split": True},
        "model": {"type": "Unigram", "unk_id": 2, "vocab": vocab, "byte_fallback": False},
    }
    config = {"eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
              "model_max_length": 512, "tokenizer_class": "T5Tokenizer"}
    expected = [{"text": t, "ids": processor.encode(prepare(t)) + [1]}
                for t in (texts or UNIGRAM_TEXTS)]
    return tokenizer, config, expected


def albert_unigram():
    """The same trained Unigram as AlbertConverter writes it (lowercased, accents removed):
    Replace `` and '' with ", NFKD, StripAccents, Lowercase, Precompiled, Replace " {2,}" -> " ",
    then Metaspace. Expected ids: SentencePiece on the text as ALBERT's Python tokenizer
    prepares it (its preprocess_text)."""
    tokenizer, _, expected = t5_unigram(texts=ALBERT_TEXTS, prepare=albert_preprocess)
    charsmap = tokenizer["normalizer"]["normalizers"][0]["precompiled_charsmap"]
    tokenizer["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Replace", "pattern": {"String": "``"}, "content": '"'},
        {"type": "Replace", "pattern": {"String": "''"}, "content": '"'},
        {"type": "NFKD"},
        {"type": "StripAccents"},
        {"type": "Lowercase"},
        {"type": "Precompiled", "precompiled_charsmap": charsmap},
        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]}
    tokenizer["post_processor"] = None
    expected = [{"text": e["text"], "ids": e["ids"][:-1]} for e in expected]
    config = {"do_lower_case": True, "keep_accents": False, "remove_space": True,
              "unk_token": "<unk>", "model_max_length": 512, "tokenizer_class": "AlbertTokenizer"}
    return tokenizer, config, expected


ALBERT_TEXTS = [
    "Once Upon a TIME, there was a little girl named Lily.",
    "``The cat'' sat  on the mat",
    "  café\tthe dog  ",
]


def albert_preprocess(text):
    """ALBERT's preprocess_text: spaces collapsed and trimmed, `` and '' as ", accents removed
    (NFKD without combining marks), lowercased."""
    import unicodedata
    out = " ".join(text.strip().split()).replace("``", '"').replace("''", '"')
    out = unicodedata.normalize("NFKD", out)
    out = "".join(c for c in out if not unicodedata.combining(c))
    return out.lower()


def write(folder, made):
    tokenizer, config, expected = made
    os.makedirs(folder, exist_ok=True)
    for name, value in (("tokenizer.json", tokenizer), ("tokenizer_config.json", config),
                        ("expected.json", expected)):
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            json.dump(value, f, ensure_ascii=False)


def main(out_dir):
    write(os.path.join(out_dir, "llama2-legacy"), llama2(legacy=True))
    write(os.path.join(out_dir, "llama2-metaspace"), llama2(legacy=False))
    write(os.path.join(out_dir, "t5-unigram"), t5_unigram())
    write(os.path.join(out_dir, "albert-unigram"), albert_unigram())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
