// Where the built packages the suite drives live. The suite runs against `npm run build` output,
// never against sources, like a user's installation would.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The `switchyard` CLI. */
export const CLI = `${REPO_ROOT}core/dist/cli/main.js`;
/** The scripted provider plugin folder (the sdk testkit's `scripted` driver), loaded like any plugin. */
export const SCRIPTED_PROVIDER_PLUGIN_DIR = `${REPO_ROOT}testkit/plugins/scripted-provider`;
/** The sdk testkit's scripted ACP agent, a real process speaking ACP over stdio. */
export const SCRIPTED_ACP_AGENT_BIN = `${REPO_ROOT}testkit/dist/acp-agent/bin.js`;

/** Fails with what to do when the packages were not built. */
export function assertBuilt() {
  for (const file of [CLI, SCRIPTED_ACP_AGENT_BIN, `${REPO_ROOT}testkit/dist/scripted-provider/index.js`]) {
    if (!existsSync(file))
      throw new Error(`${file} is missing: run \`npm run build\` first (\`npm run reliability\` does).`);
  }
}
