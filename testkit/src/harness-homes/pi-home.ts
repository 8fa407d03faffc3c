import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { HarnessHome } from "./sandbox.js";
import { DUMMY_API_KEY, createHarnessSandbox, openAiBaseUrl, serverOrigin } from "./sandbox.js";

/** The wire API Pi's custom provider speaks. */
export type PiApi = "openai-completions" | "openai-responses" | "anthropic-messages";

/** Options for {@link createPiHome}. */
export interface PiHomeOptions {
  /** The scripted model server URL (`server.url`). */
  modelServerUrl: string;
  /** Which API Pi uses (default `openai-completions`; all three work). */
  api?: PiApi;
  /** Provider id in models.json (default `fake`). */
  provider?: string;
  /** Model id (default `fake-model`, or `claude-fake` for `anthropic-messages`). */
  modelId?: string;
  /** Keep Pi's automatic retry on provider errors (default false: a `@@fail` ends the run at once). */
  autoRetry?: boolean;
  /** Extra settings.json entries. */
  settings?: Record<string, unknown>;
}

/** A Pi home: `PI_CODING_AGENT_DIR` with models.json and settings.json. */
export interface PiHome extends HarnessHome {
  harness: "pi";
  /** The `--model` value, `provider/id`. */
  model: string;
  /** The API configured. */
  api: PiApi;
  /** Common arguments: `--offline --model <provider/id>` (add `--no-session`, `--mode rpc` or `-p`). */
  args: string[];
}

/**
 * Creates an isolated `PI_CODING_AGENT_DIR` with a custom provider pointed at the scripted server.
 * Pi has no MCP client; test tool round trips through its `bash` tool (`@@shell`).
 */
export async function createPiHome(options: PiHomeOptions): Promise<PiHome> {
  const sandbox = await createHarnessSandbox("pi");
  const agentDir = join(sandbox.root, "pi-agent");
  await mkdir(agentDir, { recursive: true });
  const api = options.api ?? "openai-completions";
  const provider = options.provider ?? "fake";
  const modelId = options.modelId ?? (api === "anthropic-messages" ? "claude-fake" : "fake-model");
  const providerConfig: Record<string, unknown> = {
    baseUrl:
      api === "anthropic-messages" ? serverOrigin(options.modelServerUrl) : openAiBaseUrl(options.modelServerUrl),
    api,
    // Every provider needs an apiKey or Pi rejects the whole models.json.
    apiKey: DUMMY_API_KEY,
    models: [{ id: modelId }],
  };
  if (api === "openai-completions") {
    providerConfig["compat"] = { supportsDeveloperRole: false, supportsReasoningEffort: false };
  }
  await writeFile(
    join(agentDir, "models.json"),
    JSON.stringify({ providers: { [provider]: providerConfig } }, null, 2),
  );
  const settings = {
    defaultProvider: provider,
    defaultModel: modelId,
    ...(options.autoRetry ? {} : { retry: { enabled: false } }),
    ...options.settings,
  };
  await writeFile(join(agentDir, "settings.json"), JSON.stringify(settings, null, 2));
  const model = `${provider}/${modelId}`;
  return {
    harness: "pi",
    root: sandbox.root,
    home: agentDir,
    cwd: sandbox.cwd,
    env: { ...sandbox.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" },
    cleanup: sandbox.cleanup,
    model,
    api,
    args: ["--offline", "--model", model],
  };
}
