/**
 * How the CLI fits the terminal it writes to, through real pseudo-terminals (util-linux `script`)
 * and real pipes: tables at the terminal's width (whole with --wide and in a pipe), colour as
 * FORCE_COLOR and NO_COLOR say, progress of `list --all` on a terminal only. The layout and the
 * progress line are also checked alone, over generated tables and a fake clock.
 */
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { duration, eraseProgress, progressLine, progressLineOn } from '../src/progress.ts';
import { fitColumns, renderTable, type Column } from '../src/table.ts';
import { lines, sandbox, type Sandbox } from './support/cli.ts';
import { seedCatalogue, seedResult, type Catalogue } from './support/seed.ts';

let t: TestServer;
let box: Sandbox;
let c: Catalogue;

const ESC = '\u001b[';
const LONG = 'a description long enough to overflow any sensible column of an eighty-column terminal, and then some more';

test.before(async () => {
  t = await startTestServer({}, 'cli_terminal');
  box = await sandbox();
  c = await seedCatalogue(t, 'term');
  box.env.BENCHMARKS_SERVER = t.url;
  // A few long cells, and more results than one page.
  await t.request('PUT', `/benchmarks/${c.benchmark.id}`, {
    token: c.admin,
    body: {
      container_image: 'ghcr.io/term/bench',
      container_tag: '1.0',
      json_schema: {},
      description: LONG,
      url: `https://example.org/${'x'.repeat(80)}`,
    },
  });
  for (let i = 0; i < 130; i++) await seedResult(t, c.admin, c, { score: i, note: LONG });
});
test.after(async () => {
  await box?.cleanup();
  await t?.close();
});

/** The widest line of the table in `text` (its header and rows), escape codes left out. */
const widest = (text: string) =>
  Math.max(
    ...text
      .split('\n')
      .map((l) => l.replaceAll(`${ESC}1m`, '').replaceAll(`${ESC}0m`, ''))
      .filter((l) => /^(ID|[0-9a-f]{8}-)/.test(l))
      .map((l) => [...l].length),
  );

test('a table on an 80-column terminal fits it: ids whole, long cells cut with …, the columns left out named on stderr', async () => {
  const res = await box.runInTerminal(['results', 'list', '--per-page', '5'], { columns: 80, env: { NO_COLOR: '1' } });
  assert.is(res.code, 0, res.output);
  const table = res.output.split('\n').filter((l) => /^(ID|[0-9a-f]{8}-)/.test(l));
  assert.is(table.length, 6, res.output);
  for (const line of table) assert.ok([...line].length <= 80, `${[...line].length} columns: ${line}`);
  assert.match(table[1]!, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12} /, 'the id is whole');
  assert.match(res.output, /…/);
  assert.match(res.output, /Not shown, to fit the terminal: .*UPLOAD_DATETIME.* \(--wide shows every column\)\./);

  const narrow = await box.runInTerminal(['benchmarks', 'list'], { columns: 80, env: { NO_COLOR: '1' } });
  assert.ok(widest(narrow.output) <= 80, narrow.output);
});

test('COLUMNS stands in when the terminal does not say its width', async () => {
  const res = await box.runInTerminal(['benchmarks', 'list'], { env: { NO_COLOR: '1', COLUMNS: '70' } });
  assert.is(res.code, 0, res.output);
  assert.ok(widest(res.output) <= 70, res.output);
});

test('--wide (or BENCHMARKS_WIDE=1) on a terminal: every cell whole, every column shown', async () => {
  const [flag, env] = await Promise.all([
    box.runInTerminal(['benchmarks', 'list', '--wide'], { columns: 80, env: { NO_COLOR: '1' } }),
    box.runInTerminal(['benchmarks', 'list'], { columns: 80, env: { NO_COLOR: '1', BENCHMARKS_WIDE: '1' } }),
  ]);
  for (const res of [flag, env]) {
    assert.is(res.code, 0, res.output);
    assert.ok(res.output.includes(LONG), res.output);
    assert.match(res.output, /UPLOAD_DATETIME/);
    assert.not.match(res.output, /…|Not shown/);
  }
});

test('a table in a pipe (-o table) is never cut, whatever COLUMNS says', async () => {
  const res = await box.run(['benchmarks', 'list', '-o', 'table'], { env: { COLUMNS: '40' } });
  assert.is(res.code, 0, res.stderr);
  assert.ok(res.stdout.includes(LONG));
  assert.ok(res.stdout.includes(`https://example.org/${'x'.repeat(80)}`));
  assert.not.match(res.stdout, /…/);
  assert.is(res.stderr, '');
});

test('colour: on a terminal; not with NO_COLOR or FORCE_COLOR=0; FORCE_COLOR=1 colours a pipe and wins over NO_COLOR', async () => {
  const [tty, noColor, forceOff, piped, forced, both] = await Promise.all([
    box.runInTerminal(['tags', 'list'], { columns: 100 }),
    box.runInTerminal(['tags', 'list'], { columns: 100, env: { NO_COLOR: '1' } }),
    box.runInTerminal(['tags', 'list'], { columns: 100, env: { FORCE_COLOR: '0' } }),
    box.run(['tags', 'list', '-o', 'table'], { env: { NO_COLOR: undefined } }),
    box.run(['tags', 'list', '-o', 'table'], { env: { NO_COLOR: undefined, FORCE_COLOR: '1' } }),
    box.run(['tags', 'list', '-o', 'table'], { env: { NO_COLOR: '1', FORCE_COLOR: '3' } }),
  ]);
  assert.ok(tty.output.includes(`${ESC}1mID`), tty.output);
  assert.not.ok(noColor.output.includes(ESC), noColor.output);
  assert.not.ok(forceOff.output.includes(ESC), forceOff.output);
  assert.not.ok(piped.stdout.includes(ESC), piped.stdout);
  assert.ok(forced.stdout.startsWith(`${ESC}1mID`), forced.stdout);
  assert.ok(both.stdout.startsWith(`${ESC}1mID`), both.stdout);

  const [plainError, redError, jsonForced] = await Promise.all([
    box.run(['whoami'], { env: { NO_COLOR: undefined } }),
    box.run(['whoami'], { env: { FORCE_COLOR: '1' } }),
    box.run(['tags', 'list'], { env: { FORCE_COLOR: '1' } }),
  ]);
  assert.match(plainError.stderr, /^Error: Not logged in/);
  assert.ok(redError.stderr.startsWith(`${ESC}31mError:${ESC}0m Not logged in`), redError.stderr);
  assert.not.ok(jsonForced.stdout.includes(ESC), 'JSON is data: never coloured');
  JSON.parse(jsonForced.stdout);
});

test('list --all: a progress line on a terminal (of the total), erased before the table; none in a pipe', async () => {
  const tty = await box.runInTerminal(['results', 'list', '--all', '--per-page', '50', '-o', 'csv'], {
    columns: 100,
    env: { NO_COLOR: '1' },
  });
  assert.is(tty.code, 0, tty.output);
  assert.match(tty.output, /\r\[[#-]{20}\] \d+% {2}\d+ of 130 items/);
  assert.match(tty.output, /\r {10,}\rid,benchmark,site,/, 'erased, then the data');
  const piped = await box.run(['results', 'list', '--all', '--per-page', '50']);
  assert.is(piped.code, 0, piped.stderr);
  assert.is(JSON.parse(piped.stdout).length, 130);
  assert.is(piped.stderr, '');
});

// ---------------------------------------------------------------------------------------------
// The layout and the progress line alone

test('fitColumns: any table fits any width its ids and floors allow, never below a floor, droppable columns first', () => {
  const column = fc.record({
    natural: fc.integer({ min: 1, max: 120 }),
    floorCut: fc.integer({ min: 0, max: 30 }),
    drop: fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }),
  });
  fc.assert(
    fc.property(fc.array(column, { minLength: 1, maxLength: 10 }), fc.integer({ min: 20, max: 300 }), (specs, width) => {
      const columns = specs.map((s) => ({ natural: s.natural, floor: Math.max(1, s.natural - s.floorCut), drop: s.drop }));
      const { kept, widths } = fitColumns(columns, width);
      const total = widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1);
      const floors = kept.map((i) => columns[i]!.floor);
      const kept0 = columns.map((_, i) => i).filter((i) => columns[i]!.drop === undefined);
      // Columns without a drop always stay; widths stay between floor and natural.
      for (const i of kept0) assert.ok(kept.includes(i));
      for (const [k, i] of kept.entries()) assert.ok(widths[k]! >= columns[i]!.floor && widths[k]! <= columns[i]!.natural);
      // It fits whenever the kept columns' floors do.
      if (floors.reduce((a, b) => a + b, 0) + 2 * (floors.length - 1) <= width) assert.ok(total <= width, `${total} > ${width}`);
    }),
  );
});

test('renderTable: on a terminal every line fits when it can; ids whole; with wide or without a width nothing is cut', () => {
  type Row = { id: string; name: string; note: string };
  const columns: Column<Row>[] = [
    { header: 'id', value: (r) => r.id, whole: true },
    { header: 'name', value: (r) => r.name },
    { header: 'note', value: (r) => r.note, drop: 1 },
  ];
  fc.assert(
    fc.property(
      fc.array(fc.record({ id: fc.uuid(), name: fc.string({ maxLength: 80 }), note: fc.string({ maxLength: 200 }) }), {
        minLength: 1,
        maxLength: 8,
      }),
      fc.integer({ min: 60, max: 200 }),
      (rows, width) => {
        const clean = rows.map((r) => ({ ...r, name: r.name.replace(/\s/g, '_'), note: r.note.replace(/\s/g, '_') }));
        const fitted = renderTable(clean, columns, { width });
        for (const line of fitted.trimEnd().split('\n')) assert.ok([...line].length <= width, `${[...line].length} > ${width}: ${line}`);
        for (const r of clean) assert.ok(fitted.includes(r.id));
        for (const whole of [renderTable(clean, columns, { width, wide: true }), renderTable(clean, columns)]) {
          for (const r of clean) assert.ok(whole.includes(r.note) && whole.includes(r.name));
        }
      },
    ),
  );
});

test('progressLine: rate over the recent past, the time left from the total or from the share read, none at first', () => {
  const options = { unit: 'results', total: 10_000 };
  assert.is(progressLine({ done: 100 }, [], 0, options), '[--------------------] 1%  100 of 10,000 results');
  const past = [{ at: 0, done: 0 }];
  assert.is(
    progressLine({ done: 2_000, failed: 3 }, past, 2_000, options, 120),
    '[####----------------] 20%  2,000 of 10,000 results, 3 failed  1,000 results/s  ETA 8s',
  );
  assert.is(
    progressLine({ done: 500, fraction: 0.25 }, [{ at: 0, done: 0, fraction: 0 }], 30_000, { unit: 'results' }),
    '[#####---------------] 25%  500 results  17 results/s  ETA 1m30s',
  );
  assert.is(
    progressLine({ done: 500 }, [{ at: 0, done: 0 }], 5_000, { unit: 'items' }),
    '500 items  100 items/s',
    'no total: no bar, no ETA',
  );
  const narrow = progressLine({ done: 2_000 }, past, 2_000, options, 50);
  assert.ok(narrow.length <= 49 && narrow.startsWith('20%  2,000 of 10,000 results'), narrow);
  assert.equal([duration(59.4), duration(61), duration(3_725)], ['59s', '1m01s', '1h02m']);
});

test('progressLineOn: drawn at once, then at most every 100 ms; cleared with spaces; the total may come later', () => {
  let now = 0;
  let written = '';
  const progress = progressLineOn({ write: (s: string) => (written += s) }, { unit: 'rows', now: () => now }, 80);
  progress.update({ done: 1 });
  now = 50;
  progress.update({ done: 2 });
  assert.is(written, '\r1 rows');
  now = 150;
  progress.setTotal(4);
  progress.update({ done: 3 });
  assert.is(lines(written.replace(/\r/g, '\n')).at(-1), '[###############-----] 75%  3 of 4 rows');
  progress.clear();
  assert.ok(written.endsWith(`\r${' '.repeat('[###############-----] 75%  3 of 4 rows'.length)}\r`));

  // A line still on screen when stdout is closed (`| head`) is erased before the process exits.
  now = 500;
  progress.update({ done: 4 });
  eraseProgress();
  assert.ok(written.endsWith(`\r${' '.repeat('[####################] 100%  4 of 4 rows'.length)}\r`), JSON.stringify(written));
  const length = written.length;
  eraseProgress();
  assert.is(written.length, length, 'erased once');
});

test.run();
