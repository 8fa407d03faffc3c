import type { Command } from "commander";
import { runningServer } from "../../connect/running-server.js";
import type { InteractionMode, RuntimeMode } from "../../spec/index.js";
import type { ProjectScope } from "../../services/credentials/mcp-session-registry.js";
import { SIGN_IN_CODE_TTL_MS } from "../../services/credentials/web-sessions.js";
import { parseDuration } from "../duration.js";
import { withHost } from "../open-host.js";
import { CliError, EXIT, printJson } from "../output.js";
import { issueWebSignIn } from "../web-sign-in.js";
import {
  DEFAULT_CEILING,
  parseInteractionMode,
  parseProjects,
  parseRuntimeMode,
  parseVerbs,
  requireServerWideInstall,
  VERBS,
  type Verb,
} from "./token.js";
import { projectIdOf } from "../thread-arguments.js";

const DEFAULT_TTL_MS = 7 * 86_400_000;
/** A person at the UI answers approvals too. */
// The person at this machine signs in: the Registry page's installs come with it.
const DEFAULT_VERBS: readonly Verb[] = ["read", "operate", "approve", "install"];

interface UiOptions {
  url?: string;
  verbs?: Verb[];
  projects?: string[] | "*";
  maxRuntimeMode?: RuntimeMode;
  maxInteractionMode?: InteractionMode;
  ttl?: number;
  home?: string;
  json?: boolean;
}

function serverUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(
      `--url ${JSON.stringify(value)} is not a URL; pass the server's address, e.g. http://127.0.0.1:7410.`,
      EXIT.usage,
    );
  }
  return url.origin;
}

/** `switchyard ui`: prints a one-time sign-in link for the web UI (see issueWebSignIn). */
export function registerUi(program: Command): void {
  program
    .command("ui")
    .description("Print a one-time sign-in link for the web UI that `switchyard serve` serves at /")
    .option(
      "--url <url>",
      "the server's address (default: the running server's, from the home's server.json; else http://127.0.0.1:<server.port>)",
    )
    .option(
      "--verbs <verbs>",
      "what the browser may do: read, operate, approve, install, comma-separated (default read,operate,approve,install; install needs --projects '*')",
      parseVerbs,
    )
    .option(
      "--projects <projects>",
      'the projects it may use: ids or folders, comma-separated, or "*" (default *)',
      parseProjects,
    )
    .option(
      "--max-runtime-mode <mode>",
      `the broadest runtime mode (default ${DEFAULT_CEILING.runtimeMode})`,
      parseRuntimeMode,
    )
    .option(
      "--max-interaction-mode <mode>",
      `the broadest interaction mode (default ${DEFAULT_CEILING.interactionMode})`,
      parseInteractionMode,
    )
    .option("--ttl <duration>", "how long the browser's token lasts (default 7d)", parseDuration)
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: UiOptions) => {
      // Checked before anything is issued, so a typo leaves no unused token behind.
      const explicitUrl = options.url !== undefined ? serverUrl(options.url) : null;
      // A browser held to some projects does not install for the whole server.
      const scoped = options.projects !== undefined && options.projects !== "*";
      const verbs = options.verbs ?? DEFAULT_VERBS.filter((verb) => !scoped || verb !== "install");
      requireServerWideInstall(verbs, options.projects);
      await withHost(options, async (host) => {
        let projects: ProjectScope = "*";
        if (options.projects !== undefined && options.projects !== "*") {
          const ids: string[] = [];
          for (const idOrPath of options.projects) ids.push(await projectIdOf(host, idOrPath));
          projects = ids;
        }
        // The running server's own address (server.json: a --port 0 or --host server too), else the configured port.
        const running = runningServer(host.paths.home);
        const base = explicitUrl ?? running?.url ?? `http://127.0.0.1:${host.config.server.port}`;
        const signIn = issueWebSignIn(host, {
          baseUrl: base,
          ttlMs: options.ttl ?? DEFAULT_TTL_MS,
          capabilities: verbs.map((verb) => VERBS[verb]),
          projects,
          ceiling: {
            runtimeMode: options.maxRuntimeMode ?? DEFAULT_CEILING.runtimeMode,
            interactionMode: options.maxInteractionMode ?? DEFAULT_CEILING.interactionMode,
          },
        });
        if (options.json) {
          printJson(signIn);
          return;
        }
        process.stdout.write(`${signIn.link}\n`);
        process.stderr.write(
          `Open the link to sign in; it works once, within ${SIGN_IN_CODE_TTL_MS / 60_000} minutes. The browser acts as token ${signIn.tokenId} (${verbs.join(", ")}; revoke it with switchyard token revoke ${signIn.tokenId}).\n`,
        );
        if (running === null && explicitUrl === null)
          process.stderr.write(
            `No server runs on ${host.paths.home} yet: the link works once \`switchyard serve\` listens at ${base}.\n`,
          );
      });
    });
}
