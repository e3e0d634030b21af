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
        await page(ctx, next);
        // The page's own template links web fonts from a CDN: drop that line, offline it only fails.
        if (typeof ctx.body === 'string') ctx.body = ctx.body.replace(/<link href="https:\/\/fonts[^>]*>/, '');
        return;
      }
    }
    await next();
  };
}
