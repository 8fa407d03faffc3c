import { createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inject, injectable } from "tsyringe";
import { SwitchyardError } from "../../spec/index.js";
import { type SwitchyardPaths, PathsToken } from "../../config/paths.js";
import { type EventStore, StoreToken } from "../../store/ports.js";
import { type ReachLinkRow, ReachLinksTable } from "../../store/tables/reach-links.js";
import { type Clock, ClockToken } from "../../util/clock.js";
import { environmentNameProblem } from "./environment-name.js";
import { LINK_SECRET_PREFIX } from "./reach-grants.js";
import { normalizeFingerprint } from "./pinned-fetch.js";

/** 127.0.0.0/8, ::1 and localhost: where an http link's secret stays on this machine. */
function isLoopbackHostname(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/** A link as listed: never its secret. */
export interface ReachLink {
  readonly id: string;
  readonly name: string;
  /** The other server's base URL (its MCP endpoint is `<url>/mcp`). */
  readonly url: string;
  readonly createdAt: string;
  /** Whether the secret file is there and is the one `link add` stored. */
  readonly secret: "stored" | "missing" | "changed";
  /** The SHA-256 fingerprint (64 hex digits) of the other server's TLS certificate, pinned by `link add`; null for http links. */
  readonly fingerprint: string | null;
}

interface LinkData {
  url: string;
  /** SHA-256 of the secret: tells a replaced or damaged secret file apart, reveals nothing (the secret is 32 random bytes). */
  secretSha256: string;
  /** The pinned certificate fingerprint of an https link (absent for http). */
  fingerprint?: string;
}

/** Where a link's secret is kept: `<home>/keys/links/<id>.secret`, mode 0600 in 0700 folders. */
export function linkSecretFile(paths: SwitchyardPaths, linkId: string): string {
  return join(paths.home, "keys", "links", `${linkId}.secret`);
}

/** A name already linked: remove that link first, or pick another name. */
function linkNameTaken(name: string): SwitchyardError {
  return new SwitchyardError(
    "conflict",
    `A link named ${name} exists already. Remove it first (switchyard link remove ${name}), or pick another name.`,
    { name },
  );
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * Links: the other environments this one may call, each with the link secret a grant there
 * printed. The secret has to be presented to the other server, so it cannot be kept as a hash;
 * it is kept in a file of its own under the home, readable only by the user (0600 in a 0700
 * folder), and the database holds only the URL and the secret's hash. The secret never goes to a
 * log, argv or the database.
 */
@injectable()
export class ReachLinks {
  private readonly table: ReachLinksTable;

  constructor(
    @inject(StoreToken) private readonly store: EventStore,
    @inject(ClockToken) private readonly clock: Clock,
    @inject(PathsToken) private readonly paths: SwitchyardPaths,
  ) {
    this.table = new ReachLinksTable(store);
  }

  /**
   * Checks a link before anything is stored or contacted: its name, URL (http only to a
   * loopback address: anything else would carry the secret in clear) and secret, and that the
   * name is free. Returns the URL as it would be stored.
   */
  async check(options: { name: string; url: string; secret: string }): Promise<{ url: string; secret: string }> {
    const checked = this.validate(options);
    if ((await this.row(options.name)) !== null) throw linkNameTaken(options.name);
    return checked;
  }

  /** {@link check} without the read: what `add` checks before it writes (the name's UNIQUE index holds the rest). */
  private validate(options: { name: string; url: string; secret: string }): { url: string; secret: string } {
    const problem = environmentNameProblem(options.name);
    if (problem !== null)
      throw new SwitchyardError("invalid_input", `The link name ${JSON.stringify(options.name)} ${problem}.`, {
        name: options.name,
      });
    const url = normalizeUrl(options.url);
    const secret = options.secret.trim();
    if (!secret.startsWith(LINK_SECRET_PREFIX) || secret.length < LINK_SECRET_PREFIX.length + 32 || /\s/.test(secret)) {
      throw new SwitchyardError(
        "invalid_input",
        `That is not a link secret: one starts with ${LINK_SECRET_PREFIX} and is what \`switchyard grant issue\` printed on the other machine.`,
        {},
      );
    }
    return { url, secret };
  }

  /**
   * Stores a link; an https link with the SHA-256 `fingerprint` of the other server's
   * certificate, which every call then requires. A name already linked is a `conflict` (remove
   * it first); nothing is written then.
   */
  add(options: { name: string; url: string; secret: string; fingerprint?: string | null }): ReachLink {
    const { url, secret } = this.validate(options);
    let fingerprint: string | null = null;
    if (options.fingerprint !== undefined && options.fingerprint !== null) {
      fingerprint = normalizeFingerprint(options.fingerprint);
      if (fingerprint === null)
        throw new SwitchyardError(
          "invalid_input",
          `${JSON.stringify(options.fingerprint)} is not a SHA-256 fingerprint: give the 64 hex digits (colons allowed) that \`switchyard serve\` printed on the other machine.`,
          {},
        );
      if (!url.startsWith("https:"))
        throw new SwitchyardError("invalid_input", "A certificate fingerprint goes with an https link only.", { url });
    }
    const id = `link_${randomBytes(8).toString("hex")}`;
    // The file first: a crash after it leaves an unused file, never a link without its secret.
    writeSecretFile(linkSecretFile(this.paths, id), secret);
    const data: LinkData = { url, secretSha256: sha256(secret), ...(fingerprint !== null ? { fingerprint } : {}) };
    const row: ReachLinkRow = { id, name: options.name, data: JSON.stringify(data), created_at: this.clock.nowMs() };
    let inserted: boolean;
    try {
      inserted = this.table.insertNow(row);
    } catch (error) {
      rmSync(linkSecretFile(this.paths, id), { force: true });
      throw error;
    }
    if (!inserted) {
      rmSync(linkSecretFile(this.paths, id), { force: true });
      // Another `link add` of the same name got there first.
      throw linkNameTaken(options.name);
    }
    // The row as written: no read back, so adding stays synchronous.
    return this.linkOf(row);
  }

  /** Every link, oldest first. */
  async list(): Promise<ReachLink[]> {
    return (await this.table.oldestFirst()).map((row) => this.linkOf(row));
  }

  /** One link by name, or null. */
  async get(name: string): Promise<ReachLink | null> {
    const row = await this.row(name);
    return row === null ? null : this.linkOf(row);
  }

  /**
   * The secret to present to a link's server. A missing or replaced file is `conflict`, naming
   * the link, since calling with the wrong secret would only be refused there.
   */
  async secret(name: string): Promise<string> {
    const row = await this.row(name);
    if (row === null)
      throw new SwitchyardError("not_found", `No link is named ${name}. Run \`switchyard link list\` to see them.`, {
        name,
      });
    const data = JSON.parse(row.data) as LinkData;
    const secret = readSecretFile(linkSecretFile(this.paths, row.id));
    if (secret === null || sha256(secret) !== data.secretSha256) {
      throw new SwitchyardError(
        "conflict",
        `The secret of link ${name} is ${secret === null ? "missing" : "not the one stored with it"} (${linkSecretFile(this.paths, row.id)}). Remove the link and add it again with the grant's secret.`,
        { name },
      );
    }
    return secret;
  }

  /** Removes a link and its secret file. An unknown name is `not_found`. */
  async remove(name: string): Promise<ReachLink> {
    const row = await this.row(name);
    if (row === null)
      throw new SwitchyardError("not_found", `No link is named ${name}. Run \`switchyard link list\` to see them.`, {
        name,
      });
    const link = this.linkOf(row);
    // The row first: once it is gone nothing uses the file, and a crash leaves only an unused file.
    // Awaited already, so the write takes its turn (after a command under way) instead of a refusal.
    await this.store.writeAsync(() => this.table.remove(row.id));
    rmSync(linkSecretFile(this.paths, row.id), { force: true });
    return link;
  }

  private async row(name: string): Promise<ReachLinkRow | null> {
    return this.table.byName(name);
  }

  private linkOf(row: ReachLinkRow): ReachLink {
    const data = JSON.parse(row.data) as LinkData;
    const secret = readSecretFile(linkSecretFile(this.paths, row.id));
    return {
      id: row.id,
      name: row.name,
      url: data.url,
      createdAt: new Date(row.created_at).toISOString(),
      secret: secret === null ? "missing" : sha256(secret) === data.secretSha256 ? "stored" : "changed",
      fingerprint: data.fingerprint ?? null,
    };
  }
}

/** An http(s) base URL without credentials, query or fragment, and without a trailing slash. */
function normalizeUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SwitchyardError(
      "invalid_input",
      `${JSON.stringify(value)} is not a URL; give the other server's address, e.g. https://mac.local:7410.`,
      { url: value },
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new SwitchyardError(
      "invalid_input",
      `A link's URL must be http or https, not ${url.protocol.replace(/:$/, "")}.`,
      { url: value },
    );
  // A password in the URL would be a secret in the database.
  if (url.username !== "" || url.password !== "")
    throw new SwitchyardError(
      "invalid_input",
      "A link's URL must not carry a user name or password; the link secret is what authenticates.",
      {},
    );
  // The secret travels in the Authorization header: in clear only to this machine (an SSH tunnel's end).
  if (url.protocol === "http:" && !isLoopbackHostname(url.hostname)) {
    throw new SwitchyardError(
      "invalid_input",
      `An http link must point at this machine (127.0.0.1, an SSH tunnel's local end); ${url.hostname} would see the link secret in clear. Use https (the other server runs serve --host with TLS), or a tunnel.`,
      { url: value },
    );
  }
  if (url.search !== "" || url.hash !== "")
    throw new SwitchyardError(
      "invalid_input",
      `A link's URL is the server's base address, without a query or fragment: ${url.origin}${url.pathname}.`,
      { url: value },
    );
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** Writes a secret file readable only by the user, replacing nothing half-written (temp file, then rename). */
function writeSecretFile(file: string, secret: string): void {
  const folder = join(file, "..");
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  // mkdir leaves an existing folder's mode alone; the keys folder must not be listable by others.
  chmodSync(folder, 0o700);
  chmodSync(join(folder, ".."), 0o700);
  const temp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(temp, secret, { mode: 0o600, flag: "wx" });
  renameSync(temp, file);
}

function readSecretFile(file: string): string | null {
  try {
    // Another user may have been able to read it: tighten it before it is used again.
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    return readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}
