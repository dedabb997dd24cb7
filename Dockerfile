# syntax=docker/dockerfile:1
# Node 24 runs the TypeScript sources directly (type stripping), so there is no build
# stage: the first stage only installs production dependencies.
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# better-sqlite3 ships prebuilt N-API binaries inside its npm package, so no compiler is
# needed and install scripts are skipped.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-slim
# Node's compile cache (src/main.ts turns it on) lives on the volume, so a restarted
# container starts in about half the time and memory of a first start.
ENV NODE_ENV=production \
    PORT=3000 \
    DATABASE_URL=sqlite:/data/bot.sqlite \
    NODE_COMPILE_CACHE=/data/compile-cache
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
# The doctor (`docker exec <container> npm run doctor`) compares the token's scopes with the
# manifest's, read at run time: one list of scopes, not two.
COPY manifest.yml ./
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
# SIGTERM from `docker stop` reaches node directly (exec form): graceful shutdown, which
# may take SHUTDOWN_TIMEOUT_MS (10 s) and a little more; run with --stop-timeout 20.
CMD ["node", "--max-semi-space-size=2", "src/main.ts"]
