// `import 'attnlens/widget'` where there is no DOM (server-side rendering): nothing throws and
// nothing is defined; the module's exports are still there for code that checks them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';

describe('attnlens/widget without a DOM', () => {
  it('imports in Node, defines no element and keeps its exports', () => {
    // A process of its own, so no other test's globals (or their absence) decide the result.
    const script = `
      const widget = await import('attnlens/widget');
      console.log(JSON.stringify({
        dom: typeof HTMLElement, customElements: typeof customElements,
        element: typeof widget.AttnLensElement, sharedEngine: typeof widget.sharedEngine,
        attributes: widget.AttnLensElement.observedAttributes.includes('text'),
      }));`;
    const result = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: new URL('..', import.meta.url),
        encoding: 'utf8',
      }),
    );
    assert.deepEqual(result, {
      dom: 'undefined',
      customElements: 'undefined',
      element: 'function',
      sharedEngine: 'function',
      attributes: true,
    });
  });
});
