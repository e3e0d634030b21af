/**
 * The README of a published package as it is read from the tarball and on the registry's page,
 * where `../../docs/cli.md` leads nowhere (docs/decisions.md, "READMEs that work in the tarball").
 * In the repository the READMEs link the repository's files; at `npm pack` (and so at `npm publish`
 * and `lerna publish`) each package's `prepack` runs `prepack` below in the package's directory:
 *
 * - every guide under `docs/` the README links is copied into the package's own `docs/`, at the same
 *   path below it (git-ignored, in `files`), and so is every other file of `docs/` but a guide (the
 *   images the guides show) that the README or a copy links: links between copies stay as they are;
 * - every other relative link, in the README or in a copy, to a file outside the package (a guide
 *   only a copy links, another package's README, a file of the repository) becomes text that says
 *   where the file is in the repository (another package: its name);
 * - the README is written with its links to the copies, the repository's own kept aside; `postpack`
 *   puts it back, and `prepack` first puts back one an interrupted pack left.
 *
 *   "prepack": "node ../../scripts/release/check-built.js && node --import ../../scripts/dev/register.js ../../scripts/release/packed-docs.ts prepack",
 *   "postpack": "node --import ../../scripts/dev/register.js ../../scripts/release/packed-docs.ts postpack"
 *
 * test/packed-docs.test.ts checks the result for every package; test/packaging.test.ts checks
 * every link of the READMEs and guides in the real tarballs.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root: two levels above this file. */
export const REPOSITORY = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Where the repository's README is kept while the packed one is in its place (git-ignored). */
export const KEPT_README = '.README.repository.md';

/** A relative link of a Markdown text: where it starts and ends, its text, its target and its anchor. */
export interface MarkdownLink {
  start: number;
  end: number;
  image: boolean;
  text: string;
  /** The path, without its anchor. */
  path: string;
  /** `#…` or empty. */
  anchor: string;
}

const LINK = /(!?)\[((?:[^[\]\n]|\[[^\]\n]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;

/**
 * The relative links of `markdown` (`[text](path)`, `![alt](path)`), outside fenced code blocks and
 * code spans: every link but those with a scheme (`https:`, `mailto:`) and anchors within the page.
 */
export function relativeLinks(markdown: string): MarkdownLink[] {
  const code = codeRanges(markdown);
  const links: MarkdownLink[] = [];
  for (const m of markdown.matchAll(LINK)) {
    const start = m.index;
    if (code.some(([from, to]) => start >= from && start < to)) continue;
    const target = m[3]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    const hash = target.indexOf('#');
    links.push({
      start,
      end: start + m[0].length,
      image: m[1] === '!',
      text: m[2]!,
      path: hash < 0 ? target : target.slice(0, hash),
      anchor: hash < 0 ? '' : target.slice(hash),
    });
  }
  return links;
}

/** [start, end) of every fenced code block and code span of `markdown`. */
function codeRanges(markdown: string): [number, number][] {
  const ranges: [number, number][] = [];
  const fence = /^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:^ {0,3}\1[`~]*[ \t]*$|(?![\s\S]))/gm;
  for (const m of markdown.matchAll(fence)) ranges.push([m.index, m.index + m[0].length]);
  const span = /(`+)(?!`)[\s\S]*?[^`]\1(?!`)/g;
  for (const m of markdown.matchAll(span)) {
    if (!ranges.some(([from, to]) => m.index >= from && m.index < to)) ranges.push([m.index, m.index + m[0].length]);
  }
  return ranges;
}

/** What `prepack` writes: the README, and each copy (path in the package → its text or its source file). */
export interface PackedDocs {
  readme: string;
  copies: Map<string, { text: string } | { source: string }>;
}

const isInside = (path: string, dir: string) => path === dir || path.startsWith(dir + sep);
const posix = (path: string) => path.split(sep).join('/');

/**
 * The packed README of the package in `packageDir` and the files copied beside it, from the files
 * of the repository at `root`; reads only.
 */
export function packedDocs(
  packageDir: string,
  root = REPOSITORY,
  readme = readFileSync(join(packageDir, 'README.md'), 'utf8'),
): PackedDocs {
  const docs = join(root, 'docs');
  const copies: PackedDocs['copies'] = new Map();
  /** The copy's path in the package of a file under docs/. */
  const copyOf = (file: string) => posix(join('docs', relative(docs, file)));

  // The guides the README links, found first: a copy's link to another copy stays a link.
  const guides = new Set<string>();
  for (const link of relativeLinks(readme)) {
    const file = resolve(packageDir, link.path);
    if (isInside(file, docs) && file.endsWith('.md') && isFile(file)) guides.add(file);
  }

  /** `markdown` (of the file at `from`, which is at `at` in the package) with each link settled. */
  const settle = (markdown: string, from: string, at: string) =>
    rewrite(markdown, (link) => {
      const file = resolve(dirname(from), link.path);
      if (isInside(file, packageDir) && !isInside(file, join(packageDir, 'docs'))) {
        return from === at ? undefined : unlinked(link, file, root); // the package's own files, from its README only
      }
      const copied = guides.has(file) || (isInside(file, docs) && !file.endsWith('.md') && isFile(file));
      if (!copied) return unlinked(link, file, root);
      const destination = copyOf(file);
      if (!guides.has(file)) copies.set(destination, { source: file });
      const href = posix(relative(dirname(at), join(packageDir, destination))) + link.anchor;
      return `${link.image ? '!' : ''}[${link.text}](${href})`;
    });

  const packedReadme = settle(readme, join(packageDir, 'README.md'), join(packageDir, 'README.md'));
  for (const guide of guides) {
    const destination = copyOf(guide);
    copies.set(destination, { text: settle(readFileSync(guide, 'utf8'), guide, join(packageDir, destination)) });
  }
  return { readme: packedReadme, copies };
}

function isFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile();
}

/** `markdown` with each relative link replaced by what `replace` gives (undefined: left as it is). */
function rewrite(markdown: string, replace: (link: MarkdownLink) => string | undefined): string {
  let out = '';
  let at = 0;
  for (const link of relativeLinks(markdown)) {
    const replacement = replace(link);
    if (replacement === undefined) continue;
    out += markdown.slice(at, link.start) + replacement;
    at = link.end;
  }
  return out + markdown.slice(at);
}

/**
 * A link that leads nowhere in the tarball: its text, saying where the file is (another package:
 * its name). `[querying.md](querying.md#json-paths)` becomes `the repository's docs/querying.md`.
 */
function unlinked(link: MarkdownLink, file: string, root: string): string {
  const path = posix(relative(root, file));
  const plain = link.text.replace(/`/g, '');
  const otherPackage = /^packages\/([^/]+)\/README\.md$/.exec(path);
  if (otherPackage) {
    const name = readPackageName(join(root, 'packages', otherPackage[1]!));
    return plain === name ? link.text : `${link.text} (${name})`;
  }
  if (plain === path) return `${link.text} (in the repository)`;
  if (path.endsWith(`/${plain}`)) return `the repository's ${path}`;
  return `${link.text} (the repository's ${path})`;
}

function readPackageName(dir: string): string {
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string }).name;
}

/** Puts back the repository's README that an earlier `prepack` kept aside, if any. */
function restore(packageDir: string): void {
  const kept = join(packageDir, KEPT_README);
  if (existsSync(kept)) renameSync(kept, join(packageDir, 'README.md'));
}

/** Writes the copies and the packed README of the package in `packageDir`, keeping its own aside. */
export function prepack(packageDir: string, root = REPOSITORY): void {
  restore(packageDir);
  const { readme, copies } = packedDocs(packageDir, root);
  rmSync(join(packageDir, 'docs'), { recursive: true, force: true });
  for (const [path, content] of copies) {
    const file = join(packageDir, path);
    mkdirSync(dirname(file), { recursive: true });
    if ('text' in content) writeFileSync(file, content.text);
    else copyFileSync(content.source, file);
  }
  copyFileSync(join(packageDir, 'README.md'), join(packageDir, KEPT_README));
  writeFileSync(join(packageDir, 'README.md'), readme);
}

/** Puts the package's own README back (the copies stay, git-ignored, until the next pack). */
export function postpack(packageDir: string): void {
  restore(packageDir);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const step = process.argv[2];
  if (step === 'prepack') prepack(process.cwd());
  else if (step === 'postpack') postpack(process.cwd());
  else {
    process.stderr.write('usage: packed-docs.ts prepack|postpack (in a package directory)\n');
    process.exit(2);
  }
}
