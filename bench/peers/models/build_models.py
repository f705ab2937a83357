#!/usr/bin/python3
"""Builds the ONNX graphs the onnxruntime-web peer runs (bench/peers/libraries/onnxruntime.js).

Every graph takes H=8 heads of depth D=64 with a free sequence length N, so one file serves
every size. Three ways to write attention in ONNX, each with and without a mask input:

  mha-*        com.microsoft.MultiHeadAttention (onnxruntime's fused contrib op). Inputs are
               token-major [1, N, H*D]; a mask is an additive attention_bias [1, 1, N, N];
               `mha-causal` uses the op's own `unidirectional` attribute instead.
  attention-*  ai.onnx Attention (opset 23). Inputs are head-major [1, H, N, D]; a mask is an
               additive attn_mask [N, N]; `attention-causal` uses is_causal=1.
  matmul-*     MatMul(Q, K^T) * scale (+ mask) -> Softmax -> MatMul(P, V) on [H, N, D], what a
               user writes without a fused op; a mask is an additive [N, N] input.

Debian 12's python3-onnx (1.12) knows opsets up to 17: the opset-23 node is written with the
generic helpers and the model is not passed through onnx.checker for that reason; onnxruntime
validates every graph when it loads it.

    /usr/bin/python3 bench/peers/models/build_models.py OUTPUT_DIR
"""
import math
import os
import sys

from onnx import TensorProto, helper, save

HEADS = 8
DEPTH = 64
SCALE = 1.0 / math.sqrt(DEPTH)
FLOAT = TensorProto.FLOAT


def tensor(name, shape):
    return helper.make_tensor_value_info(name, FLOAT, shape)


def model(nodes, inputs, outputs, opsets, initializers=()):
    graph = helper.make_graph(nodes, "attention", inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                          producer_name="attnlens bench/peers")
    # IR 10 is what opset 23 belongs to; onnxruntime 1.30 reads up to IR 11.
    m.ir_version = 10
    return m


def multi_head_attention(mask, causal=False):
    token_major = [1, "N", HEADS * DEPTH]
    inputs = [tensor("q", token_major), tensor("k", token_major), tensor("v", token_major)]
    # Input order of com.microsoft.MultiHeadAttention: query, key, value, bias,
    # key_padding_mask, attention_bias, ...; "" leaves an optional input out.
    node_inputs = ["q", "k", "v"]
    if mask:
        inputs.append(tensor("mask", [1, 1, "N", "N"]))
        node_inputs += ["", "", "mask"]
    node = helper.make_node("MultiHeadAttention", node_inputs, ["out"], domain="com.microsoft",
                            num_heads=HEADS, scale=SCALE, unidirectional=int(causal))
    return model([node], inputs, [tensor("out", token_major)],
                 [("", 17), ("com.microsoft", 1)])


def onnx_attention(mask, causal=False):
    head_major = [1, HEADS, "N", DEPTH]
    inputs = [tensor("q", head_major), tensor("k", head_major), tensor("v", head_major)]
    node_inputs = ["q", "k", "v"]
    if mask:
        inputs.append(tensor("mask", ["N", "N"]))
        node_inputs.append("mask")
    node = helper.make_node("Attention", node_inputs, ["out"], scale=SCALE, is_causal=int(causal))
    return model([node], inputs, [tensor("out", head_major)], [("", 23)])


def matmul_softmax(mask):
    head_major = [HEADS, "N", DEPTH]
    inputs = [tensor("q", head_major), tensor("k", head_major), tensor("v", head_major)]
    scale = helper.make_tensor("scale", FLOAT, [], [SCALE])
    nodes = [
        helper.make_node("Transpose", ["k"], ["k_t"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "k_t"], ["raw"]),
        helper.make_node("Mul", ["raw", "scale"], ["logits"]),
    ]
    if mask:
        inputs.append(tensor("mask", ["N", "N"]))
        nodes.append(helper.make_node("Add", ["logits", "mask"], ["masked"]))
    nodes += [
        helper.make_node("Softmax", ["masked" if mask else "logits"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["out"]),
    ]
    return model(nodes, inputs, [tensor("out", head_major)], [("", 17)], [scale])


# The decode step of bench/peers/decode.mjs: grouped-query attention of DECODE_QUERY_HEADS query
# heads over DECODE_KV_HEADS K/V heads of depth DEPTH; S new tokens attend to P past ones held in
# past_key / past_value [1, Hkv, P, D] and to their own K/V, and present_key / present_value
# [1, Hkv, P + S, D] come back for the next step (ai.onnx Attention, opset 23). Causal through
# is_causal or, in decode-attention-mask, an additive attn_mask [S, P + S].
DECODE_QUERY_HEADS = 32
DECODE_KV_HEADS = 8


def decode_attention(mask):
    queries = [1, DECODE_QUERY_HEADS, "S", DEPTH]
    new_kv = [1, DECODE_KV_HEADS, "S", DEPTH]
    past = [1, DECODE_KV_HEADS, "P", DEPTH]
    present = [1, DECODE_KV_HEADS, "T", DEPTH]
    inputs = [tensor("q", queries), tensor("k", new_kv), tensor("v", new_kv)]
    if mask:
        inputs.append(tensor("mask", ["S", "T"]))
    inputs += [tensor("past_key", past), tensor("past_value", past)]
    node = helper.make_node("Attention",
                            ["q", "k", "v", "mask" if mask else "", "past_key", "past_value"],
                            ["out", "present_key", "present_value"], scale=SCALE,
                            is_causal=int(not mask), q_num_heads=DECODE_QUERY_HEADS,
                            kv_num_heads=DECODE_KV_HEADS)
    outputs = [tensor("out", queries), tensor("present_key", present),
               tensor("present_value", present)]
    return model([node], inputs, outputs, [("", 23)])


GRAPHS = {
    "mha-none": multi_head_attention(mask=False),
    "mha-mask": multi_head_attention(mask=True),
    "mha-causal": multi_head_attention(mask=False, causal=True),
    "attention-none": onnx_attention(mask=False),
    "attention-mask": onnx_attention(mask=True),
    "attention-causal": onnx_attention(mask=False, causal=True),
    "matmul-none": matmul_softmax(mask=False),
    "matmul-mask": matmul_softmax(mask=True),
    "decode-attention-causal": decode_attention(mask=False),
    "decode-attention-mask": decode_attention(mask=True),
}


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUTPUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name, m in GRAPHS.items():
        save(m, os.path.join(out_dir, f"{name}.onnx"))
    print(f"wrote {len(GRAPHS)} graphs to {out_dir}")


if __name__ == "__main__":
    main()
