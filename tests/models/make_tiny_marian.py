#!/usr/bin/env python3
"""A tiny Marian (Helsinki-NLP/opus-mt-* layout) and what it must compute, for the tests.

  /usr/bin/python3 tests/models/make_tiny_marian.py OUT_DIR
      -> OUT_DIR/marian.safetensors/ and OUT_DIR/marian.bin/ : the same model in both weight
         formats, each folder as the Hub has it: config.json (opus-mt-zh-en's fields, small
         sizes), source.spm and target.spm (SentencePiece Unigram models trained here with
         python3-sentencepiece, seeded, one thread), vocab.json (one id space, '</s>' 0,
         '<unk>' 1, '<pad>' last, some pieces left out so they map to <unk>, two language
         codes), tokenizer_config.json, generation_config.json, and model.safetensors or
         pytorch_model.bin (MarianMTModel's key names, seeded random weights, the embeddings
         shared by encoder, decoder and LM head); OUT_DIR/marian-no-positions/ the same without
         the position tables
      -> OUT_DIR/marian-tokenizer.json : for each text, the ids and UTF-16 spans
         MarianTokenizer's semantics give (SentencePiece's own encode with offsets, pieces
         through vocab.json, '</s>' appended; target side with target.spm), and decodes
      -> OUT_DIR/marian-reference.json : the reference forward pass (marian_reference.py) of
         a few sources: encoder self-attention, every greedy step's logits, decoder
         self-attention row and cross-attention row, the greedy output and beam search's
"""

import collections
import json
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import marian_reference  # noqa: E402
from make_tiny_models import write_safetensors  # noqa: E402

SOURCE_CORPUS = """我爱自然语言处理。自然语言处理很有趣。我爱我的猫。猫坐在垫子上。
今天天气很好，我们去公园吧。注意力让每个词都能看到其他的词。小女孩在公园里玩。
The cat sat on the mat. I love natural language processing.
"""
TARGET_CORPUS = """I love natural language processing. Natural language processing is fun.
I love my cat. The cat sat on the mat. The weather is nice today, let us go to the park.
Attention lets every word look at the other words. The little girl played in the park.
"""
LANGUAGE_CODES = [">>cmn_Hans<<", ">>yue_Hant<<"]
# The cross-attention surgeries the reference also runs (attnlens's translate() crossMask).
CROSS_MASKS = ["last", "mean", "local:1"]

# Pieces of the source model left out of vocab.json: the tokenizer maps them to <unk>.
LEFT_OUT = ["猫", "公园"]

SIZES = {"d_model": 16, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
         "decoder_attention_heads": 4, "encoder_ffn_dim": 24, "decoder_ffn_dim": 24,
         "max_position_embeddings": 32}

TOKENIZER_TEXTS = [
    "我爱自然语言处理",
    "我爱我的猫。",
    "  The cat  sat\ton the mat.  ",
    "今天天气很好, I love the park! 😀 café ＡＢＣ",
    ">>cmn_Hans<< I love my cat.",
    ">>yue_Hant<<",
    "x</s>y<unk>z",
    "",
]
TARGET_TEXTS = ["I love natural language processing.", "The cat sat on the mat!"]
SOURCES = ["我爱自然语言处理", "猫坐在垫子上。"]
MAX_NEW_TOKENS = 8
NUM_BEAMS = 3


def train_spm(corpus, prefix, vocab_size, seed_size=1000):
    """A seeded SentencePiece Unigram model of `corpus`; `seed_size` seed pieces bound the
    vocabulary (the tiny fixture's 1000 keep it small)."""
    import sentencepiece as spm

    with open(prefix + ".txt", "w", encoding="utf-8") as f:
        f.write(corpus * 4)
    spm.SentencePieceTrainer.train(
        input=prefix + ".txt", model_prefix=prefix, model_type="unigram", vocab_size=vocab_size,
        character_coverage=1.0, num_threads=1, hard_vocab_limit=False, seed_sentencepiece_size=seed_size, minloglevel=2,
        unk_id=0, bos_id=-1, eos_id=1, pad_id=-1, unk_piece="<unk>", eos_piece="</s>")
    with open(prefix + ".model", "rb") as f:
        return f.read(), spm.SentencePieceProcessor(model_file=prefix + ".model")


def make_vocab(source, target):
    """As the Marian conversion lays it out: '</s>' 0, '<unk>' 1, the pieces, '<pad>' last."""
    vocab = collections.OrderedDict([("</s>", 0), ("<unk>", 1)])
    for code in LANGUAGE_CODES:
        vocab[code] = len(vocab)
    for processor in (source, target):
        for i in range(processor.get_piece_size()):
            piece = processor.id_to_piece(i)
            if processor.is_control(i) or processor.is_unknown(i) or piece in LEFT_OUT:
                continue
            vocab.setdefault(piece, len(vocab))
    vocab["<pad>"] = len(vocab)
    return vocab


def utf16(text, index):
    """A code point index of `text` as a UTF-16 index (JavaScript's string positions)."""
    return len(text[:index].encode("utf-16-le")) // 2


def marian_encode(processor, vocab, text):
    """MarianTokenizer: a leading '>>xx<<' (to the first '<<') as one token, SentencePiece's
    pieces of the rest through vocab.json (<unk> where missing), '</s>' appended; with each
    token's UTF-16 span (SentencePiece's own offsets)."""
    tokens = []
    offset = 0
    if text.startswith(">>") and text.find("<<") != -1:
        offset = text.find("<<") + 2
        tokens.append((text[:offset], 0, offset))
    rest = text[offset:]
    for piece in processor.encode(rest, out_type="immutable_proto").pieces:
        tokens.append((piece.piece, offset + piece.begin, offset + piece.end))
    ids = [vocab.get(piece, vocab["<unk>"]) for piece, _, _ in tokens] + [vocab["</s>"]]
    spans = [[utf16(text, b), utf16(text, e)] for _, b, e in tokens]
    spans.append([utf16(text, len(text))] * 2)
    return {"text": text, "ids": ids, "spans": spans}


def marian_decode(processor, vocab, ids, skip_special):
    """MarianTokenizer.decode: ids to pieces, special tokens written between SentencePiece's
    decodes of the runs around them (or skipped), '▁' as spaces, the ends stripped."""
    tokens_of = {i: t for t, i in vocab.items()}
    special = {"</s>", "<unk>", "<pad>"}
    pieces = [tokens_of.get(i, "<unk>") for i in ids]
    if skip_special:
        pieces = [p for p in pieces if p not in special]
    out, run = "", []
    for piece in pieces:
        if piece in special:
            out += processor.decode_pieces(run) + piece + " "
            run = []
        else:
            run.append(piece)
    out += processor.decode_pieces(run)
    return out.replace("\u2581", " ").strip()


def config(vocab, sizes=SIZES, num_beams=NUM_BEAMS, name="tiny-opus-mt-zh-en"):
    pad = vocab["<pad>"]
    return {
        "_name_or_path": name,
        "activation_dropout": 0.0,
        "activation_function": "swish",
        "add_bias_logits": False,
        "add_final_layer_norm": False,
        "architectures": ["MarianMTModel"],
        "attention_dropout": 0.0,
        "bad_words_ids": [[pad]],
        "bos_token_id": 0,
        "classif_dropout": 0.0,
        "classifier_dropout": 0.0,
        "d_model": sizes["d_model"],
        "decoder_attention_heads": sizes["decoder_attention_heads"],
        "decoder_ffn_dim": sizes["decoder_ffn_dim"],
        "decoder_layerdrop": 0.0,
        "decoder_layers": sizes["decoder_layers"],
        "decoder_start_token_id": pad,
        "decoder_vocab_size": len(vocab),
        "dropout": 0.1,
        "encoder_attention_heads": sizes["encoder_attention_heads"],
        "encoder_ffn_dim": sizes["encoder_ffn_dim"],
        "encoder_layerdrop": 0.0,
        "encoder_layers": sizes["encoder_layers"],
        "eos_token_id": 0,
        "extra_pos_embeddings": len(vocab),
        "forced_eos_token_id": 0,
        "id2label": {"0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"},
        "init_std": 0.02,
        "is_encoder_decoder": True,
        "label2id": {"LABEL_0": 0, "LABEL_1": 1, "LABEL_2": 2},
        "max_length": 512,
        "max_position_embeddings": sizes["max_position_embeddings"],
        "model_type": "marian",
        "normalize_before": False,
        "normalize_embedding": False,
        "num_beams": num_beams,
        "num_hidden_layers": sizes["encoder_layers"],
        "pad_token_id": pad,
        "scale_embedding": True,
        "share_encoder_decoder_embeddings": True,
        "static_position_embeddings": True,
        "transformers_version": "4.22.0.dev0",
        "use_cache": True,
        "vocab_size": len(vocab),
    }


def state_dict(cfg, seed=15):
    """MarianMTModel's state dict: one embedding matrix under model.shared, the encoder's and
    decoder's embed_tokens and lm_head (tied, one storage), the static position tables as the
    Hub's files carry them, final_logits_bias, and every layer's projections and norms."""
    gen = torch.Generator().manual_seed(seed)
    d, vocab = cfg["d_model"], cfg["vocab_size"]

    def rand(*shape, std=0.3):
        return torch.randn(*shape, generator=gen) * std

    def norm(name, out):
        out[name + ".weight"] = 1 + rand(d, std=0.1)
        out[name + ".bias"] = rand(d, std=0.1)

    def linear(name, out, rows, cols):
        out[name + ".weight"] = rand(rows, cols, std=cols ** -0.5)
        out[name + ".bias"] = rand(rows, std=0.1)

    shared = rand(vocab, d, std=0.25)
    shared[cfg["pad_token_id"]] = 0  # nn.Embedding's padding_idx row, zero as in the Hub's files
    positions = marian_reference.sinusoidal_positions(cfg["max_position_embeddings"], d)
    state = collections.OrderedDict()
    state["final_logits_bias"] = rand(1, vocab, std=0.1)
    state["model.shared.weight"] = shared
    for part in ("encoder", "decoder"):
        state[f"model.{part}.embed_tokens.weight"] = shared
        state[f"model.{part}.embed_positions.weight"] = positions.clone()
        for n in range(cfg[f"{part}_layers"]):
            prefix = f"model.{part}.layers.{n}."
            ffn = cfg[f"{part}_ffn_dim"]
            attentions = ["self_attn", "encoder_attn"] if part == "decoder" else ["self_attn"]
            for attention in attentions:
                for proj in ("k_proj", "v_proj", "q_proj", "out_proj"):
                    linear(prefix + f"{attention}.{proj}", state, d, d)
                norm(prefix + f"{attention}_layer_norm", state)
            linear(prefix + "fc1", state, ffn, d)
            linear(prefix + "fc2", state, d, ffn)
            norm(prefix + "final_layer_norm", state)
    state["lm_head.weight"] = shared
    return state


def write_json(path, value, indent=None):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, ensure_ascii=False, indent=indent)


def write_hub_folder(folder, fmt, cfg, state, vocab, source_bytes, target_bytes):
    """One model folder as the Hub has opus-mt's: the two spm files, vocab.json, the configs and
    the weights in `fmt` ('safetensors' or 'bin')."""
    os.makedirs(folder, exist_ok=True)
    for name, data in (("source.spm", source_bytes), ("target.spm", target_bytes)):
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    tokenizer_config = {"source_lang": "zh", "target_lang": "en", "unk_token": "<unk>",
                        "eos_token": "</s>", "pad_token": "<pad>", "model_max_length": 512,
                        "separate_vocabs": False, "sp_model_kwargs": {},
                        "tokenizer_class": "MarianTokenizer"}
    generation = {"bad_words_ids": [[cfg["pad_token_id"]]], "bos_token_id": 0,
                  "decoder_start_token_id": cfg["pad_token_id"], "eos_token_id": 0,
                  "forced_eos_token_id": 0, "max_length": 512, "num_beams": cfg["num_beams"],
                  "pad_token_id": cfg["pad_token_id"], "transformers_version": "4.27.0.dev0"}
    write_json(os.path.join(folder, "vocab.json"), vocab, indent=2)
    write_json(os.path.join(folder, "config.json"), cfg, indent=2)
    write_json(os.path.join(folder, "tokenizer_config.json"), tokenizer_config)
    write_json(os.path.join(folder, "generation_config.json"), generation, indent=2)
    if fmt == "safetensors":
        write_safetensors(os.path.join(folder, "model.safetensors"), state)
    else:
        torch.save(state, os.path.join(folder, "pytorch_model.bin"))


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        source_bytes, source = train_spm(SOURCE_CORPUS, os.path.join(tmp, "source"), 100)
        target_bytes, target = train_spm(TARGET_CORPUS, os.path.join(tmp, "target"), 100)
    vocab = make_vocab(source, target)
    cfg = config(vocab)
    state = state_dict(cfg)
    # marian-no-positions: the same model without the position tables, which some conversions
    # leave out (the library then computes them, as the loader must).
    no_positions = collections.OrderedDict(
        (k, v) for k, v in state.items() if "embed_positions" not in k)
    for fmt, name, weights in (("safetensors", "marian.safetensors", state),
                               ("bin", "marian.bin", state),
                               ("safetensors", "marian-no-positions", no_positions)):
        write_hub_folder(os.path.join(out_dir, name), fmt, cfg, weights, vocab, source_bytes,
                         target_bytes)

    all_ids = list(range(len(vocab)))
    write_json(os.path.join(out_dir, "marian-tokenizer.json"), {
        "source": [marian_encode(source, vocab, t) for t in TOKENIZER_TEXTS],
        "target": [marian_encode(target, vocab, t) for t in TARGET_TEXTS],
        "decode": [{"ids": ids, "skip": skip, "text": marian_decode(target, vocab, ids, skip)}
                   for ids in (marian_encode(target, vocab, TARGET_TEXTS[0])["ids"],
                               [vocab["<pad>"]] + all_ids[:40] + [1, 0],
                               marian_encode(source, vocab, TOKENIZER_TEXTS[3])["ids"])
                   for skip in (False, True)],
    })
    model = marian_reference.Marian(cfg, state)
    write_json(os.path.join(out_dir, "marian-reference.json"), {
        "maxNewTokens": MAX_NEW_TOKENS,
        "sources": [marian_reference.describe_translation(
            model, marian_encode(source, vocab, text)["ids"], MAX_NEW_TOKENS, NUM_BEAMS)
            | {"text": text} for text in SOURCES],
        # Cross-attention surgery on the first source (marian_reference.py's cross masks).
        "crossMasks": {mask: marian_reference.describe_masked(
            cfg, state, marian_encode(source, vocab, SOURCES[0])["ids"], MAX_NEW_TOKENS,
            NUM_BEAMS, mask) for mask in CROSS_MASKS},
    })


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
