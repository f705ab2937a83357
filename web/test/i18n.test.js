// The demo's and the widget's strings: every language has the same keys with the same
// {placeholders}, and every key the page and the code ask for exists.

import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';

import { EXAMPLES } from '../demo/examples.js';
import { IDEAS } from '../demo/ideas.js';
import {
  DEFAULT_LANGUAGE,
  LANGUAGES,
  STRINGS,
  languageFor,
  placeholders,
  translate,
} from '../src/i18n/translate.js';

const english = STRINGS[DEFAULT_LANGUAGE];
const sorted = (list) => [...list].sort();

describe('strings', () => {
  for (const language of LANGUAGES.filter((l) => l !== DEFAULT_LANGUAGE)) {
    it(`${language} has exactly the keys of ${DEFAULT_LANGUAGE}`, () => {
      const keys = new Set(Object.keys(STRINGS[language]));
      const missing = Object.keys(english).filter((key) => !keys.has(key));
      const extra = [...keys].filter((key) => !(key in english));
      assert.deepEqual({ missing, extra }, { missing: [], extra: [] });
    });

    it(`${language} fills the same {placeholders} per key as ${DEFAULT_LANGUAGE}`, () => {
      const differing = Object.keys(english).filter(
        (key) =>
          sorted(placeholders(english[key])).join() !==
          sorted(placeholders(STRINGS[language][key] ?? '')).join(),
      );
      assert.deepEqual(differing, []);
    });
  }

  it('every string is non-empty text', () => {
    for (const [language, table] of Object.entries(STRINGS)) {
      for (const [key, value] of Object.entries(table)) {
        assert.ok(typeof value === 'string' && value.trim() !== '', `${language}.${key}`);
      }
    }
  });

  it('has every key the demo page, its modules and the widget ask for', () => {
    const asked = new Set();
    const html = readFileSync(new URL('../demo/index.html', import.meta.url), 'utf8');
    for (const [, key] of html.matchAll(/data-i18n="([^"]+)"/g)) asked.add(key);
    for (const [, pairs] of html.matchAll(/data-i18n-attr="([^"]+)"/g)) {
      for (const pair of pairs.split(';')) asked.add(pair.split(':')[1]);
    }
    for (const folder of ['demo', 'widget']) {
      const dir = new URL(`../${folder}/`, import.meta.url);
      const files = readdirSync(dir, { recursive: true }).filter((name) => name.endsWith('.js'));
      for (const file of files) {
        const code = readFileSync(new URL(file, dir), 'utf8');
        for (const [, key] of code.matchAll(/\bt(?:Nodes)?\(\s*'([^']+)'/g)) asked.add(key);
      }
    }
    for (const example of EXAMPLES) asked.add(example.label);
    for (const idea of IDEAS) {
      asked.add(idea.title).add(idea.text);
      if (idea.realText) asked.add(idea.realText);
    }
    assert.ok(asked.size > 100, `found only ${asked.size} keys: the scan is broken`);
    assert.deepEqual(
      [...asked].filter((key) => !(key in english)),
      [],
    );
  });
});

describe('translate', () => {
  it('fills placeholders as text and leaves unknown ones', () => {
    assert.equal(translate('en', 'headN', { n: 3 }), 'head 3');
    assert.equal(translate('zh', 'headN', { n: '<b>3</b>' }), '第 <b>3</b> 个头');
    assert.equal(translate('en', 'tokensCountCross', { nt: 2 }), 'target 2 · source {ns} tokens');
  });

  it('falls back to English, then to the key', () => {
    assert.equal(translate('fr', 'copyLink'), english.copyLink);
    assert.equal(translate('zh', 'no-such-key'), 'no-such-key');
  });

  it('maps language tags to the languages it has', () => {
    for (const tag of ['zh', 'zh-Hans', 'zh-CN', 'ZH-tw', 'zh_CN'])
      assert.equal(languageFor(tag), 'zh');
    for (const tag of ['en', 'en-GB', 'fr', 'zha', '', undefined, null]) {
      assert.equal(languageFor(tag), 'en');
    }
  });
});
