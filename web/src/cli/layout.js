// Text laid out within a terminal's width: the usage message's two columns, and lists of items
// (the settings line) broken between items. Widths are display columns (CJK counts two).

import { displayWidth } from './terminal-text.js';

/** What the CLI writes fits this many columns when stdout is not a terminal. */
export const DEFAULT_WIDTH = 80;

/** Words of `text` in lines of at most `width` columns (a longer word gets a line of its own). */
export function wrapWords(text, width) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && displayWidth(`${line} ${word}`) > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  lines.push(line);
  return lines;
}

/**
 * Two columns: each name padded to `nameWidth` after `indent` spaces, its text wrapped in the
 * columns left of `width`; a name too long for its column puts the text on the next line.
 */
export function twoColumns(rows, { indent, nameWidth, width = DEFAULT_WIDTH }) {
  const textIndent = ' '.repeat(indent + nameWidth);
  const lines = [];
  for (const [name, text] of rows) {
    const head = `${' '.repeat(indent)}${name}`;
    const beside = displayWidth(head) < indent + nameWidth; // else the text starts below
    if (!beside) lines.push(head);
    wrapWords(text, width - indent - nameWidth).forEach((line, i) => {
      lines.push((i === 0 && beside ? head.padEnd(indent + nameWidth) : textIndent) + line);
    });
  }
  return lines;
}

/** items joined by `separator`, broken before an item that would pass `width`. */
export function wrapItems(items, separator, width, continuation = '  ') {
  const lines = [];
  let line = '';
  for (const item of items) {
    if (!line) {
      line = item;
    } else if (displayWidth(line + separator + item) <= width) {
      line += separator + item;
    } else {
      lines.push(line);
      line = continuation + separator.trimStart() + item;
    }
  }
  lines.push(line);
  return lines;
}
