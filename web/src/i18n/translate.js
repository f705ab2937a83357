// The languages of the widget and the demo, and the one way to fill a string. Each language's
// strings are a file in strings/, with the same keys and {name} placeholders in every language:
// the widget's, which the package ships; the demo page adds its own (demo/i18n/strings/) and
// passes the joined table. Values fill placeholders as text, never as markup. The demo binds this
// to the page's language (demo/i18n.js); each <attn-lens> to its own `language` attribute.
import { en } from './strings/en.js';
import { zh } from './strings/zh.js';

export const STRINGS = { en, zh };
export const LANGUAGES = Object.keys(STRINGS);
export const DEFAULT_LANGUAGE = 'en';

const PLACEHOLDER = /\{(\w+)\}/g;

/** The language a BCP 47 tag ('zh-Hans', 'en-GB', 'zh') asks for: Chinese for zh*, else English. */
export function languageFor(tag) {
  return /^zh(?![a-z])/i.test(tag ?? '') ? 'zh' : DEFAULT_LANGUAGE;
}

/**
 * `key`'s template in `language` of `strings` (the widget's by default): English where that
 * language lacks it, else the key itself.
 */
export function template(language, key, strings = STRINGS) {
  return strings[language]?.[key] ?? strings[DEFAULT_LANGUAGE][key] ?? key;
}

/** `text` with each {name} whose name is in `values` replaced by String(values[name]). */
export function fill(text, values = {}) {
  return text.replace(PLACEHOLDER, (match, name) =>
    name in values ? String(values[name]) : match,
  );
}

/** `key`'s string in `language` of `strings`, placeholders filled from `values`. */
export function translate(language, key, values, strings = STRINGS) {
  return fill(template(language, key, strings), values);
}

/** The names of a template's {placeholders}, in order. */
export function placeholders(text) {
  return Array.from(text.matchAll(PLACEHOLDER), (match) => match[1]);
}
