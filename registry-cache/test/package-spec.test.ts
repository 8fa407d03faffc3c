import { describe, expect, it } from "vitest";
import { parseNpmPackageSpec, parsePythonPackageSpec } from "../src/package-spec.js";
import { platformKeyFor } from "../src/platform.js";

describe("pinned package specs", () => {
  it.each([
    ["agent@1.2.3", { name: "agent", version: "1.2.3" }],
    ["@scope/agent@0.85.2-preview.22", { name: "@scope/agent", version: "0.85.2-preview.22" }],
  ])("accepts the exact npm spec %s", (raw, expected) => {
    expect(parseNpmPackageSpec(raw)).toMatchObject({ ...expected, spec: raw });
  });

  it.each([
    "agent",
    "agent@latest",
    "agent@^1.2.3",
    "agent@~1.2",
    "agent@1.x",
    "agent@v1.2.3",
    "agent@>=1.0.0",
    "Agent@1.0.0",
    "@scope/agent",
  ])("refuses the npm spec %s", (raw) => {
    expect(typeof parseNpmPackageSpec(raw)).toBe("string");
  });

  it.each([
    ["agent==1.2.3", "agent==1.2.3"],
    ["agent@1.2.3", "agent==1.2.3"],
    ["agent[server]==2.0.0rc1", "agent[server]==2.0.0rc1"],
    ["my_agent==1.0.post1", "my_agent==1.0.post1"],
  ])("accepts the exact Python spec %s", (raw, spec) => {
    expect(parsePythonPackageSpec(raw)).toMatchObject({ spec });
  });

  it.each(["agent", "agent>=1.0", "agent==1.*", "agent~=1.0", "agent@latest", "agent==1.0,<2"])(
    "refuses the Python spec %s",
    (raw) => {
      expect(typeof parsePythonPackageSpec(raw)).toBe("string");
    },
  );
});

describe("platform keys", () => {
  it("maps Node's names to the registry's", () => {
    expect(platformKeyFor("linux", "x64")).toBe("linux-x86_64");
    expect(platformKeyFor("darwin", "arm64")).toBe("darwin-aarch64");
    expect(platformKeyFor("win32", "x64")).toBe("windows-x86_64");
    expect(platformKeyFor("freebsd", "x64")).toBeNull();
    expect(platformKeyFor("linux", "ia32")).toBeNull();
  });
});
