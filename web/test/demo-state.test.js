// The demo's state in the URL (demo/state.js): every setting survives the round trip through the
// query string, defaults stay out of the link, and a malformed value falls back to its default.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  TEMPERATURE_RANGE,
  addressFromState,
  defaultState,
  linkFromState,
  readLink,
  searchFromState,
  sliderFromTemperature,
  stateFromSearch,
  temperatureFromSlider,
} from '../demo/state.js';

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
      mask: 'causal+dilated:1:2+tokens:0,5',
      compare: 'strided:3',
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
      { mask: 'local:4' },
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
    ];
    for (const [search, expected] of cases) {
      assert.deepEqual(stateFromSearch(`?${search}`), { ...defaults, ...expected }, search);
    }
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
  it('spans the temperature range on a log scale', () => {
    assert.equal(temperatureFromSlider(0), TEMPERATURE_RANGE[0]);
    assert.equal(temperatureFromSlider(500), 1);
    assert.equal(temperatureFromSlider(1000), TEMPERATURE_RANGE[1]);
  });

  it('puts a temperature back where the slider read it', () => {
    // Values are rounded to 2 or 3 significant digits, so the slider may land a few steps away,
    // but always on a position that reads the same value.
    for (let position = 0; position <= 1000; position += 25) {
      const value = temperatureFromSlider(position);
      assert.equal(temperatureFromSlider(sliderFromTemperature(value)), value, `${position}`);
      assert.ok(Math.abs(sliderFromTemperature(value) - position) <= 10, `${position} -> ${value}`);
    }
  });
});
