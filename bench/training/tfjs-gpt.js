// The model attnlens/train trains, written with TensorFlow.js core ops for its wasm backend: the
// same GPT-2 blocks (pre-LN, causal attention scaled by 1/sqrt(d), tied LM head, mean
// cross-entropy), the same AdamW (bias correction, decay on the linear matrices only, global-norm
// clipping), gradients from tf.variableGrads. It starts from the attnlens trainer's own initial
// parameters, so both train the same model from the same point (train-core.js checks the first
// losses agree). Projections run as 2-D matMuls on [B * T, C] (XNNPACK's GEMM in the wasm
// backend); attention as batched matMuls over [B, H, T, d].

export function createTfjsGpt(tf, config, parameters) {
  const { layers, heads, width, attentionOnly } = config;
  const d = width / heads;
  const variables = new Map(
    parameters.map(({ name, shape, data }) => [
      name,
      tf.variable(tf.tensor(data, shape), true, name),
    ]),
  );
  const v = (name) => variables.get(name);
  const decays = new Set(
    parameters
      .filter((p) => p.shape.length === 2 && !p.name.includes('embedding'))
      .map((p) => p.name),
  );

  const layerNorm = (x, gain, bias) => {
    const { mean, variance } = tf.moments(x, -1, true);
    return tf.add(tf.mul(tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, 1e-5))), gain), bias);
  };
  const linear = (x2d, w, b) => tf.add(tf.matMul(x2d, w), b);

  function loss(ids, targets, batch, t) {
    const rows = batch * t;
    let x = tf.add(
      // A one-hot product, not tf.gather: gather's gradient (UnsortedSegmentSum) has no kernel
      // in the wasm backend. The product picks the same rows exactly.
      tf.matMul(tf.cast(tf.oneHot(ids, config.vocab), 'float32'), v('token_embedding')),
      tf.tile(tf.slice(v('position_embedding'), [0, 0], [t, width]), [batch, 1]),
    );
    const causal = tf.linalg.bandPart(tf.ones([t, t]), -1, 0);
    const mask = tf.mul(tf.sub(1, causal), -1e9);
    for (let l = 0; l < layers; l++) {
      const p = `layers.${l}.`;
      const a = layerNorm(x, v(`${p}attention_norm.weight`), v(`${p}attention_norm.bias`));
      const qkv = linear(a, v(`${p}attention.qkv.weight`), v(`${p}attention.qkv.bias`));
      const [q, k, value] = tf
        .split(qkv, 3, 1)
        .map((part) => tf.transpose(tf.reshape(part, [batch, t, heads, d]), [0, 2, 1, 3]));
      const scores = tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(d)), mask);
      const out = tf.matMul(tf.softmax(scores), value);
      const merged = tf.reshape(tf.transpose(out, [0, 2, 1, 3]), [rows, width]);
      x = tf.add(
        x,
        linear(merged, v(`${p}attention.output.weight`), v(`${p}attention.output.bias`)),
      );
      if (!attentionOnly) {
        const m = layerNorm(x, v(`${p}mlp_norm.weight`), v(`${p}mlp_norm.bias`));
        const hidden = linear(m, v(`${p}mlp.input.weight`), v(`${p}mlp.input.bias`));
        // gelu_new, the tanh form
        const gelu = tf.mul(
          tf.mul(hidden, 0.5),
          tf.add(
            1,
            tf.tanh(
              tf.mul(tf.add(hidden, tf.mul(tf.pow(hidden, 3), 0.044715)), Math.sqrt(2 / Math.PI)),
            ),
          ),
        );
        x = tf.add(x, linear(gelu, v(`${p}mlp.output.weight`), v(`${p}mlp.output.bias`)));
      }
    }
    const top = layerNorm(x, v('final_norm.weight'), v('final_norm.bias'));
    const logits = tf.matMul(top, v('token_embedding'), false, true);
    return tf.losses.softmaxCrossEntropy(tf.oneHot(targets, config.vocab), logits);
  }

  const moments = new Map(
    [...variables].map(([name, variable]) => [
      name,
      { m: tf.zerosLike(variable), s: tf.zerosLike(variable) },
    ]),
  );
  let step = 0;

  return {
    /** One AdamW step on Int32Array `tokens` [batch, t + 1]; resolves to the loss. */
    async step(tokens, batch, t, o) {
      const rowLength = t + 1;
      const inputs = new Int32Array(batch * t);
      const outputs = new Int32Array(batch * t);
      for (let b = 0; b < batch; b++) {
        inputs.set(tokens.subarray(b * rowLength, b * rowLength + t), b * t);
        outputs.set(tokens.subarray(b * rowLength + 1, (b + 1) * rowLength), b * t);
      }
      step++;
      const value = tf.tidy(() => {
        const ids = tf.tensor1d(inputs, 'int32');
        const targets = tf.tensor1d(outputs, 'int32');
        const { value: lossValue, grads } = tf.variableGrads(() => loss(ids, targets, batch, t));
        const norm = tf.sqrt(tf.addN(Object.values(grads).map((g) => tf.sum(tf.square(g)))));
        const clip = tf.minimum(1, tf.div(o.maxGradNorm, tf.maximum(norm, 1e-12)));
        const c1 = 1 / (1 - o.beta1 ** step);
        const c2 = 1 / (1 - o.beta2 ** step);
        for (const [name, variable] of variables) {
          const g = tf.mul(grads[name], clip);
          const state = moments.get(name);
          const m = tf.add(tf.mul(state.m, o.beta1), tf.mul(g, 1 - o.beta1));
          const s = tf.add(tf.mul(state.s, o.beta2), tf.mul(tf.square(g), 1 - o.beta2));
          tf.dispose([state.m, state.s]);
          state.m = tf.keep(m);
          state.s = tf.keep(s);
          let update = tf.div(tf.mul(m, c1), tf.add(tf.sqrt(tf.mul(s, c2)), o.epsilon));
          if (decays.has(name)) update = tf.add(update, tf.mul(variable, o.weightDecay));
          variable.assign(tf.sub(variable, tf.mul(update, o.learningRate)));
        }
        return lossValue;
      });
      const [result] = await value.data();
      value.dispose();
      return result;
    },
    dispose() {
      for (const variable of variables.values()) variable.dispose();
      for (const { m, s } of moments.values()) tf.dispose([m, s]);
    },
  };
}
