/**
 * `--output csv` never hands a spreadsheet a formula (CSV injection, OWASP): text cells starting
 * with =, +, -, @, a tab or a carriage return get a leading '; typed numbers stay numbers.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { csvField, renderCsv } from '../src/output.ts';
import { lines, sandbox, type Sandbox } from './support/cli.ts';

let t: TestServer;
let box: Sandbox;
let admin: string;

test.before(async () => {
  t = await startTestServer({}, 'cli_csv');
  box = await sandbox();
  admin = await t.admin('csv-admin');
  box.env.BENCHMARKS_SERVER = t.url;
});
test.after(async () => {
  await box?.cleanup();
  await t?.close();
});

test('csvField: a text cell that a spreadsheet would run gets a leading quote', () => {
  assert.is(csvField('=HYPERLINK("http://x.example","y")'), `"'=HYPERLINK(""http://x.example"",""y"")"`);
  assert.is(csvField('+1+2'), "'+1+2");
  assert.is(csvField('-2+3'), "'-2+3");
  assert.is(csvField('@SUM(A1:A9)'), "'@SUM(A1:A9)");
  assert.is(csvField('\t=1'), "'\t=1");
  assert.is(csvField('\r=1'), `"'\r=1"`);
  assert.is(csvField('plain, text'), '"plain, text"');
  assert.is(csvField('a=b'), 'a=b', 'only the first character counts');
});

test('csvField: typed numbers are numbers, negative ones too; a negative number in text is guarded', () => {
  assert.is(csvField(-3), '-3');
  assert.is(csvField(-0.5), '-0.5');
  assert.is(csvField(42), '42');
  assert.is(csvField('-3'), "'-3");
  assert.is(
    renderCsv(
      [{ n: -1, s: '-1' }],
      [
        { header: 'n', value: (r) => r.n },
        { header: 's', value: (r) => r.s },
      ],
    ),
    "n,s\r\n-1,'-1\r\n",
  );
});

test('tags list --output csv: names starting with = or @ come out guarded; other cells unchanged', async () => {
  for (const name of ['=1+2', '@SUM(A1)', 'safe-name']) {
    const res = await box.run(['tags', 'create', name, '--description', '+cmd|calc', '-o', 'json'], { env: { BENCHMARKS_TOKEN: admin } });
    assert.is(res.code, 0, res.stderr);
  }
  const res = await box.run(['tags', 'list', '--sort', 'name', '-o', 'csv']);
  assert.is(res.code, 0, res.stderr);
  const rows = lines(res.stdout)
    .slice(1)
    .map((l) => l.split(','));
  assert.equal(
    rows.map((r) => [r[1], r[3]]),
    [
      ["'=1+2", "'+cmd|calc"],
      ["'@SUM(A1)", "'+cmd|calc"],
      ['safe-name', "'+cmd|calc"],
    ],
  );
});

test.run();
