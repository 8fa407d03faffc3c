import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHostProgram } from "../../src/cli/program.js";
import { HOST_COMMAND_NAMES } from "../../src/plugin-host/host-command-names.js";
import { runCli } from "../support/cli.js";

// Command groups a plugin contributes (`switchyard hello …` from a fixture plugin), run as a
// user runs them: the built CLI in a child process on a temporary home whose config lists the
// plugin folder.

const FIXTURES = fileURLToPath(new URL("../fixtures/plugins/", import.meta.url));

describe("commands contributed by plugins", () => {
  let home: string;
  let marker: string;
  const cli = (args: string[]) =>
    runCli(args, { env: { SWITCHYARD_HOME: home, SWITCHYARD_TEST_IMPORT_MARKER: marker } });

  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), "switchyard-contributed-"));
    marker = join(home, "imported.txt");
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({
        plugins: [join(FIXTURES, "commands-good"), join(FIXTURES, "commands-undefined")],
        providers: [
          { id: "g1", driver: "greeter", options: { tone: "warm" } },
          { id: "g2", driver: "greeter", enabled: false },
          { id: "other", driver: "ghostly" },
        ],
      }),
    );
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it("are listed in switchyard --help from the manifest, without importing the plugin", async () => {
    const help = await cli(["--help"]);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^ {2}hello +Greets people \(a fixture command group\)$/m);
    // A manifest that names a command without a description gets a line that says whose it is.
    // (Descriptions wrap at the terminal width, which the longest command name sets: read them unwrapped.)
    expect(help.stdout.replace(/\n {3,}/g, " ")).toMatch(
      /^ {2}ghost +commands from plugin fixture-commands-undefined/m,
    );
    // The built-in acp-registry plugin contributes `registry` the same way.
    expect(help.stdout).toMatch(/^ {2}registry +Find and install ACP Registry agents/m);
    expect(existsSync(marker)).toBe(false);
  });

  it("run with their arguments and options, importing the plugin once", async () => {
    const shouted = await cli(["hello", "greet", "world", "again", "--shout"]);
    expect(shouted.code, shouted.stderr).toBe(0);
    expect(shouted.stdout).toBe("HELLO WORLD AND AGAIN");
    expect(readFileSync(marker, "utf8").trim().split("\n")).toHaveLength(1);

    // --home picks the home, and so the config whose plugins contribute the commands.
    const other = mkdtempSync(join(tmpdir(), "switchyard-contributed-other-"));
    try {
      const elsewhere = await cli(["hello", "greet", "bob", "--home", other]);
      expect(elsewhere.code).toBe(2);
      expect(elsewhere.stderr).toContain("unknown command 'hello'");
      writeFileSync(join(other, "config.json"), JSON.stringify({ plugins: [join(FIXTURES, "commands-good")] }));
      const json = await cli(["hello", "greet", "bob", "--greeting", "hi", "--json", "--home", other]);
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual({
        text: "hi bob",
        args: { who: "bob", more: [] },
        options: { greeting: "hi", json: true },
        home: other,
        configFile: join(other, "config.json"),
        specVersion: "1.0.0",
      });
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it("read the config's instances of the plugin's own drivers only", async () => {
    const listed = await cli(["hello", "instances"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      { id: "g1", driver: "greeter", enabled: true, options: { tone: "warm" } },
      { id: "g2", driver: "greeter", enabled: false, options: {} },
    ]);
  });

  it("end with the exit code the command returns, or the one its error's code means", async () => {
    const returned = await cli(["hello", "fail", "exit"]);
    expect(returned).toMatchObject({ code: 3, stderr: "error: nobody to greet" });
    const typed = await cli(["hello", "fail", "throw"]);
    expect(typed).toMatchObject({ code: 2, stderr: "error: the greeting is malformed" });
    const broken = await cli(["hello", "fail", "anything"]);
    expect(broken).toMatchObject({ code: 1, stderr: "error: something broke" });
  });

  it("get the host's parsing: help, a missing argument, an unknown option", async () => {
    const help = await cli(["hello", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: switchyard hello [options] [command]");
    expect(help.stdout).toMatch(/^ {2}greet \[options\] <who> \[more\.\.\.\] +Greets someone$/m);
    const commandHelp = await cli(["hello", "greet", "--help"]);
    expect(commandHelp.stdout).toContain("--greeting <word>");
    expect(commandHelp.stdout).toContain("--home <dir>");
    const missing = await cli(["hello", "greet"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing required argument 'who'");
    const unknown = await cli(["hello", "greet", "x", "--loud"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown option '--loud'");
    const noCommand = await cli(["hello", "wave"]);
    expect(noCommand.code).toBe(2);
    expect(noCommand.stderr).toContain("unknown command 'wave'");
  });

  it("refuse to run when the plugin's definition breaks its manifest's promise, naming the plugin", async () => {
    const refused = await cli(["ghost", "anything"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^error: Plugin "fixture-commands-undefined" \(.*\) refused: its manifest lists command "ghost" but its definition has no commands\./,
    );
  });
});

describe("host command names", () => {
  it("list every command switchyard has itself, so no plugin can take one", () => {
    const names = buildHostProgram().commands.flatMap((command) => [command.name(), ...command.aliases()]);
    expect(names.length).toBeGreaterThan(5);
    for (const name of names) expect(HOST_COMMAND_NAMES, name).toContain(name);
  });
});
