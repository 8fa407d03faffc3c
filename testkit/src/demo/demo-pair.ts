import { createClaudeHome, createCodexHome, createPiHome, type HarnessHome } from "../harness-homes/index.js";

/** A driver the demo can run offline against the scripted model server. */
interface DemoDriver {
  readonly displayName: string;
  home(modelServerUrl: string): Promise<HarnessHome>;
}

/** The drivers `switchyard demo --pair` accepts, with their isolated homes. */
export const DEMO_DRIVERS: Readonly<Record<string, DemoDriver>> = {
  codex: { displayName: "Codex", home: (url) => createCodexHome({ modelServerUrl: url }) },
  pi: { displayName: "Pi", home: (url) => createPiHome({ modelServerUrl: url }) },
  // The SDK's default (tool search on): the Switchyard tools are reachable anyway.
  claude: {
    displayName: "Claude",
    home: (url) => createClaudeHome({ modelServerUrl: url, model: "claude-fake", toolSearch: true }),
  },
};

/** Which driver delegates to which. */
export interface DemoPair {
  readonly parent: string;
  readonly child: string;
}

/** The default pair: a Codex thread delegates to a Pi thread. */
export const DEFAULT_DEMO_PAIR = "codex:pi";

/** Parses `<parent>:<child>` (`claude:pi`); throws an error naming what is accepted. */
export function parseDemoPair(text: string): DemoPair {
  const [parent, child, ...rest] = text.split(":").map((part) => part.trim().toLowerCase());
  const known = Object.keys(DEMO_DRIVERS);
  if (
    parent === undefined ||
    child === undefined ||
    rest.length > 0 ||
    !known.includes(parent) ||
    !known.includes(child) ||
    parent === child
  ) {
    throw new Error(
      `--pair takes <parent>:<child>, two different drivers among ${known.join(", ")} (for example claude:pi); got "${text}".`,
    );
  }
  return { parent, child };
}
