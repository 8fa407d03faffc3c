import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describeAdapterConformance } from "@switchyard/testkit/conformance";

const pluginDir = fileURLToPath(new URL("..", import.meta.url));

/** What the harness recorded of a turn: the model's whole input is `instructions` plus `text`. */
interface RecordedTurn {
  readonly instructions: string | null;
  readonly text: string;
}

/** Every recorded model input, oldest conversation file first. */
function modelInputs(home: string): string[] {
  const dir = join(home, "conversations");
  return readdirSync(dir)
    .filter((file) => file.endsWith(".json"))
    .sort((a, b) => statSync(join(dir, a)).mtimeMs - statSync(join(dir, b)).mtimeMs)
    .flatMap((file) => (JSON.parse(readFileSync(join(dir, file), "utf8")) as { turns: RecordedTurn[] }).turns)
    .map((turn) => `${turn.instructions ?? ""}\n${turn.text}`);
}

// The testkit's shared suite against the real plugin, loaded through a real host's plugin host,
// driving the bundled stand-in harness as a child process over stdio. For a real agent, replace
// these prompts with ones that make it do each thing (a scripted model server, see the testkit).
describeAdapterConformance({
  name: "template",
  pluginDir,
  driver: "template",
  setup: async () => {
    const root = mkdtempSync(join(tmpdir(), "template-conformance-"));
    const home = join(root, "home");
    const gates = join(root, "gates");
    mkdirSync(gates);
    return {
      instance: { homePath: home },
      script: {
        text: (marker) => `@say ${marker}`,
        shell: (marker) => `@shell echo ${marker}\n@say the shell said ${marker}`,
        hold: (gate, marker) => `@wait ${join(gates, gate)}\n@say ${marker}`,
        release: (gate) => writeFileSync(join(gates, gate), "go"),
        recall: () => "@recall",
        approval: (marker) => `@shell echo ${marker}\n@say approved ${marker}`,
        holdInTool: (marker) => `@shell sleep 60\n@say ${marker}`,
        mcpTool: (tool, args, marker) => `@mcp ${tool} ${JSON.stringify(args)}\n@say ${marker}`,
        countInModelInput: (needle) => {
          const newest = modelInputs(home)
            .filter((input) => input.includes(needle))
            .at(-1);
          return newest === undefined ? 0 : newest.split(needle).length - 1;
        },
      },
      teardown: () => rmSync(root, { recursive: true, force: true }),
    };
  },
});
