# syntax=docker/dockerfile:1
# The bot runs as plain JavaScript compiled from src/ (Node's own TypeScript stripping would
# keep about 30 MB more resident). The build stage compiles dist/ with the dev dependencies;
# the deps stage installs production dependencies only; the image takes dist/ from one and
# node_modules from the other.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/
COPY src ./src
RUN npm run build

FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# better-sqlite3 ships prebuilt N-API binaries inside its npm package, so no compiler is
# needed and install scripts are skipped.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-slim
# Node's compile cache (dist/main.js turns it on) lives on the volume, so a restarted
# container starts in about half the time of a first start.
# glibc's malloc, as npm start sets it: at most two arenas (it would give each thread that
# allocates one of its own, and keep it), and a fixed 32 kB threshold above which memory
# is mapped and given back when freed (glibc raises it after the first large frees, and
# start-up's memory then stays resident; node's 64 kB socket-read buffers are then mapped
# and given back rather than fragmenting the heap). The node flags are npm start's too.
ENV NODE_ENV=production \
    PORT=3000 \
    DATABASE_URL=sqlite:/data/bot.sqlite \
    NODE_COMPILE_CACHE=/data/compile-cache \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=32768
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# The doctor (`docker exec <container> npm run doctor`) compares the token's scopes with the
# manifest's, read at run time: one list of scopes, not two. It is a short-lived process and
# runs the TypeScript sources directly, so src/ ships beside dist/.
COPY manifest.yml ./
COPY src ./src
COPY scripts/doctor.ts scripts/check-node.mjs ./scripts/
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
# Liveness: /healthz answers while the process runs. /readyz (database, Slack, not
# shutting down) belongs in an orchestrator's readiness probe: as the health check it
# would mark the container unhealthy (and Swarm would replace it) whenever the database
# or Slack is away, which a restart does not fix.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM from `docker stop` reaches node directly (exec form, no npm or shell in between):
# graceful shutdown, which may take SHUTDOWN_TIMEOUT_MS (10 s) and a little more; run with
# --stop-timeout 20.
CMD ["node", "--max-semi-space-size=2", "--heap-growing-percent=20", "dist/main.js"]
