// The package's types in a Node-only project (tsconfig.node.json: `lib: ES2022`, `types: node`,
// no DOM lib): every entry a Node program imports must type-check there.
import { analyze, createAttention, type Attention, type BackendChangeEvent } from 'attnlens';
import * as inline from 'attnlens/inline';
import { createTrainer } from 'attnlens/train';

export async function nodeOnly(): Promise<number> {
  const attn: Attention = await createAttention({ backend: 'wasm', threads: 1 });
  const controller = new AbortController();
  const onChange = (event: BackendChangeEvent): void => console.log(event.from, event.to);
  attn.addEventListener('backendchange', onChange, { once: true, signal: controller.signal });
  attn.removeEventListener('backendchange', onChange);
  attn.addEventListener('other', { handleEvent: (event) => console.log(event.type) });
  const x = new Float32Array(8);
  const { output } = await attn.attention(x, x, x, { heads: 1, headDim: 4 });
  const fromInline: Attention = await inline.createAttention();
  const { tokens } = await analyze('The cat sat', { heads: 1 });
  attn.dispose();
  fromInline.dispose();
  return output.length + tokens.length;
}

export async function trainInNode(): Promise<number> {
  const trainer = await createTrainer({ vocabulary: 'bytes', threads: 1 });
  const { steps } = await trainer.train('some text to learn', { steps: 2 });
  const files = await trainer.save();
  trainer.dispose();
  return steps + files.length;
}
