// The widget's strings (in the package) and the demo page's (in demo/): every language has the
// same keys with the same {placeholders}, each string has one source, every key the page and
// the widget ask for exists, and the package carries only what the widget asks for.

import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';

import { EXAMPLES } from '../demo/examples.js';
import { PAGE_STRINGS } from '../demo/i18n.js';
import { en as pageEnglish } from '../demo/i18n/strings/en.js';
import { enModels as pageModelsEnglish } from '../demo/i18n/strings/en-models.js';
import { IDEAS } from '../demo/ideas.js';
import {
  DEFAULT_LANGUAGE,
  LANGUAGES,
  STRINGS,
  languageFor,
  placeholders,
  translate,
} from '../src/i18n/translate.js';
import { SCORES } from '../src/vocabulary.js';

const english = STRINGS[DEFAULT_LANGUAGE];
const sorted = (list) => [...list].sort();
const TABLES = { widget: STRINGS, page: PAGE_STRINGS };

// The keys `code` asks for: every quoted key in the first argument of t(), tNodes() or #t()
// (`t(n === 1 ? 'one' : 'many', ...)` asks for both); keys built in a template literal are not
// read.
function askedKeys(code) {
  const keys = [];
  for (const [, argument] of code.matchAll(/(?:\bt|\btNodes|#t)\(([^,)]*)/g)) {
    if (argument.trimStart().startsWith('`')) continue;
    for (const [, key] of argument.matchAll(/'([^']+)'/g)) keys.push(key);
  }
  return keys;
}

// The keys asked for by the .js files under web/<folder>/ (subfolders too).
function askedIn(folder) {
  const dir = new URL(`../${folder}/`, import.meta.url);
  const files = readdirSync(dir, { recursive: true }).filter((name) => name.endsWith('.js'));
  return files.flatMap((file) => askedKeys(readFileSync(new URL(file, dir), 'utf8')));
}

// The widget's: its own calls, a model that did not load (the keys load-failure.js names), and
// the score's name in its header (`score:${score}`).
function widgetKeys() {
  const failures = readFileSync(new URL('../src/models/load-failure.js', import.meta.url), 'utf8');
  return new Set([
    ...askedIn('widget'),
    ...Array.from(failures.matchAll(/'(modelFail\w+)'/g), (match) => match[1]),
    ...SCORES.map((score) => `score:${score}`),
  ]);
}

for (const [name, table] of Object.entries(TABLES)) {
  describe(`${name} strings`, () => {
    const base = table[DEFAULT_LANGUAGE];
    for (const language of LANGUAGES.filter((l) => l !== DEFAULT_LANGUAGE)) {
      it(`${language} has exactly the keys of ${DEFAULT_LANGUAGE}`, () => {
        const keys = new Set(Object.keys(table[language]));
        const missing = Object.keys(base).filter((key) => !keys.has(key));
        const extra = [...keys].filter((key) => !(key in base));
        assert.deepEqual({ missing, extra }, { missing: [], extra: [] });
      });

      it(`${language} fills the same {placeholders} per key as ${DEFAULT_LANGUAGE}`, () => {
        const differing = Object.keys(base).filter(
          (key) =>
            sorted(placeholders(base[key])).join() !==
            sorted(placeholders(table[language][key] ?? '')).join(),
        );
        assert.deepEqual(differing, []);
      });
    }

    it('every string is non-empty text', () => {
      for (const [language, strings] of Object.entries(table)) {
        for (const [key, value] of Object.entries(strings)) {
          assert.ok(typeof value === 'string' && value.trim() !== '', `${language}.${key}`);
        }
      }
    });
  });
}

describe('strings', () => {
  it('has one source per string: the page adds keys, never redefines the widget’s', () => {
    const pageFiles = [pageEnglish, pageModelsEnglish];
    const defined = pageFiles.flatMap((strings) => Object.keys(strings));
    assert.deepEqual(
      defined.filter((key, i) => key in english || defined.indexOf(key) !== i),
      [],
    );
  });

  it('the package carries exactly the strings the widget asks for', () => {
    const asked = widgetKeys();
    assert.ok(asked.size > 30, `found only ${asked.size} keys: the scan is broken`);
    assert.deepEqual(
      [...asked].filter((key) => !(key in english)),
      [],
      'asked for by the widget, missing from src/i18n/strings/',
    );
    assert.deepEqual(
      Object.keys(english).filter((key) => !asked.has(key)),
      [],
      'in the package but only the demo asks for it: move it to demo/i18n/strings/',
    );
  });

  it('has every key the demo page and its modules ask for', () => {
    const asked = new Set(askedIn('demo'));
    const html = readFileSync(new URL('../demo/index.html', import.meta.url), 'utf8');
    for (const [, key] of html.matchAll(/data-i18n="([^"]+)"/g)) asked.add(key);
    for (const [, pairs] of html.matchAll(/data-i18n-attr="([^"]+)"/g)) {
      for (const pair of pairs.split(';')) asked.add(pair.split(':')[1]);
    }
    for (const example of EXAMPLES) asked.add(example.label);
    for (const idea of IDEAS) {
      asked.add(idea.title).add(idea.text);
      if (idea.realText) asked.add(idea.realText);
    }
    assert.ok(asked.size > 100, `found only ${asked.size} keys: the scan is broken`);
    assert.deepEqual(
      [...asked].filter((key) => !(key in PAGE_STRINGS[DEFAULT_LANGUAGE])),
      [],
    );
  });
});

describe('translate', () => {
  it('fills placeholders as text and leaves unknown ones', () => {
    assert.equal(translate('en', 'headN', { n: 3 }), 'head 3');
    assert.equal(translate('zh', 'headN', { n: '<b>3</b>' }), '第 <b>3</b> 个头');
    assert.equal(
      translate('en', 'tokensCountCross', { nt: 2 }, PAGE_STRINGS),
      'target 2 · source {ns} tokens',
    );
  });

  it('falls back to English, then to the key', () => {
    assert.equal(translate('fr', 'widgetOpen'), english.widgetOpen);
    assert.equal(translate('fr', 'copyLink', {}, PAGE_STRINGS), PAGE_STRINGS.en.copyLink);
    assert.equal(translate('zh', 'no-such-key'), 'no-such-key');
    assert.equal(translate('zh', 'no-such-key', {}, PAGE_STRINGS), 'no-such-key');
  });

  it('maps language tags to the languages it has', () => {
    for (const tag of ['zh', 'zh-Hans', 'zh-CN', 'ZH-tw', 'zh_CN'])
      assert.equal(languageFor(tag), 'zh');
    for (const tag of ['en', 'en-GB', 'fr', 'zha', '', undefined, null]) {
      assert.equal(languageFor(tag), 'en');
    }
  });
});
