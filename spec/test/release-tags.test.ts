import { describe, expect, it } from "vitest";
import { entrySource, exportsOf, releaseTagProblem } from "./release-tags.js";

// Every export of @switchyard/spec (also reached as @switchyard/core/spec and through the sdk)
// says in its TSDoc whether it is @public or @experimental, and a @deprecated one what replaces
// it: docs/releasing.md, "Release tags".

describe("@switchyard/spec release tags", () => {
  const exported = exportsOf(entrySource("spec/src/index.ts"));

  it("reads every export of the entry, versioned names and current aliases alike", () => {
    const names = exported.map((entry) => entry.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "OrchestrationAdapterV1",
        "OrchestrationAdapter",
        "decodeCapabilities",
        "SwitchyardError",
        "ERROR_CODES",
        "SPEC_SEMVER",
      ]),
    );
    expect(exported.length).toBeGreaterThan(150);
  });

  it("tags every export @public or @experimental, and says what replaces a @deprecated one", () => {
    expect(exported.map(releaseTagProblem).filter((problem) => problem !== null)).toEqual([]);
  });
});
