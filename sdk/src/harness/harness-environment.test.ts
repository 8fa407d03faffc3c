import { describe, expect, it } from "vitest";
import { harnessEnvironment } from "./harness-environment.js";

describe("harnessEnvironment", () => {
  const instance = {
    id: "i",
    driver: "d",
    displayName: "I",
    homePath: "/homes/i",
    environment: { ANTHROPIC_BASE_URL: "http://127.0.0.1:9", PATH: "/instance/bin" },
    customModels: [],
  };

  it("keeps the host's variables but Switchyard's own, lays the instance's over them, then the home and the adapter's values", () => {
    const env = harnessEnvironment({
      instance,
      homeVariable: "CLAUDE_CONFIG_DIR",
      own: { CLIENT: "switchyard", REMOVED: undefined },
      hostEnv: {
        PATH: "/host/bin",
        HOME: "/root",
        SWITCHYARD_TOKEN: "sy_secret",
        REMOVED: "x",
        CLAUDE_CONFIG_DIR: "/host/claude",
      },
    });
    expect(env).toEqual({
      PATH: "/instance/bin",
      HOME: "/root",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
      CLAUDE_CONFIG_DIR: "/homes/i",
      CLIENT: "switchyard",
    });
    expect(
      harnessEnvironment({
        instance: { ...instance, homePath: null },
        homeVariable: "CLAUDE_CONFIG_DIR",
        hostEnv: { CLAUDE_CONFIG_DIR: "/host/claude" },
      }).CLAUDE_CONFIG_DIR,
    ).toBe("/host/claude");
  });
});
