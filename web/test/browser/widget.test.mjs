// <attn-lens> in headless Chromium: the sample blog post renders its three widgets from one
// shared engine, attribute changes re-render, and the strict-CSP page works with hostile text
// that must stay text.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { artifact, newPage, openBrowser } from './harness.mjs';

let browser;
before(async () => {
  browser = await openBrowser();
});
after(async () => {
  await browser?.close();
});

// Scrolls each widget into view (they compute lazily) and waits until it has rendered.
async function renderAll(page, ids) {
  for (const id of ids) {
    await page.locator(`#${id}`).scrollIntoViewIfNeeded();
    await page.waitForFunction((id) => document.getElementById(id).dataset.state === 'ready', id, {
      timeout: 20000,
    });
  }
}

// The widget's screen-reader table: header texts and, per row, 'm' for masked or the weight.
async function widgetTable(page, id) {
  return page.evaluate((id) => {
    const table = document.getElementById(id).shadowRoot.querySelector('table');
    return {
      cols: [...table.querySelectorAll('thead th')].slice(1).map((th) => th.textContent),
      rows: [...table.querySelectorAll('tbody tr')].map((tr) => tr.querySelector('th').textContent),
      cells: [...table.querySelectorAll('tbody tr')].map((tr) =>
        [...tr.querySelectorAll('td')].map((td) =>
          td.hasAttribute('data-masked') ? 'm' : Number(td.dataset.value),
        ),
      ),
    };
  }, id);
}

test('the blog sample renders three widgets from one wasm instance, lazily', async () => {
  const page = await newPage(browser.context, { viewport: { width: 1100, height: 800 } });
  const wasmRequests = [];
  page.on('request', (request) => {
    if (/\.wasm(\.gz)?$/.test(request.url())) wasmRequests.push(request.url());
  });
  await page.goto(`${browser.base}/widget/blog.html`);
  const ids = ['widget-local', 'widget-causal', 'widget-cross'];
  await page.waitForFunction(
    () => document.getElementById('widget-local').dataset.state === 'ready',
    null,
    { timeout: 20000 },
  );
  // The third widget is far below the fold: it has not computed yet.
  assert.equal(await page.getAttribute('#widget-cross', 'data-state'), 'waiting');
  await renderAll(page, ids);

  const views = await page.evaluate(
    (ids) =>
      ids.map((id) => {
        const root = document.getElementById(id).shadowRoot;
        return {
          canvas: root.querySelectorAll('canvas').length,
          paths: root.querySelectorAll('svg path').length,
          tiles: root.querySelectorAll('.al-head-tile').length,
        };
      }),
    ids,
  );
  assert.equal(views[0].canvas, 1, 'matrix view');
  assert.ok(views[1].paths > 0, 'line view');
  assert.equal(views[2].tiles, 4, 'heads view: one tile per head');
  assert.equal(wasmRequests.length, 1, `one wasm download for all widgets: ${wasmRequests}`);
  // 16 characters fit the widget's default 520px height: no row is cut off.
  const matrix = await page.evaluate(() => {
    const scroller = document
      .getElementById('widget-local')
      .shadowRoot.querySelector('.al-heatmap-scroll');
    return { scrollHeight: scroller.scrollHeight, clientHeight: scroller.clientHeight };
  });
  assert.ok(
    matrix.scrollHeight <= matrix.clientHeight,
    `matrix ${matrix.scrollHeight}px in a ${matrix.clientHeight}px box`,
  );

  // local:2 over characters: only |i - j| <= 2 is visible.
  const local = await widgetTable(page, 'widget-local');
  local.cells.forEach((row, r) =>
    row.forEach((cell, c) => assert.equal(cell === 'm', Math.abs(r - c) > 2)),
  );
  const cross = await widgetTable(page, 'widget-cross');
  assert.deepEqual(cross.rows, ['I', 'love', 'natural', 'language', 'processing']);
  assert.ok(cross.cols.includes('自然'));

  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: artifact('widget-blog.png'), fullPage: true });
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('changing an attribute re-renders the widget', async () => {
  const page = await newPage(browser.context);
  await page.goto(`${browser.base}/widget/blog.html`);
  await renderAll(page, ['widget-local']);
  const renders = Number(await page.getAttribute('#widget-local', 'data-renders'));
  await page.evaluate(() => {
    const widget = document.getElementById('widget-local');
    widget.setAttribute('mask', 'causal');
    widget.setAttribute('text', '注意力机制');
  });
  await page.waitForFunction(
    (n) => Number(document.getElementById('widget-local').dataset.renders) > n,
    renders,
  );
  assert.equal(
    Number(await page.getAttribute('#widget-local', 'data-renders')),
    renders + 1,
    'two changes, one render',
  );
  const table = await widgetTable(page, 'widget-local');
  assert.deepEqual(table.rows, ['注', '意', '力', '机', '制']);
  table.cells.forEach((row, r) => row.forEach((cell, c) => assert.equal(cell === 'm', c > r)));

  await page.evaluate(() => document.getElementById('widget-local').setAttribute('view', 'lines'));
  await page.waitForFunction(() =>
    document.getElementById('widget-local').shadowRoot.querySelector('svg path'),
  );
  await page.evaluate(() =>
    document.getElementById('widget-local').setAttribute('mask', 'bogus:1'),
  );
  await page.waitForFunction(
    () => document.getElementById('widget-local').dataset.state === 'error',
  );
  assert.match(
    await page.evaluate(
      () => document.getElementById('widget-local').shadowRoot.querySelector('.status').textContent,
    ),
    /unknown part "bogus:1"/,
  );
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a widget with top-k names the keys it leaves out', async () => {
  const page = await newPage(browser.context);
  await page.goto(`${browser.base}/widget/blog.html`);
  await renderAll(page, ['widget-local']);
  const renders = Number(await page.getAttribute('#widget-local', 'data-renders'));
  await page.evaluate(() => {
    const widget = document.getElementById('widget-local');
    widget.setAttribute('mask', 'causal+topk:2');
    widget.setAttribute('text', '注意力机制');
  });
  await page.waitForFunction(
    (n) => Number(document.getElementById('widget-local').dataset.renders) > n,
    renders,
  );
  const cells = await page.evaluate(() =>
    [...document.getElementById('widget-local').shadowRoot.querySelectorAll('tbody tr')].map((tr) =>
      [...tr.querySelectorAll('td')].map((td) =>
        td.hasAttribute('data-left-out')
          ? td.textContent
          : td.hasAttribute('data-masked')
            ? 'm'
            : 'w',
      ),
    ),
  );
  // Causal hides the future (masked); top-k keeps 2 of the rest and leaves out the others.
  cells.forEach((row, r) =>
    row.forEach((cell, c) => {
      if (c > r) assert.equal(cell, 'm', `(${r}, ${c})`);
    }),
  );
  cells.forEach((row, r) =>
    assert.equal(row.filter((cell) => cell === 'w').length, Math.min(2, r + 1)),
  );
  assert.ok(cells.flat().includes('已舍弃'), "named in the widget's language (zh)");
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the strict-CSP page works and hostile text stays text', async () => {
  const page = await newPage(browser.context);
  const dialogs = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    dialog.dismiss();
  });
  await page.goto(`${browser.base}/widget/csp.html`);
  await renderAll(page, ['csp-plain', 'csp-xss', 'csp-live']);

  const xss = await page.evaluate(() => {
    const root = document.getElementById('csp-xss').shadowRoot;
    return {
      flag: window.__attnlensXss ?? null,
      images: root.querySelectorAll('img').length + document.querySelectorAll('img').length,
      scripts: root.querySelectorAll('script').length,
      tokens: [...root.querySelectorAll('table thead th')].map((th) => th.textContent),
      svgText: [...root.querySelectorAll('svg text')].map((t) => t.textContent).join(' '),
    };
  });
  assert.equal(xss.flag, null, 'no injected script ran');
  assert.equal(xss.images, 0);
  assert.equal(xss.scripts, 0);
  assert.ok(
    xss.tokens.some((t) => t.includes('img')),
    `tokens: ${xss.tokens}`,
  );
  assert.ok(
    xss.tokens.some((t) => t.includes('script')),
    `tokens: ${xss.tokens}`,
  );
  assert.ok(xss.svgText.includes('img'));

  const renders = Number(await page.getAttribute('#csp-live', 'data-renders'));
  await page.fill('#csp-input', '你好世界');
  await page.waitForFunction(
    (n) => Number(document.getElementById('csp-live').dataset.renders) > n,
    renders,
  );
  assert.deepEqual((await widgetTable(page, 'csp-live')).rows, ['你好', '世界']);

  assert.equal(
    await page.textContent('#csp-violations'),
    '0',
    'the widgets caused no CSP violation',
  );
  assert.deepEqual(page.problems, []);
  await page.screenshot({ path: artifact('widget-csp.png'), fullPage: true });
  // And the policy is really in force: an inline script added now is refused.
  const inlineRan = await page.evaluate(async () => {
    const script = document.createElement('script');
    script.textContent = 'window.__inlineProbe = true';
    document.head.append(script);
    await new Promise((resolve) => setTimeout(resolve, 50));
    return window.__inlineProbe === true;
  });
  assert.equal(inlineRan, false);
  // One report per policy in force: the page's <meta> and the server's header.
  assert.match(await page.textContent('#csp-violations'), /^[12] \(script-src/);
  assert.deepEqual(dialogs, []);
  await page.close();
});

test("the 'open in attnlens' link is http(s) or relative, never javascript:", async () => {
  const page = await newPage(browser.context);
  const warnings = [];
  page.on('console', (message) => {
    if (message.type() === 'warning') warnings.push(message.text());
  });
  await page.goto(`${browser.base}/widget/blog.html`);
  await renderAll(page, ['widget-local']);
  const link = () =>
    page.evaluate(
      () =>
        document.getElementById('widget-local').shadowRoot.querySelector('.footer a')?.href ?? null,
    );
  // Sets attributes (null removes one) in one go and waits for the render they cause.
  const rendered = async (demo, more = {}) => {
    const renders = Number(await page.getAttribute('#widget-local', 'data-renders'));
    await page.evaluate(
      ({ demo, more }) => {
        const widget = document.getElementById('widget-local');
        for (const [name, value] of Object.entries({ ...more, demo })) {
          if (value === null) widget.removeAttribute(name);
          else widget.setAttribute(name, value);
        }
        widget.setAttribute('heads', String(1 + (Number(widget.getAttribute('heads')) % 2)));
      },
      { demo, more },
    );
    await page.waitForFunction(
      (n) => Number(document.getElementById('widget-local').dataset.renders) > n,
      renders,
    );
    return link();
  };
  assert.match(await link(), new RegExp(`^${browser.base}/demo/\\?text=`), 'relative');
  assert.match(await rendered('https://example.org/attnlens/'), /^https:\/\/example\.org\//);
  for (const hostile of [
    'javascript:alert(document.domain)//',
    'JavaScript:alert(1)',
    ' \u0001java\tscript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
  ]) {
    assert.equal(await rendered(hostile), null, `no link for ${JSON.stringify(hostile)}`);
  }
  assert.ok(
    warnings.some((w) => w.includes('attn-lens: demo="javascript:alert(document.domain)//"')),
    warnings.join('\n'),
  );
  // A long text's settings go in the fragment, which the demo reads.
  const long = await rendered('../demo/', { text: '注意力'.repeat(300), granularity: 'word' });
  assert.ok(new URL(long).search === '' && new URL(long).hash.startsWith('#text='), long);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the widget on a phone-sized viewport', async () => {
  const page = await newPage(browser.context, { viewport: { width: 390, height: 844 } });
  await page.goto(`${browser.base}/widget/blog.html`);
  await renderAll(page, ['widget-local']);
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - window.innerWidth,
  );
  assert.ok(overflow <= 0, `page is ${overflow}px wider than the phone`);
  await page.locator('#widget-local').scrollIntoViewIfNeeded();
  await page.screenshot({ path: artifact('widget-phone.png') });
  assert.deepEqual(page.problems, []);
  await page.close();
});
