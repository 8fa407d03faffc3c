import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  resolveHarnessBinary,
  ScriptedModelServer,
  type PresentedApiKey,
  type RecordedRequest,
} from "@switchyard/testkit";
import { runCli } from "../support/cli.js";
import { exampleFiles, readDocExamples, type DocExampleFile } from "../support/doc-examples.js";
import { connectMcp, mustCall } from "../support/mcp-client.js";
import { ServeProcess, type ServeEndpoint } from "../support/serve-process.js";

// docs/models.md, run: each example's files are read from the doc as a user copies them, with
// only the doc's placeholders replaced (the user's home, and the endpoint's origin, which becomes
// a scripted model server that checks keys the way a gateway does). A real `switchyard serve`
// loads the config, starts the real harness for a turn, and the scripted server records the
// request: its path under the base URL, the key and the header it came in, and the model.

const DOC = fileURLToPath(new URL("../../../docs/models.md", import.meta.url));
const examples = readDocExamples(DOC);

/** The doc's placeholders for the user's home and for endpoints; the test maps each to its own. */
const USER_HOME = "/home/me";
const ENDPOINT_ORIGINS = ["http://127.0.0.1:11434", "http://127.0.0.1:4000", "https://gateway.example.com"];
/** The doc writes every key as `sk-…-replace-me`, so a test can tell keys from other values. */
const KEY_PLACEHOLDER = /^sk-[a-z]+-replace-me$/;

/** One turn on an example's instance and what its model request must look like. */
interface ExpectedTurn {
  /** The model the thread names (absent: the harness's default from the example's config). */
  readonly threadModel?: string;
  /** The model the request asks for. */
  readonly model: string;
  /** The path the request goes to, under the example's base URL. */
  readonly path: RegExp;
  /** The key it presents: in which header, and whether it is the example's key (`true`), another (`false`) or none (`null`). */
  readonly key: { readonly via: string; readonly isExamplesKey: boolean } | null;
}

interface ExampleCase {
  readonly id: string;
  readonly turns: readonly ExpectedTurn[];
}

/** A harness's examples, run on one server; `adjust` adds what only the test needs (and says why). */
interface HarnessCase {
  readonly name: string;
  readonly examples: readonly ExampleCase[];
  readonly setup?: () => Promise<{ adjust: (instance: Record<string, any>) => void; close: () => Promise<void> }>;
}

const bearer = (isExamplesKey: boolean) => ({ via: "authorization", isExamplesKey });

const HARNESSES: readonly HarnessCase[] = [
  {
    name: "Codex",
    examples: [
      { id: "codex-local", turns: [{ model: "qwen3-coder:30b", path: /^\/v1\/responses$/, key: null }] },
      { id: "codex-gateway", turns: [{ model: "gpt-5.5", path: /^\/openai\/v1\/responses$/, key: bearer(true) }] },
    ],
  },
  {
    name: "Claude Code",
    examples: [
      {
        id: "claude-local",
        turns: [
          { model: "qwen3-coder:30b", path: /^\/v1\/messages(\?|$)/, key: { via: "x-api-key", isExamplesKey: true } },
        ],
      },
      {
        id: "claude-gateway",
        turns: [{ model: "claude-sonnet-5-1", path: /^\/anthropic\/v1\/messages(\?|$)/, key: bearer(true) }],
      },
    ],
  },
  {
    name: "Pi",
    examples: [
      {
        id: "pi-local",
        turns: [
          { model: "qwen3-coder:30b", path: /^\/v1\/chat\/completions$/, key: bearer(false) },
          {
            threadModel: "ollama-responses/gpt-oss:20b",
            model: "gpt-oss:20b",
            path: /^\/v1\/responses$/,
            key: bearer(false),
          },
        ],
      },
      {
        id: "pi-anthropic",
        turns: [
          { model: "claude-sonnet-5-1", path: /^\/v1\/messages(\?|$)/, key: { via: "x-api-key", isExamplesKey: true } },
        ],
      },
      { id: "pi-gateway", turns: [{ model: "gpt-5.5", path: /^\/openai\/v1\/chat\/completions$/, key: bearer(true) }] },
    ],
  },
  {
    name: "OpenCode",
    examples: [
      { id: "opencode-local", turns: [{ model: "qwen3-coder:30b", path: /^\/v1\/chat\/completions$/, key: null }] },
      {
        id: "opencode-anthropic",
        turns: [
          { model: "claude-sonnet-5-1", path: /^\/v1\/messages$/, key: { via: "x-api-key", isExamplesKey: true } },
        ],
      },
      { id: "opencode-gateway", turns: [{ model: "gpt-5.5", path: /^\/openai\/v1\/responses$/, key: bearer(true) }] },
    ],
  },
  {
    name: "Gemini CLI",
    examples: [
      {
        id: "gemini-gateway",
        turns: [
          {
            model: "gemini-2.5-pro",
            path: /^\/gemini\/v1beta\/models\/gemini-2\.5-pro:streamGenerateContent/,
            key: { via: "x-goog-api-key", isExamplesKey: true },
          },
        ],
      },
    ],
    // The registry agent is Gemini CLI from this repository's node_modules: a registry index on
    // 127.0.0.1 lists it, and `commandOverride` runs the installed one (nothing is downloaded).
    setup: async () => {
      const gemini = resolveHarnessBinary("gemini");
      const index = await serveRegistryIndex([
        {
          id: "gemini",
          name: "Gemini CLI",
          version: gemini.version,
          description: "Gemini CLI (test index)",
          distribution: { npx: { package: `@google/gemini-cli@${gemini.version}`, args: ["--acp"] } },
        },
      ]);
      return {
        adjust: (instance) => {
          instance["options"] = {
            ...instance["options"],
            registryUrl: index.url,
            commandOverride: gemini.native ? gemini.command : gemini.args[0],
          };
          // One process instead of a relaunched child with more heap, so the test reaps it.
          instance["environment"] = { ...instance["environment"], ...gemini.env };
        },
        close: index.close,
      };
    },
  },
];

/** Serves an ACP Registry index at `http://127.0.0.1:<port>/registry.json`. */
async function serveRegistryIndex(agents: readonly unknown[]): Promise<{ url: string; close: () => Promise<void> }> {
  const body = JSON.stringify({ version: "1.0.0", agents, extensions: [] });
  const server: Server = createServer((request, response) => {
    if (request.url === "/registry.json") response.writeHead(200, { "content-type": "application/json" }).end(body);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/registry.json`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An example's file with the doc's placeholders replaced: the user's home, the endpoint's origin. */
function localized(file: DocExampleFile, root: string, origin: string): { path: string; text: string } {
  let text = file.text.replaceAll(USER_HOME, root);
  for (const placeholder of ENDPOINT_ORIGINS) text = text.replaceAll(placeholder, origin);
  return { path: file.path.replace(USER_HOME, root), text };
}

/** The keys an example's instance environment sets (the doc's `sk-…-replace-me` values). */
function keysOf(instance: Record<string, any>): string[] {
  return Object.values((instance["environment"] ?? {}) as Record<string, string>).filter((value) =>
    KEY_PLACEHOLDER.test(value),
  );
}

/** Live processes whose environment holds `secret`, with their argv. */
function processesHolding(secret: string): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "utf8").includes(secret))
        found.push({ pid: Number(entry), cmdline: readFileSync(`/proc/${entry}/cmdline`, "utf8") });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

function describeRequests(requests: readonly RecordedRequest[]): string {
  return requests
    .map(
      (request) =>
        `${request.method} ${request.path} model=${request.model ?? "-"} user=${JSON.stringify(request.userText?.slice(-60) ?? null)} key=${JSON.stringify(request.apiKey ?? null)}${request.refused ? " refused" : ""}`,
    )
    .join("\n");
}

for (const harness of HARNESSES) {
  describe(`docs/models.md: ${harness.name}`, () => {
    let root: string;
    let home: string;
    let serve: ServeProcess | undefined;
    let endpoint: ServeEndpoint;
    let token: string;
    let projectId: string;
    let closeSetup: (() => Promise<void>) | undefined;
    let cli: (args: string[]) => ReturnType<typeof runCli>;
    const servers = new Map<string, ScriptedModelServer>();
    const keys = new Map<string, string[]>();

    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), "switchyard-models-doc-"));
      home = join(root, ".switchyard");
      const extra = await harness.setup?.();
      closeSetup = extra?.close;
      const providers: Record<string, any>[] = [];
      for (const example of harness.examples) {
        const files = exampleFiles(examples, example.id);
        const config = files.find((file) => file.path === `${USER_HOME}/.switchyard/config.json`);
        if (config === undefined) throw new Error(`Example ${example.id} has no config.json block`);
        const instances = (JSON.parse(config.text) as { providers: Record<string, any>[] }).providers;
        const exampleKeys = instances.flatMap(keysOf);
        keys.set(example.id, exampleKeys);
        const server = await ScriptedModelServer.start(
          exampleKeys.length > 0
            ? { apiKeys: Object.fromEntries(exampleKeys.map((key, index) => [`${example.id}#${index}`, key])) }
            : {},
        );
        servers.set(example.id, server);
        for (const file of files) {
          const { path, text } = localized(file, root, server.url);
          if (file === config) {
            for (const instance of (JSON.parse(text) as { providers: Record<string, any>[] }).providers) {
              extra?.adjust(instance);
              providers.push(instance);
            }
            continue;
          }
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, `${text}\n`);
        }
      }
      mkdirSync(home, { recursive: true });
      writeFileSync(join(home, "config.json"), JSON.stringify({ providers, server: { port: 0 } }, null, 2), {
        mode: 0o600,
      });
      // The user's own homes (~/.codex, ~/.claude, ~/.pi, ~/.config…) are the temporary root.
      const userEnv = {
        HOME: root,
        XDG_CONFIG_HOME: join(root, ".config"),
        XDG_DATA_HOME: join(root, ".local", "share"),
        XDG_STATE_HOME: join(root, ".local", "state"),
        XDG_CACHE_HOME: join(root, ".cache"),
      };
      const workspace = join(root, "work");
      mkdirSync(workspace);
      cli = (args: string[]) => runCli([...args, "--home", home], { env: userEnv });
      const project = await cli(["project", "add", workspace, "--json"]);
      expect(project.code, project.stderr).toBe(0);
      projectId = (JSON.parse(project.stdout) as { id: string }).id;
      token = (JSON.parse((await cli(["token", "issue", "--json"])).stdout) as { token: string }).token;
      serve = ServeProcess.start(home, ["--port", "0"], userEnv);
      endpoint = await serve.ready;
    }, 120_000);

    afterAll(async () => {
      await serve?.terminate();
      for (const server of servers.values()) await server.close();
      await closeSetup?.();
      if (root !== undefined) rmSync(root, { recursive: true, force: true });
    }, 60_000);

    for (const example of harness.examples) {
      it(`${example.id}: a turn reaches the endpoint with the documented key, path and model`, async () => {
        const server = servers.get(example.id)!;
        const client = await connectMcp(endpoint.mcpUrl, token);
        try {
          for (const [index, turn] of example.turns.entries()) {
            const marker = `${example.id}-turn-${index}`;
            const created = await mustCall<{ threads: { thread: { threadId: string } }[] }>(client, "create_threads", {
              projectId,
              threads: [
                {
                  title: marker,
                  prompt: `hello from ${marker} @@reply ${marker} answered`,
                  target: {
                    providerInstanceId: example.id,
                    ...(turn.threadModel !== undefined ? { model: turn.threadModel } : {}),
                  },
                },
              ],
            });
            const threadId = created.threads[0]!.thread.threadId;
            let waited = await mustCall<{ status: string; waitTimedOut: boolean; summary: string | null }>(
              client,
              "t3_thread_wait",
              { threadId, timeoutMs: 45_000 },
            );
            for (let attempt = 0; attempt < 4 && waited.waitTimedOut; attempt++)
              waited = await mustCall(client, "t3_thread_wait", { threadId, timeoutMs: 45_000 });
            expect(waited.status, `${marker}: ${JSON.stringify(waited)}\n${describeRequests(server.requests)}`).toBe(
              "completed",
            );
            expect(waited.summary).toContain(`${marker} answered`);

            const request = server.requests.find(
              (candidate) => !candidate.sideCall && candidate.userText?.includes(marker) === true,
            );
            expect(request, describeRequests(server.requests)).toBeDefined();
            expect(request!.model).toBe(turn.model);
            expect(request!.path).toMatch(turn.path);
            const expectedKey: PresentedApiKey | undefined =
              turn.key === null
                ? undefined
                : { via: turn.key.via, label: turn.key.isExamplesKey ? `${example.id}#0` : null };
            expect(request!.apiKey).toEqual(expectedKey);
            // Nothing the harness sent was refused for a wrong or missing key.
            expect(
              server.requests.filter((candidate) => candidate.refused === true),
              describeRequests(server.requests),
            ).toEqual([]);
          }
        } finally {
          await client.close();
        }

        // The key reached the harness through its environment only: never its argv, the
        // database or the log.
        for (const key of keys.get(example.id)!) {
          const holders = processesHolding(key);
          expect(holders.length, `no live process holds ${example.id}'s key`).toBeGreaterThan(0);
          for (const holder of holders) expect(holder.cmdline).not.toContain(key);
          for (const file of ["switchyard.db", "switchyard.db-wal", join("logs", "switchyard.log")]) {
            const path = join(home, file);
            if (existsSync(path))
              expect(readFileSync(path).includes(key), `${file} holds ${example.id}'s key`).toBe(false);
          }
        }
      }, 240_000);
    }

    // What a user runs after editing the config (here beside the running server, whose first
    // probe cached what the acp-registry driver reads): every example instance is usable, and
    // neither command prints a key.
    it("doctor and providers find every example instance usable and print no key", async () => {
      const doctor = await cli(["doctor", "--json"]);
      const providers = await cli(["providers", "--json"]);
      for (const output of [doctor.stdout, doctor.stderr, providers.stdout, providers.stderr])
        for (const key of [...keys.values()].flat()) expect(output).not.toContain(key);
      const findings = (JSON.parse(doctor.stdout) as { findings: { subject: string; status: string }[] }).findings;
      expect(findings.find((finding) => finding.subject === "config")).toMatchObject({ status: "ok" });
      for (const example of harness.examples)
        expect(
          findings.find((finding) => finding.subject === `provider ${example.id}`),
          doctor.stdout,
        ).toMatchObject({ status: expect.stringMatching(/^(ok|warn)$/) });
      const listed = JSON.parse(providers.stdout) as { id: string; available: boolean; reason: string | null }[];
      for (const example of harness.examples)
        expect(listed.find((provider) => provider.id === example.id)).toMatchObject({ available: true });
    }, 120_000);
  });
}
