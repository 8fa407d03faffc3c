import { describe, expect, it } from "vitest";
import { entrySource, exportsOf, releaseTagProblem } from "../../spec/test/release-tags.js";

// Every export of the sdk's entries (its own helpers, the harness kit, the shared ACP adapter, and
// the spec it re-exports) says whether it is @public or @experimental: docs/releasing.md,
// "Release tags".

describe.each([
  { entry: "sdk/src/index.ts", sample: ["definePlugin", "TurnLedger", "findHarness", "OrchestrationAdapter"] },
  { entry: "sdk/src/acp/index.ts", sample: ["createAcpDriver", "AcpFlavor", "ConfinedFileSystem", "acpSdk"] },
])("$entry release tags", ({ entry, sample }) => {
  const exported = exportsOf(entrySource(entry));

  it("reads every export of the entry", () => {
    expect(exported.map((entry) => entry.name)).toEqual(expect.arrayContaining(sample));
  });

  it("tags every export @public or @experimental, and says what replaces a @deprecated one", () => {
    expect(exported.map(releaseTagProblem).filter((problem) => problem !== null)).toEqual([]);
  });
});
