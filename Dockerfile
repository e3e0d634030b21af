# syntax=docker/dockerfile:1
# The benchmark results service (@benchmarks/server), compiled, run by `node`: no TypeScript, tsx or
# esbuild in the final image. Three stages: production dependencies of the server, the build, and
# the runtime that takes only what `node packages/server/dist/cli.js start` needs from each.

# Production dependencies of @benchmarks/server (and so of @benchmarks/sdk) only, exactly as locked.
# Every workspace's package.json is needed for `npm ci` to check the lockfile; only the server's
# dependencies are installed. Depends on nothing but these files, so the layer is reused until they change.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/sdk/package.json packages/sdk/
COPY packages/server/package.json packages/server/
COPY packages/demo/package.json packages/demo/
COPY packages/cli/package.json packages/cli/
RUN npm ci --omit=dev --workspace=@benchmarks/server --no-audit --no-fund

# Build: every dependency (TypeScript, esbuild), then `npm run build` compiles packages/*/dist.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/sdk/package.json packages/sdk/
COPY packages/server/package.json packages/server/
COPY packages/demo/package.json packages/demo/
COPY packages/cli/package.json packages/cli/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# Runtime: unprivileged user, health check. The code belongs to root and is read-only to the service;
# node_modules links @benchmarks/server and @benchmarks/sdk to packages/, where their dist/ is copied.
FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 BENCHMARKS_DATA_DIR=/data
# Heap budget (docs/deploy.md, Memory): the live heap is about 50 MB; without a budget V8 sizes the
# heap for the host's memory and the process grows to several hundred MB of uncollected garbage.
# Node 24 also grows the young generation to 192 MB: 16 MB semi-spaces, Node 20's, keep RSS lower.
ENV NODE_OPTIONS="--max-old-space-size=128 --max-semi-space-size=16"
WORKDIR /app
COPY --from=deps /app /app
COPY --from=build /app/packages/sdk/dist packages/sdk/dist
COPY --from=build /app/packages/server/dist packages/server/dist
COPY --from=build /app/packages/server/assets packages/server/assets
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/api/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The `benchmarks-server` bin of @benchmarks/server: `start` (the default) or `migrate`.
ENTRYPOINT ["node", "/app/packages/server/dist/cli.js"]
CMD ["start"]
