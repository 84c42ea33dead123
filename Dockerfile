# bre-batch as a container image. Build: `podman build -t bre-batch:1 .` (or docker build).
# The base is a build argument: the usual public slim Node image by default, or a mirror of it
# (`--build-arg NODE_IMAGE=registry.internal/node:24-bookworm-slim`). Supported lines: 20.19+, 22, 24, 26.
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: the whole toolchain, then only the production dependencies are kept ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Dependencies first, so that a change of the sources reuses this layer: the root's and each workspace
# package's package.json (npm ci links the packages under packages/; the sandbox's bin is linked too). Scripts
# are off until the sources are in: `prepare` would build, and the patches of `postinstall` live in patches/.
COPY package.json package-lock.json ./
COPY packages/core/package.json packages/core/
COPY packages/formats/package.json packages/formats/
COPY packages/backtest/package.json packages/backtest/
COPY packages/sandbox/package.json packages/sandbox/
COPY packages/sandbox/bin/ packages/sandbox/bin/
COPY patches/ patches/
RUN npm ci --no-audit --no-fund --ignore-scripts \
 && npx --no-install patch-package --error-on-fail
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/prune-dist.ts scripts/bundle.ts scripts/build-input.mjs scripts/
COPY src/ src/
COPY packages/ packages/
# The bundle in dist/bundle/ holds the workspace's packages: their links in node_modules, which would point at
# sources the image leaves out, go with the development dependencies.
RUN npm run -s build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/@bre-batch node_modules/.bin/bre-sandbox

# ---- runtime: Node, the build, the production dependencies; no compiler, no npm cache ----
FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules/ node_modules/
COPY --from=build /app/dist/ dist/
COPY bin/ bin/
COPY pipelines/ pipelines/
COPY samples/ samples/
# The official Node images have the unprivileged user `node` (uid 1000): the run never needs root. Mount the
# output folder at /data (writable by uid 1000) and the token file read-only, for example at
# /run/secrets/bre-token with BRE_AUTH_TOKEN_FILE pointing at it (owned by uid 1000, mode 600).
USER node
WORKDIR /data
VOLUME ["/data"]
# node is PID 1 and handles SIGTERM itself: `docker stop`, `podman stop` and Kubernetes' SIGTERM stop the run
# (calls in flight finish, within --stop-grace), exit 3, resumable from the same folder. No shell between:
# a shell as PID 1 would not pass the signal on.
ENTRYPOINT ["node", "/app/bin/bre-batch.js"]
CMD ["--help"]
