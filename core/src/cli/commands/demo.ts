import type { Command } from "commander";
import { recordRunningServer } from "../../connect/running-server.js";
import type { SwitchyardHost } from "../../host/switchyard-host.js";
import { SIGN_IN_CODE_TTL_MS } from "../../services/credentials/web-sessions.js";
import type { RunningServer } from "../../transports/http/switchyard-server.js";
import { HOST_VERSION } from "../../util/host-version.js";
import { CliError } from "../output.js";
import { issueWebSignIn } from "../web-sign-in.js";
import { DEFAULT_CEILING } from "./token.js";

/** The demo's browser token lives as long as a demo is likely kept: a day. */
const DEMO_SIGN_IN_TTL_MS = 86_400_000;

/**
 * `switchyard demo` lives in the testkit (it uses the scripted model server and harness homes),
 * and the testkit depends on core. Core finds it at run time, so the build has no cycle and a
 * Switchyard installed without the testkit still runs every other command.
 */
export const DEMO_MODULE = "@switchyard/testkit/demo";

/** The demo's server, once the delegation is done and `--keep` leaves it running. */
export interface KeptDemo {
  readonly home: string;
  readonly host: SwitchyardHost;
  readonly server: RunningServer;
}

/** What the demo module exports. */
export interface DemoModule {
  runDemo(options: { keep?: boolean; pair?: string; onKeep?: (kept: KeptDemo) => readonly string[] }): Promise<void>;
}

/**
 * With `--keep`, the demo's server is one like `serve`'s: recorded in its home's server.json (so
 * `status`, `threads`, `run` and `ui` find it with `--home`), and reachable from the web UI with
 * a sign-in link printed at once. The home is the demo's temporary one, removed when it stops.
 */
function keepServer({ home, host, server }: KeptDemo): readonly string[] {
  recordRunningServer(home, {
    pid: process.pid,
    url: server.url,
    mcpUrl: server.mcpUrl,
    port: server.port,
    startedAt: new Date().toISOString(),
    version: HOST_VERSION,
  });
  const signIn = issueWebSignIn(host, {
    baseUrl: server.url,
    ttlMs: DEMO_SIGN_IN_TTL_MS,
    capabilities: ["orchestration:read", "orchestration:operate", "orchestration:approve"],
    projects: "*",
    ceiling: DEFAULT_CEILING,
    label: "web UI (switchyard demo --keep)",
  });
  return [
    `Web UI: ${signIn.link} (sign in once, within ${SIGN_IN_CODE_TTL_MS / 60_000} minutes)`,
    `The other commands reach this server with --home: switchyard threads list --home ${home}`,
  ];
}

/** Imports the demo, or fails with what to install when its package is missing. */
export async function loadDemoModule(specifier: string = DEMO_MODULE): Promise<DemoModule> {
  const packageName = specifier.split("/").slice(0, 2).join("/");
  try {
    return (await import(specifier)) as DemoModule;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message = error instanceof Error ? error.message : String(error);
    if (
      (code === "ERR_MODULE_NOT_FOUND" || code === "ERR_PACKAGE_PATH_NOT_EXPORTED") &&
      message.includes(packageName)
    ) {
      throw new CliError(
        `switchyard demo needs ${packageName}, which is not installed next to @switchyard/core. Run the demo from a Switchyard checkout after \`npm ci && npm run build\`, or install it: npm install ${packageName}@${HOST_VERSION}`,
      );
    }
    throw new CliError(`The demo could not be loaded from ${specifier}: ${message}`);
  }
}

export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description(
      "Run a real Codex thread that delegates to a real Pi thread (or another --pair), offline (scripted model), and print both transcripts",
    )
    .option(
      "--keep",
      "leave the server running afterwards (recorded in its home's server.json) and print its URL and a web UI sign-in link",
    )
    .option(
      "--pair <parent:child>",
      "which drivers delegate: two of codex, pi, claude (claude:pi, codex:claude…)",
      "codex:pi",
    )
    .action(async (options: { keep?: boolean; pair: string }) => {
      const demo = await loadDemoModule();
      await demo.runDemo({ keep: options.keep === true, pair: options.pair, onKeep: keepServer });
    });
}
