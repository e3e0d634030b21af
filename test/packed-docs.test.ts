/**
 * The READMEs as packed (scripts/release/packed-docs.ts): every relative link of each package's
 * packed README and of the guides copied beside it leads to a file of its tarball; links to what is
 * not packed become text saying where it is; `postpack` leaves the package as it was. Reads the
 * repository's READMEs and docs, and writes only into a fixture repository of its own (the packed
 * tarballs themselves are checked by test/packaging.test.ts).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KEPT_README, packedDocs, postpack, prepack, REPOSITORY, relativeLinks } from '../scripts/release/packed-docs.ts';
import { PACKAGES, manifestOf, packageDir } from './support/packs.ts';

let fixture: string;

test.before(() => {
  fixture = mkdtempSync(join(tmpdir(), 'packed-docs-'));
});
test.after(() => {
  rmSync(fixture, { recursive: true, force: true });
});

/** Whether npm packs `path` of a package whose package.json has `files`. */
function packed(files: readonly string[], path: string): boolean {
  return ['package.json', 'README.md', 'LICENSE'].includes(path) || files.some((f) => path === f || path.startsWith(`${f}/`));
}

for (const name of PACKAGES) {
  test(`${name}: every relative link of the packed README and of the guides packed with it leads to a file of the tarball`, () => {
    const dir = packageDir(name);
    const files = (manifestOf(name) as { files?: string[] }).files ?? [];
    const { readme, copies } = packedDocs(dir);
    const texts: [string, string][] = [['README.md', readme]];
    for (const [path, copy] of copies) {
      assert.ok(packed(files, path), `${path} is copied but not in the files of package.json`);
      if ('text' in copy) texts.push([path, copy.text]);
    }
    const broken: string[] = [];
    let links = 0;
    for (const [path, text] of texts) {
      for (const link of relativeLinks(text)) {
        links++;
        const target = posix.normalize(posix.join(posix.dirname(path), link.path));
        const there = copies.has(target) || (packed(files, target) && existsSync(join(dir, target)));
        if (!there) broken.push(`${path}: ${link.path}${link.anchor}`);
      }
    }
    assert.equal(broken, []);
    // Every package but the demo links at least one guide of docs/: the check above saw links.
    if (name !== 'demo') assert.ok(links > 0 && copies.size > 0, `${name}: links its guides`);
  });
}

test('the CLI carries its guide, linked from its README with the anchors the repository has', () => {
  const { readme, copies } = packedDocs(packageDir('cli'));
  assert.ok(readme.includes('[docs/cli.md](docs/cli.md)'), 'the README links the copy');
  assert.not.ok(readme.includes('../'), 'no link climbs out of the package');
  const copy = copies.get('docs/cli.md');
  assert.ok(copy && 'text' in copy, 'docs/cli.md is copied');
  const source = readFileSync(join(REPOSITORY, 'docs/cli.md'), 'utf8');
  // Only links change: every line without a link is the repository's.
  const plain = (text: string) => text.split('\n').filter((line) => !/\]\(|the repository/.test(line));
  assert.equal(plain((copy as { text: string }).text), plain(source));
});

test('relativeLinks: links and images with their anchors, not those in code, not absolute ones, not anchors of the page', () => {
  const text = [
    'See [the guide](docs/guide.md#setup) and ![a chart](chart.svg "Chart").',
    'Also [site](https://example.org/x.md), [mail](mailto:a@b.c), [below](#below), [`code`](<other.md>).',
    'In code: `[not](a.md)`, and',
    '```md',
    '[not either](b.md)',
    '```',
    '~~~',
    '[nor](c.md)',
    '~~~',
    '[last](d/e.md)',
  ].join('\n');
  assert.equal(
    relativeLinks(text).map((l) => [l.image, l.text, l.path, l.anchor]),
    [
      [false, 'the guide', 'docs/guide.md', '#setup'],
      [true, 'a chart', 'chart.svg', ''],
      [false, '`code`', 'other.md', ''],
      [false, 'last', 'd/e.md', ''],
    ],
  );
});

/** A repository of two packages and a few docs, in `fixture/<name>`. */
function fixtureRepository(name: string): { root: string; pkg: string } {
  const root = join(fixture, name);
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write('Dockerfile', 'FROM node\n');
  write(
    'docs/guide.md',
    '# Guide\n\n## Setup\n\n![chart](chart.svg), [other.md](other.md#part), [the rest](other.md), the [Dockerfile](../Dockerfile), [spec/A.md](spec/A.md).\n',
  );
  write('docs/chart.svg', '<svg/>\n');
  write('docs/other.md', '# Other\n');
  write('docs/spec/A.md', '# A\n');
  write('packages/a/package.json', '{"name": "@x/a", "files": ["dist", "README.md", "docs", "LICENSE"]}\n');
  write('packages/a/LICENSE', 'MIT\n');
  write(
    'packages/a/README.md',
    '# a\n\n[The guide](../../docs/guide.md#setup), [spec/A.md](../../docs/spec/A.md), [@x/b](../b/README.md), [b](../b/README.md), [LICENSE](LICENSE).\n',
  );
  write('packages/b/package.json', '{"name": "@x/b"}\n');
  write('packages/b/README.md', '# b\n');
  return { root, pkg: join(root, 'packages/a') };
}

test('packedDocs: the guides the README links are copied with the images they show; every other link outside the package becomes text', () => {
  const { root, pkg } = fixtureRepository('links');
  const { readme, copies } = packedDocs(pkg, root);
  assert.is(readme, '# a\n\n[The guide](docs/guide.md#setup), [spec/A.md](docs/spec/A.md), @x/b, b (@x/b), [LICENSE](LICENSE).\n');
  assert.equal([...copies.keys()].sort(), ['docs/chart.svg', 'docs/guide.md', 'docs/spec/A.md']);
  assert.equal(copies.get('docs/chart.svg'), { source: join(root, 'docs/chart.svg') });
  assert.equal(copies.get('docs/guide.md'), {
    text: "# Guide\n\n## Setup\n\n![chart](chart.svg), the repository's docs/other.md, the rest (the repository's docs/other.md), the Dockerfile (in the repository), [spec/A.md](spec/A.md).\n",
  });
});

test('prepack writes the packed README and the copies; postpack puts the repository README back, also after an interrupted pack', () => {
  const { root, pkg } = fixtureRepository('steps');
  const original = readFileSync(join(pkg, 'README.md'), 'utf8');
  const expected = packedDocs(pkg, root);
  prepack(pkg, root);
  assert.is(readFileSync(join(pkg, 'README.md'), 'utf8'), expected.readme);
  assert.ok(existsSync(join(pkg, KEPT_README)));
  assert.equal(readdirSync(join(pkg, 'docs')).sort(), ['chart.svg', 'guide.md', 'spec']);
  prepack(pkg, root); // a pack interrupted after its prepack, run again
  assert.is(readFileSync(join(pkg, 'README.md'), 'utf8'), expected.readme);
  postpack(pkg);
  assert.is(readFileSync(join(pkg, 'README.md'), 'utf8'), original);
  assert.not.ok(existsSync(join(pkg, KEPT_README)));
  postpack(pkg); // nothing to put back: nothing changes
  assert.is(readFileSync(join(pkg, 'README.md'), 'utf8'), original);
});

test.run();
