// Types of the <attn-lens> custom element (browser only): `import 'attnlens/widget'` defines it.
import type { Attention } from './index.js';

/** The element behind <attn-lens>; configure it through attributes (see the README). */
export declare class AttnLensElement extends HTMLElement {
  static readonly observedAttributes: readonly string[];
}

/** The one engine every <attn-lens> on the page shares (created on first use). */
export declare function sharedEngine(): Promise<Attention>;

declare global {
  interface HTMLElementTagNameMap {
    'attn-lens': AttnLensElement;
  }
}
