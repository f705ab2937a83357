// Where a view's settings go in a link to the demo: the query string while it is short, the
// fragment once it is long. The widget's "open in attnlens" link and the demo's own address both
// write links this way, and the demo reads both places.
//
// A query string is sent to the server with the request, and servers refuse long request lines
// (Node's default limit on headers is 16 KiB, answered with HTTP 431): a text of 2,000 CJK
// characters is 18 KB once percent-encoded. The fragment never leaves the browser, which keeps
// megabytes of it, so long texts can still be shared.

/** Query strings longer than this (in characters, without the "?") go in the fragment instead. */
export const MAX_QUERY_LENGTH = 2000;

/**
 * Where `params` (URLSearchParams) go in a link: { search, hash } as location spells them ("?..."
 * or "", "#..." or ""), the query string unless it would pass MAX_QUERY_LENGTH.
 */
export function placeParams(params) {
  const text = params.toString();
  if (text.length > MAX_QUERY_LENGTH) return { search: '', hash: `#${text}` };
  return { search: text ? `?${text}` : '', hash: '' };
}

/**
 * The settings a link carries: its query's parameters, and the fragment's where the fragment
 * holds any of `names` (then it wins; an anchor such as "#stage" holds none and is ignored).
 * @param {string} search location.search
 * @param {string} hash location.hash
 * @param {string[]} names the parameter names the reader knows
 * @returns {URLSearchParams}
 */
export function readParams(search, hash, names) {
  const params = new URLSearchParams(search);
  const fragment = fragmentParams(hash, names);
  if (fragment) for (const [name, value] of fragment) params.set(name, value);
  return params;
}

/** The fragment's parameters when it holds settings (any of `names`), else null. */
export function fragmentParams(hash, names) {
  const fragment = new URLSearchParams(String(hash ?? '').replace(/^#/, ''));
  return names.some((name) => fragment.has(name)) ? fragment : null;
}
