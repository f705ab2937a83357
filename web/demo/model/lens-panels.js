// The "Which heads matter" and "Logit lens" cards of a text model that predicts: each opens with
// its button, and its code (heads-panel.js, lens-panel.js) loads then, so a page that never
// opens them never fetches it. Open panels run again after every run of the page's model.
const PANELS = {
  heads: { prefix: 'headsMatter', load: () => import('./heads-panel.js') },
  lens: { prefix: 'logitLens', load: () => import('./lens-panel.js') },
};

export class LensPanels {
  // context: { client, session, getState, getInfo } as the panels take it
  constructor(elements, context) {
    this.e = elements;
    this.context = context;
    this.open = new Map(); // name -> the panel, or the promise of it while its code loads
    for (const [name, { prefix }] of Object.entries(PANELS)) {
      elements[`${prefix}Open`].addEventListener('click', () => this.#open(name));
    }
  }

  async #open(name) {
    if (this.open.has(name)) return;
    const { prefix, load } = PANELS[name];
    const loading = load();
    this.open.set(name, loading);
    const { Panel } = await loading;
    if (this.open.get(name) !== loading) return; // closed meanwhile
    const body = this.e[`${prefix}Body`];
    const panel = new Panel(body, this.context);
    this.open.set(name, panel);
    body.hidden = false;
    this.e[`${prefix}Open`].hidden = true;
    panel.run();
    panel.focus();
  }

  #panels() {
    return [...this.open.values()].filter((panel) => !(panel instanceof Promise));
  }

  /** Shows the cards for `info` (a loaded text model that predicts), hides them otherwise. */
  show(info) {
    const on = Boolean(info?.predicts) && !info.vision && info.encoderLayers === undefined;
    for (const { prefix } of Object.values(PANELS)) this.e[prefix].hidden = !on;
  }

  /** After the page's model ran on a new text, mask or setting. */
  run() {
    for (const panel of this.#panels()) panel.run();
  }

  relabel() {
    for (const panel of this.#panels()) panel.render();
  }

  /** The model went: the panels close (their buttons open them again for the next one). */
  close() {
    for (const panel of this.#panels()) panel.stop();
    this.open.clear();
    for (const { prefix } of Object.values(PANELS)) {
      this.e[`${prefix}Body`].replaceChildren();
      this.e[`${prefix}Body`].hidden = true;
      this.e[`${prefix}Open`].hidden = false;
    }
  }

  /** What the open panels add to a snapshot of the page's run: { ablation?, logitLens? }. */
  snapshotParts(result) {
    return Object.assign({}, ...this.#panels().map((panel) => panel.snapshotPart(result)));
  }
}
