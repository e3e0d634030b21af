import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Router from '@koa/router';
import type Koa from 'koa';

const require = createRequire(import.meta.url);
const distDir = dirname(require.resolve('swagger-ui-dist/package.json'));

/**
 * koa2-swagger-ui's page loads `${swaggerCdnUrl}/${swaggerVersion}/<file>`: pointed at this route,
 * every file comes from the installed swagger-ui-dist (the template names the style sheet
 * `swagger-ui.min.css`, swagger-ui-dist ships it as `swagger-ui.css`).
 */
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
 * The page's policy: scripts only from this server plus the page's own inline script, allowed by
 * its hash. Styles keep 'unsafe-inline': Swagger UI sets style attributes at run time, and a style
 * cannot run code. Style sheets only from this server: the template's link to Google's web fonts
 * is refused by the browser (the page falls back to local fonts; no visitor is sent to Google).
 */
export function swaggerCsp(scriptHashes: readonly string[]): string {
  return (
    `default-src 'none'; script-src 'self' ${scriptHashes.join(' ')}; style-src 'self' 'unsafe-inline'; ` +
    "img-src 'self' data:; connect-src 'self'; font-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
  );
}

/**
 * Swagger UI at `/` through koa2-swagger-ui, mounted on a route as its README shows
 * (`routePrefix: false`), with its assets served from swagger-ui-dist (no CDN). Mount its `routes()`.
 * koa2-swagger-ui (with handlebars, which compiles its page) is loaded by the page's first request.
 */
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
