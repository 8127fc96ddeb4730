# Image Build Service container image.
#
#   docker buildx build -t image-build-service .
#
# `ibs`, the CI client (docs/ci.md), is on the PATH: `docker run --entrypoint ibs IMAGE build ...`.
#
# Runs as uid/gid 2000 with a read-only root filesystem: only /tmp (scratch: per-request dirs,
# captured logs, the Dev Containers CLI cache; HOME and every cache point there) and the builder
# state directory $DOCKER_CONFIG (buildx state, the mounted registry auth config.json) are written.
#
# No `# syntax=` line on purpose: the builder's built-in Dockerfile frontend is used, so building
# never pulls a frontend image.
#
# Build arguments:
#   BASE_IMAGE        Node.js LTS on Debian; used for both the build and the runtime stage.
#   DOCKER_CLI_IMAGE  an image holding /usr/local/bin/docker and the buildx CLI plugin in
#                     /usr/local/libexec/docker/cli-plugins (the official docker:*-cli images do).
# Both can point at locally made images (the container test builds from a debootstrap base).
ARG BASE_IMAGE=node:24-bookworm-slim
ARG DOCKER_CLI_IMAGE=docker:28-cli

# --- build: compile TypeScript, then keep production dependencies only ----------------------------
FROM ${BASE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workers ./workers
RUN npm run build \
  && chmod 755 dist/src/main.js dist/ibs.js \
  && npm prune --omit=dev --no-audit --no-fund --ignore-scripts \
  && find dist -name '*.map' -delete && rm -rf node_modules/.cache

# --- docker CLI and buildx plugin ------------------------------------------------------------------
FROM ${DOCKER_CLI_IMAGE} AS docker-cli

# --- runtime -------------------------------------------------------------------------------------
FROM ${BASE_IMAGE} AS runtime
# git, ssh, tini and CA certificates from Debian; skipped when the base already has them.
RUN set -eu; \
  missing=""; \
  for p in git openssh-client tini ca-certificates; do \
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"; \
  done; \
  if [ -n "$missing" ]; then \
    apt-get update; \
    apt-get install -y --no-install-recommends $missing; \
    rm -rf /var/lib/apt/lists/*; \
  fi; \
  groupadd --gid 2000 builder; \
  useradd --uid 2000 --gid 2000 --home-dir /tmp --no-create-home --shell /usr/sbin/nologin builder; \
  mkdir -p /var/lib/builder-state; \
  chown 2000:2000 /var/lib/builder-state; \
  ln -s /app/dist/ibs.js /usr/local/bin/ibs

COPY --from=docker-cli /usr/local/bin/docker /usr/local/bin/docker
COPY --from=docker-cli /usr/local/libexec/docker/cli-plugins/docker-buildx /usr/local/libexec/docker/cli-plugins/docker-buildx

WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist

ENV NODE_ENV=production \
  PORT=8080 \
  HOME=/tmp \
  TMPDIR=/tmp \
  DOCKER_CONFIG=/var/lib/builder-state \
  XDG_CACHE_HOME=/tmp/.cache \
  XDG_CONFIG_HOME=/tmp/.config \
  XDG_DATA_HOME=/tmp/.local/share \
  npm_config_cache=/tmp/.npm \
  PATH=/app/node_modules/.bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

USER 2000:2000
EXPOSE 8080
# tini is PID 1: it forwards SIGTERM to the service (graceful drain) and reaps git/docker children.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/src/main.js"]
