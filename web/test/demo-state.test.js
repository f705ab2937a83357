// The demo's state in the URL (demo/state.js): every setting survives the round trip through the
// query string, defaults stay out of the link, and a malformed value falls back to its default.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  HEAD_DIMS,
  TEMPERATURE_RANGE,
  TEMPERATURE_STEPS,
  defaultState,
  headDimFromSlider,
  resetState,
  addressFromState,
  linkFromState,
  readLink,
  searchFromState,
  sliderFromHeadDim,
  sliderFromTemperature,
  stateFromSearch,
  temperatureFromSlider,
} from '../demo/state.js';
import { EXAMPLES } from '../demo/examples.js';

const roundTrip = (state) => stateFromSearch(searchFromState(state));

describe('demo URL state', () => {
  it('writes nothing for the defaults and reads the defaults from nothing', () => {
    assert.equal(searchFromState(defaultState()), '');
    assert.deepEqual(stateFromSearch(''), defaultState());
    assert.deepEqual(stateFromSearch('?'), defaultState());
  });

  it('round-trips every field set away from its default', () => {
    const state = {
      ...defaultState(),
      mode: 'cross',
      text: 'I love natural language processing',
      source: '我爱自然语言处理 & more = "quotes" + plus',
      heads: 6,
      head: 5,
      dk: 64,
      mask: 'align:1+pad:0,5',
      compare: 'pad:2',
      score: 'cosine',
      temperature: 0.25,
      granularity: 'char',
      view: 'numbers',
      query: 3,
      key: 0,
      scale: 'cividis',
      range: 'unit',
      orientation: 'horizontal',
      lang: 'zh',
      backend: 'wasm',
    };
    assert.deepEqual(roundTrip(state), state);
  });

  it('round-trips each setting on its own', () => {
    const changes = [
      { mode: 'cross' },
      { text: '' },
      { heads: 8, head: 7 },
      { dk: 2 },
      { dk: 128 },
      { mask: 'local:4' },
      { mask: 'causal+dilated:1:2+tokens:0,5', compare: 'strided:3' },
      { compare: 'global' },
      { score: 'additive' },
      { temperature: 10 },
      { temperature: 0.1 },
      { granularity: 'subword' },
      { view: 'lines' },
      { query: 0 },
      { key: 12 },
      { orientation: 'vertical' },
      { backend: 'webgpu' },
    ];
    for (const change of changes) {
      const state = { ...defaultState(), ...change };
      assert.deepEqual(roundTrip(state), state, JSON.stringify(change));
    }
  });

  it('leaves the source out of the link unless the mode is cross', () => {
    const search = searchFromState({ ...defaultState(), source: 'elsewhere' });
    assert.equal(search, '');
    assert.match(searchFromState({ ...defaultState(), mode: 'cross', source: 'x' }), /source=x/);
  });

  it('pairs each text with its translation in cross-attention, the default text too', () => {
    const chinese = /[\u4e00-\u9fff]/;
    for (const example of EXAMPLES) {
      assert.ok(example.source, `${example.id} has a source`);
      assert.notEqual(chinese.test(example.text), chinese.test(example.source), example.id);
    }
    // English over its Chinese translation, and the Chinese page the other way round.
    assert.equal(defaultState('en').source, '这只动物没有过马路，因为它太累了。');
    assert.equal(
      defaultState('zh').source,
      "The kitten didn't jump onto the table because it was too tired.",
    );
    assert.equal(defaultState('zh').text, '小猫没有跳上桌子，因为它太累了。');
    // Switching to cross keeps the pair out of the link: it is the default one.
    assert.equal(searchFromState({ ...defaultState('zh'), mode: 'cross' }, 'zh'), '?mode=cross');
  });

  it('uses its short parameter names', () => {
    const search = searchFromState({
      ...defaultState(),
      temperature: 2,
      granularity: 'char',
      scale: 'cividis',
      orientation: 'vertical',
      query: 1,
      key: 2,
      head: 1,
    });
    assert.equal(search, '?head=2&t=2&tokens=char&q=1&k=2&colors=cividis&layout=vertical');
  });

  it('writes masks in their canonical form', () => {
    const state = stateFromSearch(`?mask=${encodeURIComponent('Local:2 + CAUSAL')}`);
    assert.equal(state.mask, 'causal+local:2');
    assert.equal(searchFromState(state), `?mask=${encodeURIComponent('causal+local:2')}`);
  });

  it('falls back to the default for every malformed value', () => {
    const defaults = defaultState();
    const cases = [
      ['heads=0', { heads: defaults.heads }],
      ['heads=9', { heads: defaults.heads }],
      ['heads=2.5', { heads: defaults.heads }],
      ['heads=2&head=3', { heads: 2, head: 0 }],
      ['head=0', { head: 0 }],
      ['q=-3&k=x', { query: -1, key: -1 }],
      ['mask=bogus', { mask: 'global' }],
      ['mask=local:x', { mask: 'global' }],
      ['mask=patch:3', { mask: 'global' }], // a picture's window: no grid on the text page
      ['surgery=patch:3', { surgery: '' }],
      ['compare=bogus', { compare: '' }],
      ['t=100', { temperature: 1 }],
      ['t=0.01', { temperature: 1 }],
      ['t=warm', { temperature: 1 }],
      ['score=cosine-ish', { score: defaults.score }],
      ['view=3d', { view: defaults.view }],
      ['tokens=sentence', { granularity: defaults.granularity }],
      ['colors=rainbow', { scale: defaults.scale }],
      ['lang=fr', { lang: '' }],
      ['backend=cuda', { backend: 'auto' }],
      ['dk=12', { dk: defaults.dk }],
      ['dk=256', { dk: defaults.dk }],
    ];
    for (const [search, expected] of cases) {
      assert.deepEqual(stateFromSearch(`?${search}`), { ...defaults, ...expected }, search);
    }
  });

  it('reduces a mask to what applies between two texts in cross mode', () => {
    const state = stateFromSearch('?mode=cross&mask=causal%2Blocal:2%2Bpad:1&compare=strided:3');
    assert.equal(state.mask, 'pad:1');
    assert.equal(state.compare, 'global');
    assert.equal(stateFromSearch('?mask=align:3').mask, 'local:3', 'self-attention: a window');
  });

  it('opens on the Chinese sentence for a Chinese reader, and keeps it out of the link', () => {
    assert.equal(stateFromSearch('', '', 'zh').text, EXAMPLES[1].text);
    assert.equal(stateFromSearch('?lang=zh').text, EXAMPLES[1].text);
    assert.equal(stateFromSearch('?lang=en', '', 'zh').text, EXAMPLES[0].text);
    assert.equal(searchFromState(defaultState('zh'), 'zh'), '');
    assert.match(searchFromState(defaultState('en'), 'zh'), /^\?text=The\+animal/);
  });

  it("resets everything but the reader's preferences", () => {
    const state = {
      ...defaultState(),
      mode: 'cross',
      mask: 'align:1',
      temperature: 0.2,
      score: 'dot',
      granularity: 'char',
      dk: 64,
      heads: 8,
      lang: 'zh',
      backend: 'wasm',
      scale: 'cividis',
      range: 'unit',
      orientation: 'vertical',
    };
    assert.deepEqual(resetState(state, 'zh'), {
      ...defaultState('zh'),
      lang: 'zh',
      backend: 'wasm',
      scale: 'cividis',
      range: 'unit',
      orientation: 'vertical',
    });
  });
});

describe('a real model in the link', () => {
  const model = {
    ...defaultState(),
    model: 'roneneldan/TinyStories-1M',
    revision: 'v1.0',
    dtype: 'f16',
    layer: 3,
    head: 7,
    surgery: 'causal+local:3',
    surgeryLayer: 2,
    words: true,
    pair: 'I love natural language processing',
    block: true,
    overlay: '1,3',
    second: 'stories260K',
    view: 'model',
  };

  it('keeps the model, its layer and head, the mask surgery and the views', () => {
    assert.deepEqual(roundTrip(model), model);
    const params = new URLSearchParams(searchFromState(model));
    assert.deepEqual(
      ['model', 'rev', 'layer', 'head', 'surgery', 'surgeryLayer'].map((name) => params.get(name)),
      ['roneneldan/TinyStories-1M', 'v1.0', '4', '8', 'causal+local:3', '3'],
      'one-based layers and heads, as the page shows them',
    );
  });

  it('keeps the second model of a comparison, and refuses one that is not a Hub id', () => {
    assert.equal(new URLSearchParams(searchFromState(model)).get('second'), 'stories260K');
    const { state, problems } = readLink('?model=stories260K&second=..%2Fx');
    assert.equal(state.second, '');
    assert.deepEqual(problems, [{ param: 'second', value: '../x' }]);
    // Without a first model there is nothing to compare with.
    assert.deepEqual(readLink('?second=stories260K').problems, [
      { param: 'second', value: 'stories260K' },
    ]);
  });

  it("keeps every dtype loadModel takes ('q8', 'q4' too), and names one it does not", () => {
    for (const dtype of ['f32', 'f16', 'q8', 'q4']) {
      assert.deepEqual(roundTrip({ ...model, dtype }), { ...model, dtype });
    }
    const { state, problems } = readLink('?model=stories260K&dtype=q2');
    assert.equal(state.dtype, defaultState().dtype);
    assert.deepEqual(problems, [{ param: 'dtype', value: 'q2' }]);
  });

  it("leaves a model's settings out of the untrained layer's link and out of picked files'", () => {
    assert.equal(searchFromState({ ...model, model: '' }), '?head=8&view=model');
    assert.equal(searchFromState({ ...model, model: 'files' }), '?head=8&view=model');
  });

  it('keeps a llama2.c checkpoint in a Hub repo, as loadModel() takes it', () => {
    const checkpoint = { ...model, model: 'karpathy/tinyllamas/stories15M.bin' };
    assert.deepEqual(roundTrip(checkpoint), checkpoint);
    const nested = { ...model, model: 'owner/name/out/stories260K.bin' };
    assert.deepEqual(roundTrip(nested), nested);
    // Only a checkpoint (a .bin, not a tokenizer's or PyTorch's), each path part a file name.
    for (const path of [
      'owner/name/config.json',
      'owner/name/tok512.bin',
      'owner/name/pytorch_model.bin',
      'owner/name/../x.bin',
      'owner/name//x.bin',
      'owner/na--me/x.bin',
    ]) {
      const { problems } = readLink(`?model=${encodeURIComponent(path)}`);
      assert.deepEqual(problems, [{ param: 'model', value: path }], path);
    }
  });

  it('reports a model id, revision, layer or surgery it cannot use', () => {
    const { state, problems } = readLink(
      '?model=..%2Fsecrets&rev=main&layer=0&surgery=sideways&surgeryLayer=x&words=2',
    );
    assert.deepEqual(state, defaultState());
    assert.deepEqual(problems, [
      { param: 'model', value: '../secrets' },
      { param: 'rev', value: 'main' },
      { param: 'layer', value: '0' },
      { param: 'surgery', value: 'sideways' },
      { param: 'surgeryLayer', value: 'x' },
      { param: 'words', value: '2' },
    ]);
  });
});

describe('links the demo cannot fully use', () => {
  it('lists each value it fell back from, as given', () => {
    const { state, problems } = readLink(
      '?mask=local:1e21&compare=strided:1e21&heads=99&t=warm&view=3d&text=ok',
    );
    assert.deepEqual(state, { ...defaultState(), text: 'ok' });
    assert.deepEqual(problems, [
      { param: 'view', value: '3d' },
      { param: 'heads', value: '99' },
      { param: 'mask', value: 'local:1e21' },
      { param: 'compare', value: 'strided:1e21' },
      { param: 't', value: 'warm' },
    ]);
    assert.deepEqual(readLink('?mask=causal&compare=').problems, [], 'an empty compare is none');
  });

  it('a mask it accepts is written back so that it reads the same', () => {
    for (const mask of ['local:9007199254740991', 'causal+strided:12345678901+tokens:0,99']) {
      const state = { ...defaultState(), mask, compare: mask };
      const link = linkFromState(state);
      assert.deepEqual(readLink(link.search, link.hash), {
        state,
        problems: [],
        fromFragment: false,
      });
    }
  });
});

describe('long links', () => {
  const long = { ...defaultState(), text: '注意力'.repeat(700), mask: 'causal' };

  it('put their settings in the fragment, which the server never sees', () => {
    const link = linkFromState(long);
    assert.equal(link.search, '');
    assert.ok(
      link.hash.startsWith('#') && link.hash.includes('mask=causal'),
      link.hash.slice(0, 40),
    );
    const read = readLink(link.search, link.hash);
    assert.deepEqual(read.state, long);
    assert.equal(read.fromFragment, true);
    const short = linkFromState({ ...long, text: 'short' });
    assert.equal(short.hash, '');
    assert.match(short.search, /^\?text=short&mask=causal$/);
  });

  it('keep an anchor when the settings leave the fragment free, and drop stale settings', () => {
    const short = { ...defaultState(), mask: 'causal' };
    assert.equal(addressFromState(short, '#stage'), '?mask=causal#stage');
    assert.equal(addressFromState(short, linkFromState(long).hash), '?mask=causal');
    assert.ok(addressFromState(long, '#stage').startsWith('#text='));
  });

  it('old ?query links keep working, and the fragment wins over the query', () => {
    assert.deepEqual(stateFromSearch('?mask=causal&heads=2'), {
      ...defaultState(),
      mask: 'causal',
      heads: 2,
    });
    assert.deepEqual(stateFromSearch('?mask=causal&heads=2', '#heads=3'), {
      ...defaultState(),
      mask: 'causal',
      heads: 3,
    });
    assert.deepEqual(stateFromSearch('?heads=2', '#stage'), { ...defaultState(), heads: 2 });
  });
});

describe('temperature slider', () => {
  it('spans the temperature range on a log scale, 1 in the middle', () => {
    assert.equal(temperatureFromSlider(0), TEMPERATURE_RANGE[0]);
    assert.equal(temperatureFromSlider(TEMPERATURE_STEPS / 2), 1);
    assert.equal(temperatureFromSlider(TEMPERATURE_STEPS), TEMPERATURE_RANGE[1]);
  });

  it('shows a new value at every step, and puts each value back on its step', () => {
    const shown = new Set();
    for (let position = 0; position <= TEMPERATURE_STEPS; position++) {
      const value = temperatureFromSlider(position);
      shown.add(value.toFixed(2));
      assert.equal(sliderFromTemperature(value), position, `${position} -> ${value}`);
    }
    assert.equal(shown.size, TEMPERATURE_STEPS + 1, [...shown].join(' '));
    for (const t of [0.2, 0.5, 5]) assert.equal(temperatureFromSlider(sliderFromTemperature(t)), t);
  });
});

describe('d_k slider', () => {
  it('steps through the head sizes the page offers', () => {
    HEAD_DIMS.forEach((dk, position) => {
      assert.equal(headDimFromSlider(position), dk);
      assert.equal(sliderFromHeadDim(dk), position);
    });
    assert.equal(headDimFromSlider(99), HEAD_DIMS.at(-1));
  });
});
