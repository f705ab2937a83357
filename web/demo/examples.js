// Ready-made inputs. Each sets the mode, the text(s) and how they are split (words unless it says
// otherwise); the other settings stay as the reader left them.
// `source`: what the text attends over in cross-attention, its translation (target English over
// a Chinese source, or the other way), so switching an example to cross pairs it with its own.
// `focus` names the query token the explain panel opens on until the reader picks another.
export const EXAMPLES = [
  {
    id: 'english',
    label: 'exampleEnglish',
    mode: 'self',
    text: "The animal didn't cross the street because it was too tired.",
    source: '这只动物没有过马路，因为它太累了。',
    focus: 'it',
  },
  {
    id: 'chinese',
    label: 'exampleChinese',
    mode: 'self',
    text: '小猫没有跳上桌子，因为它太累了。',
    source: "The kitten didn't jump onto the table because it was too tired.",
    focus: '它',
  },
  {
    id: 'long-chinese',
    label: 'exampleLong',
    mode: 'self',
    granularity: 'char',
    text: '春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。',
    source:
      'Asleep in spring, I miss the dawn; everywhere birds sing. Wind and rain came in the ' +
      'night: how many flowers fell?',
  },
  {
    id: 'translation',
    label: 'exampleCross',
    mode: 'cross',
    source: '我爱自然语言处理',
    text: 'I love natural language processing',
  },
];
