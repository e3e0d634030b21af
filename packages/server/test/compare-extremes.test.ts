/**
 * GET /results:compare with extreme but valid values: 1e155 (its square overflows a double, so
 * PostgreSQL's float8 `avg` and `stddev_samp` failed and one uploaded result made every comparison
 * including it answer 422), ±1.7e308, the largest double, subnormals, and numbers one float step
 * apart. The answers are 200 in JSON, CSV and SVG, remembered or not; every statistic is finite,
 * or null and named in `out_of_range`; the mean and the spread equal the exact ones, computed here
 * with integers from the values' decimal text.
 */
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, upload, type Seeder } from './support/seed.ts';
import { compareResults, type CompareGroupAnswer } from '../src/services/compare/compare.ts';
import { interpolate, PERCENTILES, percentilePosition } from '../src/services/compare/compare-stats.ts';

let t: TestServer;
let seed: Seeder;
let benchmarkId: string;
const flavors: Record<string, { id: string; site_id: string }> = {};

const MAX = Number.MAX_VALUE;
/** The values of each flavor; `huge` also gets 1e155 uploaded through the API, and 1e-400 stored directly (read as 0). */
const VALUES: Record<string, number[]> = {
  huge: [1, 2, 3, 4, 5, 6],
  // Spread beyond the largest double: no stddev, no mean interval; the median is 0, not Infinity.
  limits: [1.7e308, -1.7e308],
  // A median near the limit over a price of 0.5: no value for money; a mean interval beyond the limit.
  top: [1.7e308, 1.7e308, 1.7e308, 1e308, 5e-324],
  mixed: [1e155, -1e155, 1.7e308, -1.7e308, 5e-324, 42, -7.5, 0],
  tiny: [5e-324, 5e-324, 1e-323, 0, 1.5e-323, 5e-324],
  normal: [10, 11, 12, 13, 14, 15],
  // Two numbers one float step apart (16 at 1e17): the chart's ticks used to loop for ever.
  steps: [1e17, 1e17 + 16, 1e17, 1e17 + 16, 1e17],
  // Ticks with more than 100 decimals: the chart's labels used to throw (500).
  small: [1e-200, 2e-200, 3e-200],
};
const PRICES: Record<string, number> = { top: 0.5, limits: 1e9, normal: 2, huge: 1e-100 };

test.before(async () => {
  t = await startTestServer({}, 'compare_extremes');
  seed = await createSeeder(t);
  benchmarkId = (await seed.benchmark({ schema: { type: 'object', properties: { score: { type: 'number' } } } })).id;
  const site = await seed.site({ name: 'Extremes' });
  for (const key of Object.keys(VALUES)) {
    const f = await seed.flavor(site.id, { name: key });
    flavors[key] = { id: f.id, site_id: f.site_id };
    if (PRICES[key] !== undefined) {
      await seed.sql('update flavor set price_per_hour = ?, currency = ? where id = ?', [PRICES[key], 'EUR', f.id]);
    }
  }
  const at = new Date(Date.UTC(2024, 0, 1));
  const rows = (key: string, values: unknown[]) =>
    values.map((score) => ({ benchmark_id: benchmarkId, ...flavor(key), json: { score }, execution_datetime: at }));
  const flavor = (key: string) => ({ flavor_id: flavors[key]!.id, site_id: flavors[key]!.site_id });
  await seed.results(Object.entries(VALUES).flatMap(([key, values]) => rows(key, values)));
  // The attack: one registered user uploads a valid JSON number whose square overflows a double.
  const token = await t.user('uploader-of-1e155');
  const uploaded = await upload(t, token, { benchmark_id: benchmarkId, flavor_id: flavors.huge!.id }, { score: 1e155 });
  assert.is(uploaded.status, 201, uploaded.text);
  // Only possible in documents stored outside the API: beyond the largest double (excluded, as the
  // API shows it: null), below half the smallest subnormal (0, as the API shows it); and a string.
  const [beyond, underflow] = await seed.results(rows('huge', [0, 0, 'fast']));
  await seed.sql(`update result set json = '{"score": -1e400}'::jsonb where id = ?`, [beyond]);
  await seed.sql(`update result set json = '{"score": 1e-400}'::jsonb where id = ?`, [underflow]);
});
test.after(async () => {
  await t.close();
});

const compare = (query: Record<string, string | number | undefined> = {}, headers?: Record<string, string>) =>
  t.request('GET', '/results:compare', { query: { benchmark_id: benchmarkId, metric: 'json.score', ...query }, headers });

/** A double's decimal text (as JSON holds it) as an exact fraction digits · 10^exponent. */
function decimal(value: number): { digits: bigint; exponent: number } {
  const [mantissa, e = '0'] = JSON.stringify(value).split('e');
  const [whole, fractional = ''] = mantissa!.split('.');
  return { digits: BigInt(whole! + fractional), exponent: Number(e) - fractional.length };
}

/** num / den as the nearest double (JavaScript parses decimal text exactly rounded). */
function toNumber(num: bigint, den: bigint): number {
  if (num === 0n) return 0;
  const sign = num < 0n !== den < 0n ? '-' : '';
  const [n, d] = [num < 0n ? -num : num, den < 0n ? -den : den];
  const shift = 40 - (n.toString().length - d.toString().length); // about 40 significant digits
  const q = shift >= 0 ? (n * 10n ** BigInt(shift)) / d : n / (d * 10n ** BigInt(-shift));
  return Number(`${sign}${q}e${-shift}`);
}

function isqrt(v: bigint): bigint {
  if (v < 2n) return v;
  let x = BigInt(`1${'0'.repeat(Math.ceil(v.toString().length / 2))}`);
  for (;;) {
    const next = (x + v / x) / 2n;
    if (next >= x) return x;
    x = next;
  }
}

/** The exact mean and sample standard deviation of the values' decimal texts (Infinity beyond the largest double). */
function exact(values: number[]): { mean: number; stddev: number | null } {
  const parts = values.map(decimal);
  const low = Math.min(0, ...parts.map((p) => p.exponent));
  const scaled = parts.map((p) => p.digits * 10n ** BigInt(p.exponent - low)); // values · 10^−low, integers
  const n = BigInt(values.length);
  const sum = scaled.reduce((a, b) => a + b, 0n);
  const scale = 10n ** BigInt(-low);
  const mean = toNumber(sum, n * scale);
  if (n < 2n) return { mean, stddev: null };
  // variance = (nΣx² − (Σx)²) / (n(n − 1)) = numerator / denominator; its square root is
  // √(numerator · denominator) / denominator, the root taken of an integer 10^80 times larger.
  const numerator = n * scaled.reduce((a, b) => a + b * b, 0n) - sum * sum;
  const denominator = n * (n - 1n) * scale * scale;
  const digits = 10n ** 40n;
  return { mean, stddev: toNumber(isqrt(numerator * denominator * digits * digits), denominator * digits) };
}

const closeTo = (actual: number, wanted: number, label: string) =>
  assert.ok(Math.abs(actual - wanted) <= 1e-14 * Math.abs(wanted) + 1e-323, `${label}: ${actual} ≠ ${wanted}`);

/** Every number in `value` is finite (JSON would carry Infinity or NaN as null). */
function assertFinite(value: unknown, label: string): void {
  if (typeof value === 'number') assert.ok(Number.isFinite(value), `${label}: ${value}`);
  else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) assertFinite(v, `${label}.${k}`);
}

/** The group statistics as COMPARE.md defines them, from the sorted values, and the exact mean and spread. */
function checkGroup(group: CompareGroupAnswer, values: number[], label: string): void {
  const x = [...values].sort((a, b) => a - b);
  const n = x.length;
  assert.is(group.n, n, `${label}.n`);
  assertFinite(group, label);
  assert.equal([group.min, group.max], [x[0], x[n - 1]], `${label} min, max`);
  const percentiles = PERCENTILES.map((f) => {
    const { below, above, between } = percentilePosition(f, n);
    return interpolate(x[below]!, x[above]!, between);
  });
  assert.equal([group.p5, group.p25, group.median, group.p75, group.p95], percentiles, `${label} percentiles`);
  const want = exact(values);
  closeTo(group.mean, want.mean, `${label}.mean`);
  if (want.stddev === null) assert.is(group.stddev, null);
  else if (want.stddev > MAX) {
    assert.is(group.stddev, null, `${label}: a stddev beyond the largest double is null`);
    assert.ok(group.out_of_range.includes('stddev'), `${label}: named out of range`);
  } else closeTo(group.stddev!, want.stddev, `${label}.stddev`);
}

const group = (body: { groups: CompareGroupAnswer[] }, key: string) => body.groups.find((g) => g.flavor?.name === key)!;

test('GET /results:compare: 1e155, ±1.7e308, subnormals among ordinary values answer 200 with finite or named-null statistics', async () => {
  const res = await compare();
  assert.is(res.status, 200, res.text);
  const body = res.body;
  // Every stored result matches; -1e400 and 'fast' are without a double (excluded); 1e-400 is 0.
  const values = { ...VALUES, huge: [...VALUES.huge!, 1e155, 0] };
  const numbers = Object.values(values).reduce((sum, v) => sum + v.length, 0);
  assert.equal({ matched: body.matched, excluded: body.excluded }, { matched: numbers + 2, excluded: 2 });
  assert.is(body.groups.length, Object.keys(VALUES).length);
  for (const [key, v] of Object.entries(values)) checkGroup(group(body, key), v, key);

  const huge = group(body, 'huge');
  assert.equal(
    { median: huge.median, median_ci: huge.median_ci, per_price: huge.per_price, out_of_range: huge.out_of_range },
    { median: 3.5, median_ci: [0, 1e155], per_price: { median: 3.5e100, median_ci: [0, 1e255] }, out_of_range: [] },
  );
  assert.ok(huge.stddev! > 3e154 && huge.mean_ci![1] > 1e154, JSON.stringify(huge));
  const limits = group(body, 'limits');
  assert.equal(
    { median: limits.median, stddev: limits.stddev, mean_ci: limits.mean_ci, out_of_range: limits.out_of_range },
    { median: 0, stddev: null, mean_ci: null, out_of_range: ['stddev', 'mean_ci'] },
  );
  assert.equal(limits.per_price, { median: 0, median_ci: [-1.7e308 / 1e9, 1.7e308 / 1e9] });
  const top = group(body, 'top');
  assert.equal(
    { price: top.price, per_price: top.per_price, mean_ci: top.mean_ci, out_of_range: top.out_of_range },
    { price: { per_hour: 0.5, currency: 'EUR' }, per_price: null, mean_ci: null, out_of_range: ['mean_ci', 'per_price'] },
  );
  assert.ok(top.stddev! > 7e307, String(top.stddev));
  const tiny = group(body, 'tiny');
  assert.ok(tiny.mean > 0 && tiny.stddev! > 0 && tiny.stddev! < 1e-322, JSON.stringify(tiny));
  // Exactly as before for ordinary values.
  const normal = group(body, 'normal');
  assert.equal(
    {
      mean: normal.mean,
      median: normal.median,
      median_ci: normal.median_ci,
      per_price: normal.per_price,
      out_of_range: normal.out_of_range,
    },
    { mean: 12.5, median: 12.5, median_ci: [10, 15], per_price: { median: 6.25, median_ci: [5, 7.5] }, out_of_range: [] },
  );
  assert.ok(Math.abs(normal.stddev! - Math.sqrt(3.5)) < 1e-15, String(normal.stddev));
});

test('GET /results:compare: ranks among extreme intervals follow the definition; by price, out of range is unranked', async () => {
  for (const better of ['higher', 'lower'] as const) {
    const { groups } = (await compare({ min_samples: 1, better })).body as { groups: CompareGroupAnswer[] };
    for (const g of groups) {
      const [lo, hi] = g.median_ci;
      const beyond = groups.filter((o) => (better === 'higher' ? o.median_ci[0] > hi : o.median_ci[1] < lo));
      assert.is(g.rank, 1 + beyond.length, `${g.flavor?.name} (${better})`);
    }
    const ranks = groups.map((g) => g.rank!);
    assert.equal(
      ranks,
      [...ranks].sort((a, b) => a - b),
      'in rank order',
    );
  }
  const byPrice = (await compare({ min_samples: 1, rank_by: 'price', currency: 'EUR' })).body;
  assert.is(group(byPrice, 'top').rank, null); // no value for money beyond the largest double
  assert.ok(group(byPrice, 'normal').rank !== null && group(byPrice, 'limits').rank !== null);
  // Lower is better: the median times the price; [±1.7e308] · 1e9 is beyond the largest double.
  const cost = (await compare({ better: 'lower' })).body;
  assert.equal(group(cost, 'limits').out_of_range, ['stddev', 'mean_ci', 'per_price']);
  assert.is(group(cost, 'limits').per_price, null);
  assert.equal(group(cost, 'top').per_price, { median: 0.85e308, median_ci: [0, 0.85e308] }); // 5e-324 · 0.5 rounds to 0
});

test('GET /results:compare: format=csv with extreme values: 200, finite numbers, out_of_range per row', async () => {
  const res = await compare({ format: 'csv' });
  assert.is(res.status, 200, res.text);
  const [header, ...rows] = res.text.trimEnd().split('\r\n');
  const columns = header!.split(',');
  assert.is(columns.at(-1), 'out_of_range');
  assert.is(rows.length, Object.keys(VALUES).length);
  assert.not.match(res.text, /Infinity|NaN/);
  const cells = (name: string) => rows.map((r) => r.split(',')).find((c) => c[1] === name)!;
  const limits = cells('limits');
  assert.equal([limits[columns.indexOf('stddev')], limits[columns.indexOf('median')], limits.at(-1)], ['', '0', 'stddev;mean_ci']);
  assert.is(cells('normal').at(-1), '');
  const text = ['site_name', 'flavor_name', 'currency', 'out_of_range'];
  for (const row of rows) {
    row.split(',').forEach((cell, i) => {
      if (!text.includes(columns[i]!)) assert.ok(cell === '' || Number.isFinite(Number(cell)), `${columns[i]} ${cell} in ${row}`);
    });
  }
});

/** The numbers of every coordinate attribute of an SVG document. */
const coordinates = (svg: string) => [...svg.matchAll(/\s(?:x|y|x1|y1|x2|y2|width|height)="([^"]*)"/g)].map((m) => m[1]!);

test('GET /results:compare: format=svg with extreme values: 200, every coordinate a finite number on the canvas', async () => {
  for (const query of [{}, { flavor_id: flavors.limits!.id }, { flavor_id: flavors.tiny!.id }, { flavor_id: flavors.top!.id }]) {
    const res = await compare({ ...query, format: 'svg' });
    assert.is(res.status, 200, res.text);
    assert.not.match(res.text, /NaN|Infinity/);
    const width = Number(/width="(\d+)"/.exec(res.text)![1]);
    for (const value of coordinates(res.text)) {
      const v = Number(value);
      assert.ok(Number.isFinite(v) && v >= -10 && v <= width + 10, `coordinate ${value} in ${JSON.stringify(query)}`);
    }
  }
});

test('GET /results:compare: format=svg of numbers one float step apart finishes; ticks of 1e-200 are labelled', async () => {
  // Before: the ticks' loop added a step too small to change the value, for ever (the event loop stuck).
  const steps = await compare({ flavor_id: flavors.steps!.id, format: 'svg' });
  assert.is(steps.status, 200, steps.text);
  assert.match(steps.text, />1e\+17</);
  // Before: toFixed(201) threw, a 500.
  const small = await compare({ flavor_id: flavors.small!.id, format: 'svg' });
  assert.is(small.status, 200, small.text);
  assert.match(small.text, />2e-200</);
});

test('GET /results:compare: a remembered comparison with extreme values answers JSON, CSV and SVG alike', async () => {
  // Only comparisons of 1,000 results or more are remembered: a benchmark with 1,000 ordinary values and the extremes.
  // Inserted without notifications (as compare-cache.test.ts does), so none arrives late to make the server forget.
  const other = (await seed.benchmark()).id;
  const f = flavors.mixed!;
  const documents = [...Array.from({ length: 1000 }, (_, i) => i + 1), ...VALUES.mixed!].map((score) => JSON.stringify({ score }));
  await t.server.context.orm.em.fork().transactional(async (em) => {
    await em.execute('set local session_replication_role = replica');
    await em.execute(
      `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
       select gen_random_uuid(), ?, ?, ?, d::jsonb, now(), now(), ?, ?, false, false from unnest(?::text[]) d`,
      [other, f.site_id, f.id, seed.owner.uploader_iss, seed.owner.uploader_sub, documents],
    );
  });
  t.server.context.compare.cache.invalidate();
  const first = await compare({ benchmark_id: other });
  assert.is(first.status, 200, first.text);
  assert.is(t.server.context.compare.cache.size, 1, 'remembered');
  const values = [...Array.from({ length: 1000 }, (_, i) => i + 1), ...VALUES.mixed!];
  checkGroup(first.body.groups[0], values, 'remembered');
  assert.equal((await compare({ benchmark_id: other })).body, first.body);
  const csv = await compare({ benchmark_id: other, format: 'csv' });
  const svg = await compare({ benchmark_id: other, format: 'svg' });
  assert.equal([csv.status, svg.status], [200, 200]);
  assert.not.match(csv.text + svg.text, /NaN|Infinity/);
  assert.is(t.server.context.compare.cache.size, 1, 'one computation for the three formats');
});

test('GET /results:export carries the extreme values intact', async () => {
  const res = await t.request('GET', '/results:export', {
    query: { benchmark_id: benchmarkId, flavor_id: flavors.mixed!.id, format: 'csv', columns: ['json.score'] },
  });
  assert.is(res.status, 200, res.text);
  const exported = res.text.trimEnd().split('\r\n').slice(1).map(Number);
  assert.equal(
    exported.sort((a, b) => a - b),
    [...VALUES.mixed!].sort((a, b) => a - b),
  );
});

test('compare: a spread just above the largest double that rounds to it is that double, not out of range', async () => {
  const site = await seed.site();
  const f = await seed.flavor(site.id);
  const benchmark = (await seed.benchmark()).id;
  const values = [MAX, 1e155, -MAX]; // the exact spread is MAX · (1 + 1e-307): its nearest double is MAX
  await seed.results(
    values.map((score) => ({
      benchmark_id: benchmark,
      flavor_id: f.id,
      site_id: f.site_id,
      json: { score },
      execution_datetime: new Date(),
    })),
  );
  const { answer } = await compareResults(t.server.context.orm.em.fork(), { benchmark_id: benchmark, metric: 'json.score' });
  checkGroup(answer.groups[0]!, values, JSON.stringify(values));
  assert.is(answer.groups[0]!.stddev, MAX);
  assert.not.ok(answer.groups[0]!.out_of_range.includes('stddev'));
});

test('property: compare of any finite doubles answers finite or named-null statistics, the exact mean and spread', async () => {
  const site = await seed.site();
  const f = await seed.flavor(site.id);
  const extremes = [1e155, -1e155, 1.7e308, -1.7e308, MAX, -MAX, 5e-324, -5e-324, 0, 1, 1e-200];
  const double = fc.oneof(fc.constantFrom(...extremes), fc.double({ noNaN: true, noDefaultInfinity: true }));
  await fc.assert(
    fc.asyncProperty(fc.array(double, { minLength: 1, maxLength: 12 }), async (values) => {
      const benchmark = (await seed.benchmark()).id;
      await seed.results(
        values.map((score) => ({
          benchmark_id: benchmark,
          flavor_id: f.id,
          site_id: f.site_id,
          json: { score },
          execution_datetime: new Date(),
        })),
      );
      const { answer } = await compareResults(t.server.context.orm.em.fork(), { benchmark_id: benchmark, metric: 'json.score' });
      assert.equal({ matched: answer.matched, excluded: answer.excluded }, { matched: values.length, excluded: 0 });
      checkGroup(answer.groups[0]!, values, JSON.stringify(values));
      const g = answer.groups[0]!;
      assert.is(g.out_of_range.includes('mean_ci'), g.n > 1 && g.mean_ci === null);
    }),
    { numRuns: 25 },
  );
});

test.run();
