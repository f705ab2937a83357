// "Watch it learn" on the demo page: Step trains one step and shows every head's heatmap of it,
// Train runs until Pause, the loss and entropy plots and the timeline follow the snapshots, the
// timeline replays an earlier one, a new corpus starts over and keeps the last run to compare
// with, and the Chinese page names it all in Chinese, at phone width with the smaller model.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openDemo } from './demo-page.mjs';
import { artifact, openBrowser } from './harness.mjs';

let browser;
before(async () => {
  browser = await openBrowser();
});
after(async () => {
  await browser?.close();
});

const steps = (page) => page.evaluate(() => Number(document.body.dataset.learnSteps));
const tiles = (page) => page.locator('#learn-heads .al-head-tile').count();

// Before training each plot says what will appear in it, and shows no numbers for no data.
async function assertEmptyPlots(page, texts) {
  for (const [plot, text] of Object.entries(texts)) {
    assert.equal(await page.textContent(`${plot} .learn-empty`), text);
    assert.equal(await page.getAttribute(plot, 'aria-label'), text);
    assert.equal(await page.locator(`${plot} .learn-axis text`).count(), 0, `${plot} numbers`);
  }
}

test('Step, Train, Pause, the timeline and a second run to compare', async () => {
  const page = await openDemo(browser);
  assert.equal(await page.textContent('#learn-train'), 'Train');
  assert.equal(await page.isDisabled('#learn-timeline'), true);
  await assertEmptyPlots(page, {
    '#learn-loss': 'No steps yet: the loss appears here once it trains.',
    '#learn-entropy': "No snapshots yet: each head's entropy appears here once it trains.",
  });
  await page.locator('#learn').screenshot({ path: artifact('learn-empty-en.png') });

  await page.click('#learn-step');
  await page.waitForFunction(() => document.body.dataset.learnSteps === '1', null, {
    timeout: 30000,
  });
  assert.equal(await page.locator('#learn .learn-empty').count(), 0, 'the plots are drawn');
  // 2 layers x 4 heads of the desktop model; step 0 and step 1 on the timeline.
  await page.waitForFunction(() => document.querySelectorAll('#learn-heads .al-head-tile').length);
  assert.equal(await tiles(page), 8);
  assert.match(await page.textContent('#learn-status'), /^step 1 · loss \d\.\d{3} · /);
  assert.equal(await page.getAttribute('#learn-timeline', 'max'), '1');

  await page.click('#learn-train');
  await page.waitForFunction(() => Number(document.body.dataset.learnSteps) >= 40, null, {
    timeout: 60000,
  });
  assert.equal(await page.textContent('#learn-train'), 'Pause');
  assert.equal(await page.isDisabled('#learn-step'), true);
  await page.click('#learn-train');
  await page.waitForFunction(
    () => document.querySelector('#learn-train').textContent === 'Continue',
  );
  const paused = await steps(page);
  await page.waitForTimeout(300);
  assert.equal(await steps(page), paused, 'Pause stops the steps');

  // The loss line has a point per step (thinned past 400); entropy has a line per head.
  const lossPoints = await page.getAttribute('#learn-loss polyline', 'points');
  assert.equal(lossPoints.trim().split(' ').length, paused);
  assert.equal(await page.locator('#learn-entropy polyline[data-run="current"]').count(), 8);

  // The timeline replays the first snapshot (step 0), and its marker moves with it.
  await page.focus('#learn-timeline');
  await page.keyboard.press('Home');
  assert.equal(await page.textContent('#learn-timeline-output'), 'step 0');
  await page.keyboard.press('End');
  // The newest snapshot: one every 10 steps of a run.
  const newest = Math.floor(paused / 10) * 10;
  assert.equal(await page.textContent('#learn-timeline-output'), `step ${newest}`);

  // Another corpus is another model: it starts over, and the run before stays, dotted.
  await page.check('input[name="learn-corpus"][value="en"]');
  await page.click('#learn-step');
  await page.waitForFunction(() => document.body.dataset.learnSteps === '1', null, {
    timeout: 30000,
  });
  assert.equal(await page.locator('#learn-entropy polyline[data-run="previous"]').count(), 8);
  assert.equal(await page.isHidden('#learn-previous-note'), false);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('own text: too short is said so; Chinese throughout; phones get 2 x 2 heads', async () => {
  const page = await openDemo(browser, '?lang=zh', { viewport: { width: 390, height: 844 } });
  assert.equal(await page.textContent('#learn-title'), '看它学习');
  await assertEmptyPlots(page, {
    '#learn-loss': '还没有训练步：开始训练后，损失会画在这里。',
    '#learn-entropy': '还没有快照：开始训练后，每个头的熵会画在这里。',
  });
  await page.locator('.learn-plots').screenshot({ path: artifact('learn-empty-zh-phone.png') });
  await page.check('input[name="learn-corpus"][value="own"]');
  await page.fill('#learn-own-text', '好');
  await page.click('#learn-step');
  await page.waitForFunction(() => document.querySelector('#learn-status.is-error'));
  assert.equal(await page.textContent('#learn-status'), '请给它至少两个字符的文本来学习。');

  await page.fill('#learn-own-text', '小猫没有跳上桌子，因为它太累了。');
  await page.click('#learn-step');
  await page.waitForFunction(() => document.body.dataset.learnSteps === '1', null, {
    timeout: 30000,
  });
  assert.equal(await tiles(page), 4);
  assert.match(await page.textContent('#learn-status'), /^第 1 步 · 损失 /);
  assert.match(await page.textContent('#learn-heads'), /第2层 头2/);
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  assert.equal(overflow, 0, 'no sideways scrolling at phone width');
  assert.deepEqual(page.problems, []);
  await page.close();
});
