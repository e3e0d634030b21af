import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Router from '@koa/router';
import type Koa from 'koa';

const require = createRequire(import.meta.url);
const distDir = dirname(require.resolve('swagger-ui-dist/package.json'));

/** koa2-swagger-ui's page loads `${swaggerCdnUrl}/${swaggerVersion}/<file>`: here, from the installed swagger-ui-dist. */
const CDN_URL = '/swagger-ui';
const VERSION_DIR = 'assets';
const ASSETS = new Map<string, [file: string, type: string]>([
  ['swagger-ui-bundle.js', ['swagger-ui-bundle.js', 'application/javascript']],
  ['swagger-ui-standalone-preset.js', ['swagger-ui-standalone-preset.js', 'application/javascript']],
  ['swagger-ui.min.css', ['swagger-ui.css', 'text/css']],
  ['favicon.png', ['favicon-32x32.png', 'image/png']],
]);

/** The CSP `'sha256-…'` source of each inline `<script>` of a page. */
export function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map(
    (m) => `'sha256-${createHash('sha256').update(m[1]!, 'utf8').digest('base64')}'`,
  );
}

/**
 * The page's policy: scripts from this server and the page's inline script, by its hash. Styles keep
 * 'unsafe-inline' (Swagger UI sets style attributes; a style runs no code); style sheets from this
 * server only, so the template's Google web fonts are refused and no visitor is sent to Google.
 */
export function swaggerCsp(scriptHashes: readonly string[]): string {
  return (
    `default-src 'none'; script-src 'self' ${scriptHashes.join(' ')}; style-src 'self' 'unsafe-inline'; ` +
    "img-src 'self' data:; connect-src 'self'; font-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
  );
}

/** Swagger UI at `/`, its assets from swagger-ui-dist (no CDN); koa2-swagger-ui is loaded by the page's first request. */
export function swaggerUi(specUrl: string): Router {
  let page: Promise<Koa.Middleware> | undefined;
  const router = new Router();
  router.get('/', async (ctx, next) => {
    page ??= import('koa2-swagger-ui').then(({ koaSwagger }) =>
      koaSwagger({
        routePrefix: false,
        title: 'Benchmark Results API',
        swaggerCdnUrl: CDN_URL,
        swaggerVersion: VERSION_DIR,
        favicon: `${CDN_URL}/${VERSION_DIR}/favicon.png`,
        hideTopbar: true,
        swaggerOptions: { url: specUrl, persistAuthorization: true, displayOperationId: true, tryItOutEnabled: true },
      }),
    );
    await (await page)(ctx, next);
    // The policy allows the inline script of the page being sent, by its hash.
    if (typeof ctx.body === 'string') ctx.set('Content-Security-Policy', swaggerCsp(inlineScriptHashes(ctx.body)));
  });
  router.get(`${CDN_URL}/${VERSION_DIR}/:file`, async (ctx, next) => {
    const asset = ASSETS.get(ctx.params.file ?? '');
    if (!asset) return next();
    ctx.type = asset[1];
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = createReadStream(join(distDir, asset[0]));
  });
  return router;
}
