// The demo page in its current language: the widget's strings (src/i18n/) and the page's own
// (i18n/strings/) bound to the language the reader chose (or the browser prefers). Static text in
// index.html carries data-i18n="key" (text) or data-i18n-attr="attribute:key;..." (attributes);
// everything built in JS asks t(key, values). Values fill {name} placeholders and are inserted as
// text, never as markup.
import {
  DEFAULT_LANGUAGE,
  LANGUAGES,
  STRINGS,
  fill,
  languageFor,
  template,
  translate,
} from '../src/i18n/translate.js';
import { en } from './i18n/strings/en.js';
import { enModels } from './i18n/strings/en-models.js';
import { zh } from './i18n/strings/zh.js';
import { zhModels } from './i18n/strings/zh-models.js';

/** Each language's strings on the page: the widget's, the page's, then those of real models. */
export const PAGE_STRINGS = {
  en: { ...STRINGS.en, ...en, ...enModels },
  zh: { ...STRINGS.zh, ...zh, ...zhModels },
};

let current = DEFAULT_LANGUAGE;

// Chinese when any of the browser's preferred languages is Chinese, else English.
export function detectLanguage() {
  const preferred = (typeof navigator !== 'undefined' && navigator.languages) || [];
  return preferred.some((tag) => languageFor(tag) === 'zh') ? 'zh' : DEFAULT_LANGUAGE;
}

export function setLanguage(lang) {
  current = LANGUAGES.includes(lang) ? lang : DEFAULT_LANGUAGE;
  return current;
}

export function language() {
  return current;
}

export function t(key, values) {
  return translate(current, key, values, PAGE_STRINGS);
}

// A score function's name in running text ('scaled dot', '缩放点积'); its id when it has none.
export function scoreName(score) {
  const key = `score:${score}`;
  return key in PAGE_STRINGS[DEFAULT_LANGUAGE] ? t(key) : score;
}

// Builds nodes from a template whose values are text and whose only markup is <b> and <code>
// written in the strings files (never in values): values are inserted as text nodes.
export function tNodes(key, values = {}) {
  const fragment = document.createDocumentFragment();
  const pattern = /<(b|code)>(.*?)<\/\1>|\{(\w+)\}|([^<{]+|[<{])/g;
  for (const match of template(current, key, PAGE_STRINGS).matchAll(pattern)) {
    if (match[1]) {
      const inner = document.createElement(match[1]);
      inner.textContent = fill(match[2], values);
      fragment.append(inner);
    } else if (match[3]) {
      fragment.append(
        document.createTextNode(match[3] in values ? String(values[match[3]]) : match[0]),
      );
    } else {
      fragment.append(document.createTextNode(match[4]));
    }
  }
  return fragment;
}

// Applies the current language to static markup under `root`.
export function translateDocument(root = document) {
  document.documentElement.lang = current === 'zh' ? 'zh-Hans' : 'en';
  for (const node of root.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
  for (const node of root.querySelectorAll('[data-i18n-attr]')) {
    for (const pair of node.dataset.i18nAttr.split(';')) {
      const [attribute, key] = pair.split(':');
      node.setAttribute(attribute, t(key));
    }
  }
}
