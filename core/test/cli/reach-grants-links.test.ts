import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReachGrants } from "../../src/services/reach/reach-grants.js";
import { ReachLinks, linkSecretFile } from "../../src/services/reach/reach-links.js";
import { runCli } from "../support/cli.js";
import { startTestHost } from "../support/test-host.js";

/** Everything the home's database holds on disk (the file and its WAL), to look for a secret in it. */
function databaseBytes(home: string): string {
  return readdirSync(home)
    .filter(
      (name) =>
        name.endsWith(".db") || name.endsWith(".db-wal") || name.endsWith(".sqlite") || name.endsWith(".sqlite-wal"),
    )
    .map((name) => readFileSync(join(home, name)).toString("latin1"))
    .join("\n");
}

/**
 * `switchyard grant issue|list|revoke` on the machine being reached, `switchyard link
 * add|list|remove` on the one reaching it: explicit grants whose secret is printed once and
 * stored hashed, links whose secret lives in a 0600 file, typed refusals for bad input.
 */
describe("switchyard grant and link", () => {
  let scratch: string;
  let home: string;
  let folder: string;
  let projectId: string;
  const cli = (args: string[], input?: string) =>
    runCli([...args, "--home", home], input === undefined ? {} : { input });

  /** What the server makes of a secret and a call under it, read through the real services. */
  const onServer = async <T>(
    fn: (services: { grants: ReachGrants; links: ReachLinks }) => T | Promise<T>,
  ): Promise<T> => {
    const t = await startTestHost({ home, start: false, providers: [] });
    try {
      // Awaited here, so the host stops after what `fn` reads.
      return await fn({ grants: t.host.container.resolve(ReachGrants), links: t.host.container.resolve(ReachLinks) });
    } finally {
      await t.host.stop();
    }
  };

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "switchyard-cli-reach-"));
    home = join(scratch, "home");
    folder = join(scratch, "repo");
    mkdirSync(folder);
    projectId = (JSON.parse((await cli(["project", "add", folder, "--json"])).stdout) as { id: string }).id;
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("issues a grant whose secret is printed once and stored only hashed; the server holds calls to its verbs, projects and ceiling, and revoking stops the next one", async () => {
    const issued = await cli([
      "grant",
      "issue",
      "--for",
      "linux-box",
      "--projects",
      folder,
      "--verbs",
      "read,delegate",
      "--max-runtime-mode",
      "auto-accept-edits",
      "--ttl",
      "2h",
    ]);
    expect(issued.code, issued.stderr).toBe(0);
    const secret = issued.stdout.trim();
    expect(secret).toMatch(/^sy_link_[A-Za-z0-9_-]{40,}$/);
    expect(issued.stderr).toContain("shown only now");
    expect(issued.stderr).not.toContain(secret);
    // The grant is in the database (so the search below reads the right file), its secret is not.
    expect(databaseBytes(home)).toContain("linux-box");
    expect(databaseBytes(home)).not.toContain(secret);

    const listed = JSON.parse((await cli(["grant", "list", "--json"])).stdout) as {
      id: string;
      for: string;
      verbs: string[];
      projects: unknown;
      maxRuntimeMode: string;
      status: string;
      expiresAt: string;
    }[];
    expect(listed).toHaveLength(1);
    const grant = listed[0]!;
    expect(grant).toMatchObject({
      for: "linux-box",
      verbs: ["read", "delegate"],
      projects: [projectId],
      maxRuntimeMode: "auto-accept-edits",
      status: "active",
    });
    expect(Date.parse(grant.expiresAt) - Date.now()).toBeLessThanOrEqual(7_200_000);
    expect(JSON.stringify(listed)).not.toContain(secret);
    expect((await cli(["grant", "list"])).stdout.split("\n").find((line) => line.includes(grant.id))).toMatch(
      new RegExp(`linux-box\\s+read,delegate\\s+${projectId}\\s+auto-accept-edits\\s+active`),
    );

    await onServer(async ({ grants }) => {
      const resolved = await grants.resolve(secret);
      if (!("grant" in resolved)) throw new Error(`refused: ${resolved.rejection}`);
      expect(resolved.grant.id).toBe(grant.id);
      expect(() =>
        grants.authorize(resolved.grant, { verb: "delegate", projectId, runtimeMode: "auto-accept-edits" }),
      ).not.toThrow();
      expect(() => grants.authorize(resolved.grant, { verb: "send", projectId })).toThrow(
        expect.objectContaining({
          code: "capability_denied",
          details: expect.objectContaining({ verb: "send", allowedVerbs: ["read", "delegate"] }),
        }),
      );
      expect(() => grants.authorize(resolved.grant, { verb: "read", projectId: "project_elsewhere" })).toThrow(
        expect.objectContaining({
          code: "capability_denied",
          details: expect.objectContaining({ allowedProjects: [projectId] }),
        }),
      );
      expect(() =>
        grants.authorize(resolved.grant, { verb: "delegate", projectId, runtimeMode: "full-access" }),
      ).toThrow(expect.objectContaining({ code: "runtime_mode_escalation_denied" }));
      expect(await grants.resolve(`${secret}x`)).toEqual({ rejection: "unknown" });
    });

    const revoked = await cli(["grant", "revoke", grant.id]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`Revoked ${grant.id}`);
    expect(await onServer(({ grants }) => grants.resolve(secret))).toEqual({
      rejection: "revoked",
      grantId: grant.id,
      for: "linux-box",
    });
    expect((await cli(["grant", "revoke", grant.id])).stdout).toContain("already revoked");
    const unknown = await cli(["grant", "revoke", "grant_nope"]);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain("grant list");
    expect((JSON.parse((await cli(["grant", "list", "--json"])).stdout) as { status: string }[])[0]!.status).toBe(
      "revoked",
    );
  });

  it("issues a grant naming the profiles the other environment may use (none by default) and lists them", async () => {
    const issued = await cli([
      "grant",
      "issue",
      "--for",
      "kits",
      "--projects",
      "*",
      "--verbs",
      "delegate",
      "--profiles",
      "reviewer, team/tester",
      "--json",
    ]);
    expect(issued.code, issued.stderr).toBe(0);
    const grant = JSON.parse(issued.stdout) as { id: string; profiles: string[] };
    expect(grant.profiles).toEqual(["reviewer", "team/tester"]);
    const plain = await cli(["grant", "issue", "--for", "no-kits", "--projects", "*", "--verbs", "delegate"]);
    expect(plain.stderr).toContain("profiles: none (--profiles names some)");
    const listed = JSON.parse((await cli(["grant", "list", "--json"])).stdout) as { for: string; profiles: string[] }[];
    expect(listed.find((g) => g.for === "kits")!.profiles).toEqual(["reviewer", "team/tester"]);
    expect(listed.find((g) => g.for === "no-kits")!.profiles).toEqual([]);
    expect((await cli(["grant", "list"])).stdout.split("\n").find((line) => line.includes(grant.id))).toMatch(
      /kits\s+delegate\s+\*\s+approval-required\s+reviewer,team\/tester\s+active/,
    );
  });

  it("refuses a grant without explicit verbs or projects, with an unknown verb, project or mode, or a bad name, and stores nothing", async () => {
    const before = (JSON.parse((await cli(["grant", "list", "--json"])).stdout) as unknown[]).length;
    const cases: [string[], string][] = [
      [["grant", "issue", "--for", "mac", "--projects", "*"], "--verbs"],
      [["grant", "issue", "--for", "mac", "--verbs", "read"], "--projects"],
      [["grant", "issue", "--projects", "*", "--verbs", "read"], "--for"],
      [
        ["grant", "issue", "--for", "mac", "--projects", "*", "--verbs", "read,approve"],
        '"approve" is not a grant verb',
      ],
      [
        ["grant", "issue", "--for", "mac", "--projects", "*", "--verbs", "read", "--max-runtime-mode", "yolo"],
        '"yolo" is not a runtime mode',
      ],
      [
        ["grant", "issue", "--for", "mac", "--projects", join(scratch, "nowhere"), "--verbs", "read"],
        "No project has the id or folder",
      ],
      [["grant", "issue", "--for", "My Mac", "--projects", "*", "--verbs", "read"], "lowercase"],
      [["grant", "issue", "--for", "mac", "--projects", "*", "--verbs", "read", "--ttl", "30"], "no unit"],
      [
        ["grant", "issue", "--for", "mac", "--projects", "*", "--verbs", "read", "--profiles", "reviewer,Bad Kit"],
        '"Bad Kit" is not a profile name',
      ],
    ];
    for (const [args, message] of cases) {
      const outcome = await cli(args);
      expect(outcome.code, args.join(" ")).not.toBe(0);
      expect(outcome.stderr, args.join(" ")).toContain(message);
      expect(outcome.stdout).not.toMatch(/sy_link_/);
    }
    expect((JSON.parse((await cli(["grant", "list", "--json"])).stdout) as unknown[]).length).toBe(before);
  });

  it("adds a link with its secret from stdin or a file into a 0600 file (never the database), lists and removes it", async () => {
    const secret = (await cli(["grant", "issue", "--for", "self", "--projects", "*", "--verbs", "read"])).stdout.trim();
    const added = await cli(
      [
        "link",
        "add",
        "mac",
        "https://mac.local:7410/",
        "--secret",
        "-",
        "--json",
        "--fingerprint",
        "abababababababababababababababababababababababababababababababab",
      ],
      `${secret}\n`,
    );
    expect(added.code, added.stderr).toBe(0);
    const link = JSON.parse(added.stdout) as { id: string; name: string; url: string; secret: string };
    expect(link).toMatchObject({
      name: "mac",
      url: "https://mac.local:7410",
      secret: "stored",
      fingerprint: "ab".repeat(32),
    });
    expect(added.stdout + added.stderr).not.toContain(secret);

    const file = linkSecretFile({ home } as never, link.id);
    expect(readFileSync(file, "utf8")).toBe(secret);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, "keys", "links")).mode & 0o777).toBe(0o700);
    expect(statSync(join(home, "keys")).mode & 0o777).toBe(0o700);
    expect(databaseBytes(home)).not.toContain(secret);
    expect(await onServer(({ links }) => links.secret("mac"))).toBe(secret);

    const fromFile = join(scratch, "secret.txt");
    writeFileSync(fromFile, secret);
    expect((await cli(["link", "add", "box", "http://127.0.0.3:7410", "--secret", `@${fromFile}`])).code).toBe(0);
    const listed = JSON.parse((await cli(["link", "list", "--json"])).stdout) as {
      name: string;
      url: string;
      secret: string;
    }[];
    expect(listed.map((l) => [l.name, l.url, l.secret])).toEqual([
      ["mac", "https://mac.local:7410", "stored"],
      ["box", "http://127.0.0.3:7410", "stored"],
    ]);
    expect(JSON.stringify(listed)).not.toContain(secret);
    expect((await cli(["link", "list"])).stdout).toMatch(/mac\s+https:\/\/mac\.local:7410\s+stored/);

    // The same name again is a conflict, and leaves the first link and its file alone.
    const again = await cli(
      [
        "link",
        "add",
        "mac",
        "https://other:7410",
        "--secret",
        "-",
        "--fingerprint",
        "abababababababababababababababababababababababababababababababab",
      ],
      secret,
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("link remove mac");
    expect(readFileSync(file, "utf8")).toBe(secret);
    expect(readdirSync(join(home, "keys", "links"))).toHaveLength(2);

    // A damaged secret file shows in the listing and is refused before any call.
    writeFileSync(file, "sy_link_tampered");
    expect(
      (JSON.parse((await cli(["link", "list", "--json"])).stdout) as { name: string; secret: string }[]).find(
        (l) => l.name === "mac",
      )!.secret,
    ).toBe("changed");
    await expect(onServer(({ links }) => links.secret("mac"))).rejects.toMatchObject({ code: "conflict" });

    const removed = await cli(["link", "remove", "mac"]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(
      (JSON.parse((await cli(["link", "list", "--json"])).stdout) as { name: string }[]).map((l) => l.name),
    ).toEqual(["box"]);
    const gone = await cli(["link", "remove", "mac"]);
    expect(gone.code).toBe(3);
    expect(gone.stderr).toContain("link list");
  });

  it("refuses a secret on the command line, a bad URL, name or secret, and stores nothing", async () => {
    const secret = (await cli(["grant", "issue", "--for", "self", "--projects", "*", "--verbs", "read"])).stdout.trim();
    const before = (JSON.parse((await cli(["link", "list", "--json"])).stdout) as unknown[]).length;
    const files = readdirSync(join(home, "keys", "links")).length;
    const cases: [string[], string | undefined, string][] = [
      [["link", "add", "mac2", "https://mac.local:7410", "--secret", secret], undefined, "not on the command line"],
      [["link", "add", "mac2", "ftp://mac.local", "--secret", "-"], secret, "must be http or https"],
      [["link", "add", "mac2", "http://mac.local:7410", "--secret", "-"], secret, "would see the link secret in clear"],
      [
        ["link", "add", "mac2", "https://mac.local:7410", "--secret", "-", "--fingerprint", "12:34"],
        secret,
        "not a SHA-256 fingerprint",
      ],
      [["link", "add", "mac2", "https://me:pw@mac.local", "--secret", "-"], secret, "user name or password"],
      [["link", "add", "mac2", "not a url", "--secret", "-"], secret, "is not a URL"],
      [["link", "add", "Mac 2", "https://mac.local", "--secret", "-"], secret, "lowercase"],
      [["link", "add", "mac2", "https://mac.local", "--secret", "-"], "hunter2", "not a link secret"],
      [
        ["link", "add", "mac2", "https://mac.local", "--secret", `@${join(scratch, "missing.txt")}`],
        undefined,
        "Could not read the secret file",
      ],
    ];
    for (const [args, input, message] of cases) {
      const outcome = await cli(args, input);
      expect(outcome.code, args.join(" ")).toBe(2);
      expect(outcome.stderr, args.join(" ")).toContain(message);
      expect(outcome.stderr).not.toContain(secret);
    }
    // An https server that cannot be reached cannot have its certificate pinned: nothing is stored.
    const unreachable = await cli(["link", "add", "mac2", "https://127.0.0.1:9", "--secret", "-"], secret);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain("to pin its TLS certificate");
    expect((JSON.parse((await cli(["link", "list", "--json"])).stdout) as unknown[]).length).toBe(before);
    expect(readdirSync(join(home, "keys", "links"))).toHaveLength(files);
  });
});
