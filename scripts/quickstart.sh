#!/usr/bin/env bash
# One command for a newcomer: install what is missing, start the local stack (builder, registries,
# git servers with fixture repositories), build and start the service configured against it on
# 127.0.0.1:${PORT:-8080} (this machine only), and print ready-to-paste curls that build a fixture
# repository and read it back. Another port: PORT=8081 bash scripts/quickstart.sh
# It prints its steps and the curls (at most 40 lines); everything else (the installer, the stack,
# the service's own log) goes to the log file it names first.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-8080}
log="${TMPDIR:-/tmp}/ibs-quickstart-$PORT.log"

# Stops with a clear message when the port is not a port or is already taken on 127.0.0.1.
check_port() {
  if ! [[ $PORT =~ ^[0-9]+$ ]] || [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; then
    echo "PORT=$PORT is not a TCP port (1-65535); choose one: PORT=8081 bash scripts/quickstart.sh" >&2
    exit 1
  fi
  # Before the install there may be no Node.js: then a connection tells whether the port is taken.
  if ! command -v node >/dev/null 2>&1; then
    if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
      echo "port $PORT on 127.0.0.1 is already in use; choose another: PORT=8081 bash scripts/quickstart.sh" >&2
      exit 1
    fi
    return 0
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
# Runs a step with its output in the log; on failure, shows the log's end and stops.
step() {
  local what=$1
  shift
  echo "- $what"
  if ! "$@" >>"$log" 2>&1; then
    echo "failed: $what; the end of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
}

check_port
: >"$log"
echo "Quick start on http://127.0.0.1:$PORT; the full output goes to $log"

step "installing what is missing (.ci/install.sh; the first run on a machine takes minutes)" \
  bash .ci/install.sh
# The installer puts Node.js on the search path when the machine had none or an older one.
echo "- using Node.js $(node --version) from $(command -v node)"
# `npm ci` (run by install.sh when node_modules is missing or stale) builds dist/ already: build
# again only when a source is newer than the build.
if [ ! -e dist/src/main.js ] ||
  [ -n "$(find src workers package.json tsconfig.json tsconfig.build.json -newer dist/src/main.js -print -quit)" ]; then
  step "building the service (dist/)" npm run --silent build
fi
step "starting the local stack (builders, registries, git servers)" npm run --silent stack -- up
# The stack's endpoints as shell variables of this script only (never exported; no name is an
# option's env var either: test/stack/env.ts).
eval "$(npm run --silent stack -- env 2>>"$log")"
# The stack made the fixture repository: the tag the service gives its build is known
# (`sha-<7 hex of the commit>` of its default branch).
tag="sha-$(git --git-dir "$GIT_REPOS_DIR/feature.git" rev-parse HEAD | cut -c1-7)"

# Server-side git credentials for the fixture git servers (a file, as in a real deployment).
creds="$STACK_DIR/quickstart-git-credentials.json"
# The token goes through the environment of this one command, never its argv (visible to every
# process on the machine).
IBS_QS_TOKEN="$GIT_HTTPS_PASSWORD" node -e '
const fs = require("fs");
const [file, user, keyFile, sshHost, sshPort] = process.argv.slice(1);
const token = process.env.IBS_QS_TOKEN;
const entries = [
  { host: "127.0.0.1", kind: "https", username: user, token },
  { host: sshHost, port: Number(sshPort), kind: "ssh", privateKey: fs.readFileSync(keyFile, "utf8") },
];
fs.writeFileSync(file, JSON.stringify(entries, null, 2), { mode: 0o600 });
' "$creds" "$GIT_HTTPS_USER" "$GIT_SSH_KEY_FILE" "$GIT_SSH_HOST" "$GIT_SSH_PORT"

# The service's environment is built from nothing: exactly the options below as flags, and only
# what a process needs to run (search path, home, locale, temp dir, proxies, CA bundles). Nothing
# else of this shell's environment (a REDIS_URL, say) reaches it: it runs in embedded mode.
# Its own builder state (buildx instances, ambient registry auth) is apart from ~/.docker.
docker_config="$STACK_DIR/quickstart-docker-config"
mkdir -p "$docker_config"
service_env=(PATH="$PATH" DOCKER_CONFIG="$docker_config" GIT_SSL_CAINFO="$GIT_CA_FILE" NODE_EXTRA_CA_CERTS="$GIT_CA_FILE")
for name in HOME LANG LC_ALL TZ SSL_CERT_FILE SSL_CERT_DIR HTTP_PROXY HTTPS_PROXY NO_PROXY \
  http_proxy https_proxy no_proxy XDG_RUNTIME_DIR; do
  if [ -n "${!name:-}" ]; then service_env+=("$name=${!name}"); fi
done

# The service's scratch space (clones, command logs, its builder state) in a directory of this
# run's own, removed when the service has ended: nothing of it stays in the temporary directory.
service_tmp=$(mktemp -d "${TMPDIR:-/tmp}/ibs-quickstart-service-XXXXXX")
service_env+=("TMPDIR=$service_tmp")

check_port # again: something may have taken it meanwhile
# A session of its own: Ctrl-C reaches this script only, which passes it on once (a second Ctrl-C
# makes the service stop at once, as its shutdown says).
env -i "${service_env[@]}" setsid node dist/src/main.js \
  --host 127.0.0.1 \
  --port "$PORT" \
  --builder-endpoint "$STACK_BUILDER_ENDPOINT" \
  --insecure-registries "$REGISTRY_ANON,$REGISTRY_NODELETE,$REGISTRY_BASIC,$REGISTRY_TOKEN" \
  --fallback-image "$BASE_IMAGE_ANON" \
  --git-credentials-config-path "$creds" >>"$log" 2>&1 &
service=$!
stopping=0
trap 'stopping=1; kill -TERM "$service" 2>/dev/null || true' INT TERM
# Waits until the service has exited and sets `status` to its exit status (a trap interrupts a
# `wait`; bash keeps the status for the next one).
wait_service() {
  while kill -0 "$service" 2>/dev/null; do wait "$service" || true; done
  status=0
  wait "$service" || status=$?
  rm -rf "$service_tmp"
}

echo "- starting the service, waiting until it is ready"
until curl -fsS -o /dev/null "http://127.0.0.1:$PORT/health/ready" 2>/dev/null; do
  if [ "$stopping" = 1 ] || ! kill -0 "$service" 2>/dev/null; then
    wait_service
    if [ "$stopping" = 0 ]; then
      echo "the service stopped (exit $status) before it was ready; the end of $log:" >&2
      tail -n 20 "$log" >&2
    fi
    exit 1
  fi
  sleep 1
done

cat <<MSG

Service ready on http://127.0.0.1:$PORT, this machine only; its log: $log
Ctrl-C stops it; \`npm run stack -- down\` stops the stack.
Build a fixture repository from the local https git server and push it to the local registry:

  curl -sS -X POST http://127.0.0.1:$PORT/build -H 'content-type: application/json' \\
    -d '{"repository": "$GIT_HTTPS_URL/feature.git", "image": {"registry": "$REGISTRY_ANON"}}'

Then read it back:

  curl -sS "http://127.0.0.1:$PORT/devcontainer?registry=$REGISTRY_ANON&name=feature&tag=$tag"

Their digests differ: the build answers the pushed index, the read-back the platform's manifest in it.

MSG

wait_service
exit "$status"
