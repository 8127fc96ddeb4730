#!/usr/bin/env bash
# One command for a newcomer: install what is missing, start the local stack (builder, registries,
# git servers with fixture repositories), build and start the service configured against it on
# 127.0.0.1:${PORT:-8080} (this machine only), and print a ready-to-paste curl that builds a fixture
# repository. Another port: PORT=8081 bash scripts/quickstart.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-8080}

# Stops with a clear message when the port is not a port or is already taken on 127.0.0.1.
check_port() {
  if ! [[ $PORT =~ ^[0-9]+$ ]] || [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; then
    echo "PORT=$PORT is not a TCP port (1-65535); choose one: PORT=8081 bash scripts/quickstart.sh" >&2
    exit 1
  fi
  local code
  if ! code=$(node -e '
const server = require("net").createServer();
server.once("error", (err) => { console.log(err.code); process.exit(1); });
server.listen(Number(process.argv[1]), "127.0.0.1", () => server.close());
' "$PORT"); then
    if [ "$code" = EADDRINUSE ]; then what="is already in use"; else what="cannot be used ($code)"; fi
    echo "port $PORT on 127.0.0.1 $what; choose another: PORT=8081 bash scripts/quickstart.sh" >&2
    exit 1
  fi
}
check_port

bash .ci/install.sh
# `npm ci` (run by install.sh when node_modules is missing or stale) builds dist/ already: build
# again only when a source is newer than the build.
if [ ! -e dist/src/main.js ] ||
  [ -n "$(find src workers package.json tsconfig.json tsconfig.build.json -newer dist/src/main.js -print -quit)" ]; then
  npm run --silent build
fi
npm run --silent stack -- up
eval "$(npm run --silent stack -- env | sed 's/^/export /')"

# Server-side git credentials for the fixture git servers (a file, as in a real deployment).
creds="$STACK_DIR/quickstart-git-credentials.json"
node -e '
const fs = require("fs");
const [file, user, token, keyFile, sshHost, sshPort] = process.argv.slice(1);
const entries = [
  { host: "127.0.0.1", kind: "https", username: user, token },
  { host: sshHost, port: Number(sshPort), kind: "ssh", privateKey: fs.readFileSync(keyFile, "utf8") },
];
fs.writeFileSync(file, JSON.stringify(entries, null, 2), { mode: 0o600 });
' "$creds" "$GIT_HTTPS_USER" "$GIT_HTTPS_PASSWORD" "$GIT_SSH_KEY_FILE" "$GIT_SSH_HOST" "$GIT_SSH_PORT"

check_port # again: something may have taken it meanwhile
cat <<MSG

Service starting on http://127.0.0.1:$PORT, this machine only (Ctrl-C stops it; \`npm run stack -- down\` stops the stack).
Build a fixture repository from the local https git server and push it to the local registry:

  curl -sS -X POST http://127.0.0.1:$PORT/build -H 'content-type: application/json' \\
    -d '{"repository": "$GIT_HTTPS_URL/feature.git", "image": {"registry": "$REGISTRY_ANON"}}'

Then read it back:

  curl -sS "http://127.0.0.1:$PORT/devcontainer?registry=$REGISTRY_ANON&name=feature&tag=<tag from the build>"

MSG

# The service's own builder state (buildx instances, ambient registry auth), apart from ~/.docker.
export DOCKER_CONFIG="$STACK_DIR/quickstart-docker-config"
mkdir -p "$DOCKER_CONFIG"
export GIT_SSL_CAINFO="$GIT_CA_FILE" NODE_EXTRA_CA_CERTS="$GIT_CA_FILE"
exec node dist/src/main.js \
  --host 127.0.0.1 \
  --port "$PORT" \
  --builder-endpoint "$BUILDER_ENDPOINT" \
  --insecure-registries "$REGISTRY_ANON,$REGISTRY_NODELETE,$REGISTRY_BASIC,$REGISTRY_TOKEN" \
  --fallback-image "$BASE_IMAGE_ANON" \
  --git-credentials-config-path "$creds"
