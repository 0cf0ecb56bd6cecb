# devmind as an image: HTTP API + web page + workers (`devmind serve`) against PostgreSQL.
#   docker build -t devmind .
#   docker run --rm -p 127.0.0.1:8787:8787 -e DATABASE_URL=postgres://… -e DEVMIND_API_KEYS=me=… \
#     -e OPENAI_API_KEY=… devmind            # or: docker compose up (docker-compose.yml)
# Any other command: docker run --rm devmind worker | migrate | runs | show RUN_ID | --version

ARG NODE_IMAGE=node:20-bookworm-slim

# --- build: dependencies from the lockfile, TypeScript compiled to dist/, dev dependencies dropped ---
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are copied; the build runs below
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# the build makes the migrated PGlite template (dist/pglite-template) from them: without it, a
# new embedded database in the container would run initdb at its first start
COPY migrations ./migrations
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# --- runtime: the compiled CLI, production dependencies, migrations and web page; no compiler, no sources ---
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    DEVMIND_HOST=0.0.0.0 \
    DEVMIND_PORT=8787 \
    DEVMIND_WORKSPACE=/workspace \
    DEVMIND_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
COPY src/server/web/assets ./src/server/web/assets
# the files stay root-owned (read-only for the server); only the workspace and data directory are writable
RUN chmod 755 dist/src/cli/main.js \
 && ln -s /app/dist/src/cli/main.js /usr/local/bin/devmind \
 && mkdir -p /workspace /data \
 && chown node:node /workspace /data
USER node
EXPOSE 8787
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.DEVMIND_PORT || 8787) + '/ok').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# `serve` drains on SIGTERM: runs stop at a step boundary and go back to the queue
STOPSIGNAL SIGTERM
ENTRYPOINT ["devmind"]
CMD ["serve"]
