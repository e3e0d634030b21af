import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type Koa from 'koa';
import { koaSwagger } from 'koa2-swagger-ui';

const require = createRequire(import.meta.url);
const distDir = dirname(require.resolve('swagger-ui-dist/package.json'));

const ASSETS: Record<string, [file: string, type: string]> = {
  'swagger-ui-bundle.js': ['swagger-ui-bundle.js', 'application/javascript'],
  'swagger-ui-standalone-preset.js': ['swagger-ui-standalone-preset.js', 'application/javascript'],
  'swagger-ui.min.css': ['swagger-ui.css', 'text/css'],
  'favicon.png': ['favicon-32x32.png', 'image/png'],
};
const ASSET_PREFIX = '/swagger-ui/assets/';

/** The CSP `'sha256-…'` source of each inline `<script>` of a page. */
export function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map(
    (m) => `'sha256-${createHash('sha256').update(m[1]!, 'utf8').digest('base64')}'`,
  );
}

/**
 * The page's policy: scripts only from this server plus the page's own inline script, allowed by
 * its hash (computed from the rendered page, so it follows koa2-swagger-ui's template). Styles keep
 * 'unsafe-inline': Swagger UI sets style attributes at run time, and a style cannot run code.
 */
export function swaggerCsp(scriptHashes: readonly string[]): string {
  return (
    `default-src 'none'; script-src 'self' ${scriptHashes.join(' ')}; style-src 'self' 'unsafe-inline'; ` +
    "img-src 'self' data:; connect-src 'self'; font-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
  );
}

/** Swagger UI at `/`, every asset served from swagger-ui-dist (no CDN). */
export function swaggerUi(specUrl: string): Koa.Middleware {
  const page = koaSwagger({
    routePrefix: '/',
    title: 'Benchmark Results API',
    swaggerCdnUrl: '/swagger-ui',
    swaggerVersion: 'assets',
    favicon: `${ASSET_PREFIX}favicon.png`,
    hideTopbar: true,
    swaggerOptions: { url: specUrl, persistAuthorization: true, displayOperationId: true, tryItOutEnabled: true } as never,
  }) as unknown as Koa.Middleware;
  // The page is the same for every request: render it once, at start-up, and hash its script.
  const rendered = { path: '/', method: 'GET', body: undefined as unknown, type: '' };
  void page(rendered as unknown as Koa.Context, async () => {});
  if (typeof rendered.body !== 'string') throw new Error('Swagger UI page did not render');
  // The template links web fonts from a CDN: drop that line (offline it would only fail).
  const html = rendered.body.replace(/<link href="https:\/\/fonts[^>]*>/, '');
  const csp = swaggerCsp(inlineScriptHashes(html));
  return async (ctx, next) => {
    if (ctx.method === 'GET' || ctx.method === 'HEAD') {
      if (ctx.path.startsWith(ASSET_PREFIX)) {
        const asset = ASSETS[ctx.path.slice(ASSET_PREFIX.length)];
        if (asset) {
          ctx.type = asset[1];
          ctx.set('Cache-Control', 'public, max-age=86400');
          ctx.body = createReadStream(join(distDir, asset[0]));
          return;
        }
      }
      if (ctx.path === '/') {
        ctx.type = 'text/html; charset=utf-8';
        ctx.set('Content-Security-Policy', csp);
        ctx.body = html;
        return;
      }
    }
    await next();
  };
}
