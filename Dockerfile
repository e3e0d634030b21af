# syntax=docker/dockerfile:1
# Build stage: install production dependencies exactly as locked.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/sdk/package.json packages/sdk/
COPY packages/server/package.json packages/server/
COPY packages/cli/package.json packages/cli/
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin bin
COPY packages packages
COPY tsconfig.json tsconfig.base.json ./

# Runtime stage: unprivileged user, health check, no build tools.
FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 BENCHMARKS_DATA_DIR=/data
# Heap budget (docs/deploy.md, Memory): the live heap is about 50 MB; without a budget V8 sizes the
# heap for the host's memory and the process grows to several hundred MB of uncollected garbage.
ENV NODE_OPTIONS=--max-old-space-size=128
WORKDIR /app
COPY --from=build --chown=node:node /app /app
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/api/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "bin/benchmarks-server.js"]
CMD ["start"]
