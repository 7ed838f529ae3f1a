# The Chamada service image: compiled once in a build stage, run as an unprivileged user.
# Node 22 LTS in the image (the project supports Node >= 20.19; 20 is end-of-life upstream).
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/buildServer.ts ./scripts/
COPY src ./src
# Type-checks, bundles the service into dist/server/main.js (and the backup command and the print agent,
# dist/server/backup.js and printAgent.js) and builds the kiosk into dist/kiosk.
RUN npm run build

FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/app/data
WORKDIR /app
COPY package.json package-lock.json ./
# The bundle holds the JavaScript dependencies; LevelDB's native addon (leveldown) and sharp (libvips, for photos) are required from
# node_modules at run time, so the production dependencies are still installed.
RUN npm ci --omit=dev && npm cache clean --force
# A font for the text of the family pass's PNG, which sharp (librsvg) draws from SVG (decision 0049).
RUN apt-get update && apt-get install -y --no-install-recommends fonts-dejavu-core && rm -rf /var/lib/apt/lists/*
# The service's young generation (src/config/runtime.ts). Its heap limit is set by the command below,
# sized to the container's memory limit (256 MB, less under a limit that would not also hold what the
# process needs beside it; decision 0077); a deployment with more data sets its own here, which the
# command then leaves alone: `-e NODE_OPTIONS="--max-old-space-size=512 --max-semi-space-size=4"`.
ENV NODE_OPTIONS="--max-semi-space-size=4"
# Two malloc arenas instead of up to eight per core: LevelDB's threads allocate what the main thread
# frees, and each extra arena kept its freed memory for itself (src/config/runtime.ts, decision 0011).
ENV MALLOC_ARENA_MAX=2
COPY --from=build /app/dist ./dist
COPY scripts/container-start.sh ./scripts/
# /app/backups: where the compose file's backup job writes (a volume that takes this ownership).
RUN mkdir -p /app/data /app/backups && chown node:node /app/data /app/backups
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/api/v1/health').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The script execs node, which as PID 1 gets SIGTERM from `docker stop`; main.ts drains requests and
# closes the store.
CMD ["sh", "scripts/container-start.sh"]
