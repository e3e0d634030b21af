import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type Koa from 'koa';

/** The explorer's sources (not in the package) and where `npm run build` puts their bundle (shipped in assets/). */
const SOURCES = fileURLToPath(new URL('../../explorer/', import.meta.url));
export const EXPLORER_ASSETS = fileURLToPath(new URL('../../assets/explorer/', import.meta.url));
const FILES = { 'explorer.js': 'application/javascript; charset=utf-8', 'explorer.css': 'text/css; charset=utf-8' } as const;

/**
 * The explorer's policy: its own script and style sheet, the API of this server, nothing inline and
 * no other origin. `img-src data:` is the empty favicon (without it Chromium asks for /favicon.ico).
 */
export const EXPLORER_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
  '<title>Explorer · Benchmark Results</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/explore/assets/explorer.css">' +
  '<script type="module" src="/explore/assets/explorer.js"></script></head><body><div id="app"><p>Loading the explorer…</p></div>' +
  '<noscript>The explorer needs JavaScript. The API (/api/v1) and its Swagger UI (/) work without it.</noscript></body></html>';

/** esbuild's options for the bundle: one definition for `npm run build` and the in-memory build of the sources. */
export function explorerBuildOptions() {
  return {
    entryPoints: { explorer: `${SOURCES}main.tsx` },
    bundle: true,
    minify: true,
    format: 'esm' as const,
    platform: 'browser' as const,
    target: 'es2022',
    jsx: 'automatic' as const,
    jsxImportSource: 'preact',
    conditions: ['@benchmarks/source'],
    legalComments: 'none' as const,
    logLevel: 'warning' as const,
  };
}

/**
 * The files: run from the TypeScript sources, the explorer's bundled in memory by esbuild, once;
 * run from the build, its bundle. esbuild, a development dependency, is named by a variable so that
 * the build never loads it.
 */
function loader(): () => Promise<Map<string, string>> {
  let files: Promise<Map<string, string>> | undefined;
  const fromSources = import.meta.url.endsWith('.ts');
  const load = async () => {
    if (!fromSources) {
      return new Map(await Promise.all(Object.keys(FILES).map(async (f) => [f, await readFile(EXPLORER_ASSETS + f, 'utf8')] as const)));
    }
    const name = 'esbuild';
    const { build } = (await import(name)) as typeof import('esbuild');
    const out = await build({ ...explorerBuildOptions(), write: false, outdir: '/' });
    return new Map((out.outputFiles ?? []).map((f) => [f.path.slice(1), f.text]));
  };
  return () => {
    files ??= load().catch((err) => {
      files = undefined;
      throw err;
    });
    return files;
  };
}

/** `GET /explore` and every path under it: the page (the views route in the browser) and its two files. */
export function explorer(): Koa.Middleware {
  const files = loader();
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || !/^\/explore(\/|$)/.test(ctx.path)) return next();
    const asset = /^\/explore\/assets\/([a-z.]+)$/.exec(ctx.path)?.[1];
    ctx.set('Content-Security-Policy', EXPLORER_CSP);
    ctx.set('Cache-Control', 'no-cache');
    if (asset === undefined) {
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = PAGE;
      return;
    }
    const type = FILES[asset as keyof typeof FILES];
    if (!type) return next();
    ctx.type = type;
    ctx.body = (await files()).get(asset);
  };
}
