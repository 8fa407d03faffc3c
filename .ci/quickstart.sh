#!/usr/bin/env bash
# CI: the README's quick start, verbatim, on a fresh clone of this checkout's HEAD (commit first:
# uncommitted changes are not in the clone). Runs `npm ci && npm start` until the MCP endpoint
# answers /health, stops the server, then runs the demo command as the README shows it.
# Every step is bounded in time; the clone and its home are removed at the end.
set -euo pipefail

checkout="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-quickstart-XXXXXX")"
server_pid=""

stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    # npm start runs npm, a shell and node in one process group (setsid below): stop them all.
    kill -TERM -- "-$server_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
cleanup() {
  stop_server
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n== quickstart: %s\n' "$*"; }

step "fresh clone of $checkout"
git clone --quiet "$checkout" "$work/switchyard"
cd "$work/switchyard"

# A home of its own (the README's SWITCHYARD_HOME), so CI never touches ~/.switchyard.
export SWITCHYARD_HOME="$work/home"
mkdir -p "$SWITCHYARD_HOME"
if ! node -e 'const s=require("node:net").createServer();s.once("error",()=>process.exit(1));s.listen(7410,"127.0.0.1",()=>s.close(()=>process.exit(0)))'; then
  # Port 7410 (the README's default) is taken on this machine: let serve pick a free one.
  echo "port 7410 is in use here; this run serves on a free port instead (server.port 0)"
  echo '{ "server": { "port": 0 } }' > "$SWITCHYARD_HOME/config.json"
fi

step "npm ci"
timeout 900 npm ci --no-audit --no-fund

step "npm start (until the MCP endpoint answers /health)"
setsid npm start > "$work/start.log" 2>&1 &
server_pid=$!
mcp_url=""
# npm start builds first; allow it a few minutes on a slow machine.
for _ in $(seq 1 600); do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    cat "$work/start.log"
    echo "quickstart: npm start exited before serving" >&2
    exit 1
  fi
  mcp_url="$(sed -n 's/^MCP endpoint: \(http[^ ]*\)$/\1/p' "$work/start.log" | head -n 1)"
  if [ -n "$mcp_url" ] && curl -fsS --max-time 5 "${mcp_url%/mcp}/health" > /dev/null 2>&1; then break; fi
  mcp_url=""
  sleep 0.5
done
if [ -z "$mcp_url" ]; then
  cat "$work/start.log"
  echo "quickstart: the MCP endpoint did not answer /health within 5 minutes" >&2
  exit 1
fi
echo "serving at $mcp_url"
stop_server
if curl -fsS --max-time 2 "${mcp_url%/mcp}/health" > /dev/null 2>&1; then
  echo "quickstart: the server still answers after SIGTERM" >&2
  exit 1
fi

step "npx switchyard demo"
timeout 600 npx switchyard demo | tee "$work/demo.log"
grep -q '^Lineage:' "$work/demo.log"

step "ok"
