"""Attention rollout and flow (Abnar and Zuidema 2020) from the paper's definitions, in numpy
float64, for the node tests (web/test/interpret-rollout-flow.test.js) to compare against.

Reads {"seed", "layers", "heads", "n", "causal", "positions"} on stdin; writes JSON with the
seeded random attention it made ([layers, heads, N, N], float32 values), every rollout row and the
flow of each asked position. The max-flow here is Edmonds-Karp on a dense capacity matrix
(breadth-first shortest augmenting paths), a different algorithm from the package's Dinic, and no
networkx: the two only agree if both compute the maximum flow.
"""

import json
import sys
from collections import deque

import numpy as np


def random_attention(rng, layers, heads, n, causal):
    """Softmax rows of random logits, peaked enough that the flows differ from rollout."""
    logits = rng.normal(0.0, 2.0, size=(layers, heads, n, n))
    if causal:
        logits = np.where(np.tril(np.ones((n, n))) > 0, logits, -np.inf)
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights.astype(np.float32)


def residual_mixed(attention):
    """[layers, N, N]: head mean plus the identity, rows renormalised."""
    mean = attention.astype(np.float64).mean(axis=1)
    mixed = mean + np.eye(mean.shape[-1])[None]
    return mixed / mixed.sum(axis=-1, keepdims=True)


def rollout(mixed):
    """The product of the layers' matrices, last layer on the left."""
    joint = mixed[0]
    for layer in range(1, mixed.shape[0]):
        joint = mixed[layer] @ joint
    return joint


def max_flow(capacity, source, sink):
    residual = capacity.copy()
    total = 0.0
    while True:
        parent = np.full(residual.shape[0], -1)
        parent[source] = source
        queue = deque([source])
        while queue and parent[sink] < 0:
            u = queue.popleft()
            for v in np.nonzero(residual[u] > 1e-15)[0]:
                if parent[v] < 0:
                    parent[v] = u
                    queue.append(v)
        if parent[sink] < 0:
            return total
        bottleneck = np.inf
        v = sink
        while v != source:
            bottleneck = min(bottleneck, residual[parent[v], v])
            v = parent[v]
        v = sink
        while v != source:
            residual[parent[v], v] -= bottleneck
            residual[v, parent[v]] += bottleneck
            v = parent[v]
        total += bottleneck


def flow(mixed, position):
    """Node (l, i) is l * N + i, l = 0 the inputs; edges from layer l down to layer l - 1."""
    layers, n, _ = mixed.shape
    capacity = np.zeros(((layers + 1) * n, (layers + 1) * n))
    for layer in range(1, layers + 1):
        capacity[layer * n:(layer + 1) * n, (layer - 1) * n:layer * n] = mixed[layer - 1]
    source = layers * n + position
    values = np.array([max_flow(capacity, source, j) for j in range(n)])
    return values / values.sum()


def main():
    asked = json.load(sys.stdin)
    rng = np.random.default_rng(asked["seed"])
    attention = random_attention(
        rng, asked["layers"], asked["heads"], asked["n"], asked["causal"]
    )
    mixed = residual_mixed(attention)
    json.dump(
        {
            "attention": attention.ravel().tolist(),
            "rollout": rollout(mixed).ravel().tolist(),
            "flows": [flow(mixed, p).tolist() for p in asked["positions"]],
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
