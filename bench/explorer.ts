/**
 * `npm run bench:explorer`: the explorer's budgets (docs/performance.md, "Explorer"), in headless Chromium against `npm
 * start`'s demo in a data directory of its own; prints the figures as Markdown.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createClient } from '@benchmarks/sdk';
import { chromium } from 'playwright-core';
import { logger, median } from './measure.ts';
import { ROOT } from './server.ts';

/** Debian's Chromium, headless, kept off the network (as the explorer's tests run it). */
const CHROMIUM_FLAGS =
  '--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --disable-sync'.split(' ');
const POINTS = 100_000;
const log = logger('explorer');

const dataDir = mkdtempSync(join(tmpdir(), 'bench-explorer-'));
const demoArgs = ['bin/benchmarks-server.js', 'start', '--demo', '--port', '0', '--data-dir', dataDir];
const child = spawn(process.execPath, demoArgs, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
const { url, admin } = await new Promise<{ url: string; admin: string }>((resolve, reject) => {
  let out = '';
  child.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
  child.stdout!.on('data', (chunk) => {
    out += chunk;
    const at = /\(demo\) at (http:\/\/\S+?)\/ /.exec(out)?.[1];
    const token = /Demo admin token[^\n]*\n(\S+)/.exec(out)?.[1];
    if (at && token && out.includes('Press Ctrl-C')) resolve({ url: at, admin: token });
  });
});
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
try {
  let gzipped = 0;
  for (const file of ['explorer.js', 'explorer.css'])
    gzipped += gzipSync(Buffer.from(await (await fetch(`${url}/explore/assets/${file}`)).arrayBuffer()), { level: 9 }).length;
  const client = createClient({ baseUrl: url, token: admin });
  const [demo] = (await client.benchmarks.list()).items;
  const metric = 'json.result.score';
  const q = `benchmark_id=${demo!.id}&metric=${metric}`;
  const views = [
    ['benchmarks', '/explore', '.card'],
    ['rank', `/explore/rank?${q}`, '#rank-table'],
    ['series', `/explore/series?${q}`, 'section.group canvas'],
    ['results', `/explore/results?benchmark_id=${demo!.id}`, '#results-table'],
  ] as const;
  const usable: Record<string, number> = {};
  for (const [name, path, ready] of views) {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${url}${path}`);
      await page.locator(ready).first().waitFor();
      times.push(await page.evaluate(() => performance.now()));
      await context.close();
    }
    usable[name] = median(times);
    log(`${name}: usable after ${usable[name]!.toFixed(0)} ms`);
  }

  log(`uploading ${POINTS} points`);
  const bench = await client.benchmarks.create({
    container_image: 'ghcr.io/bench/explorer-series',
    container_tag: '1.0',
    json_schema: { type: 'object', properties: { score: { type: 'number' } } },
  });
  const site = await client.sites.create({ name: 'Bench site', address: 'Loopback' });
  const flavor = await client.flavors.create(site.id, { name: 'bench.flavor' });
  const start = Date.UTC(2020, 0, 1);
  const items = Array.from({ length: POINTS }, (_, i) => ({
    benchmark_id: bench.id,
    flavor_id: flavor.id,
    execution_datetime: new Date(start + i * 60_000).toISOString(),
    json: { score: 100 + (i % 17) + (i > POINTS / 2 ? 20 : 0) },
  }));
  await client.results.upload(items, { batchSize: 500 });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  // Scripts as text: tsx would wrap named functions in a helper the page does not have.
  await page.addInitScript(
    'window.frames_ = []; let last = performance.now(); const tick = (now) => { window.frames_.push(now - last); last = now; requestAnimationFrame(tick); }; requestAnimationFrame(tick); ' +
      'window.longest = 0; new PerformanceObserver((list) => { for (const e of list.getEntries()) window.longest = Math.max(window.longest, e.duration); }).observe({ type: "longtask", buffered: true });',
  );
  await page.goto(`${url}/explore/series?benchmark_id=${bench.id}&metric=json.score`);
  await page.locator('section.group canvas').first().waitFor({ timeout: 120_000 });
  const drawn = await page.evaluate(() => performance.now());
  const loadTask = (await page.evaluate('window.longest')) as number;
  // Every frame's length from the navigation to the drawn chart, then while the pointer sweeps it.
  const drawing = (await page.evaluate('window.frames_.splice(0).slice(1)')) as number[];
  const box = (await page.locator('.chart .u-over').first().boundingBox())!;
  for (let i = 0; i <= 100; i++) await page.mouse.move(box.x + (box.width * i) / 100, box.y + box.height / 2);
  const frames = (await page.evaluate('window.frames_.slice(1)')) as number[];
  const pointing = await page.locator('.pointer').first().textContent();
  await context.close();
  const [worst, worstDrawing] = [Math.max(...frames), Math.max(...drawing)];
  const task = loadTask > 0 ? `${loadTask.toFixed(0)} ms` : 'none over 50 ms';
  const worstFrames = `worst frames ${worstDrawing.toFixed(0)} / ${worst.toFixed(0)} ms`;
  log(`series of ${POINTS}: drawn after ${drawn.toFixed(0)} ms, longest task ${task}, ${worstFrames}`);
  if (!pointing?.includes('result')) throw new Error('pointing showed no result');
  const figures = [
    '| measure | figure | budget |',
    '|---|---|---|',
    `| JavaScript and CSS, gzipped | ${(gzipped / 1024).toFixed(1)} KB | 120 KB |`,
    ...Object.entries(usable).map(
      ([name, ms]) => `| ${name} view usable after navigation (median of 5) | ${ms.toFixed(0)} ms | 1,000 ms |`,
    ),
    `| series of ${POINTS.toLocaleString('en')} points: drawn after navigation | ${drawn.toFixed(0)} ms | |`,
    `| … longest task while loading and drawing | ${task} | |`,
    `| … worst frame while loading and drawing (${drawing.length} frames) | ${worstDrawing.toFixed(0)} ms | 100 ms |`,
    `| … worst frame while pointing (${frames.length} frames) | ${worst.toFixed(0)} ms | 100 ms |`,
  ];
  console.log(figures.join('\n'));
} finally {
  await browser.close();
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
