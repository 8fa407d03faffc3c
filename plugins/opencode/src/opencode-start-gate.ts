import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Serializes the first server starts of an instance. Every server of an instance shares one
 * sqlite db, and two servers that start together on a new db (or after an OpenCode upgrade)
 * both run its migrations and one dies (`CREATE TABLE workspace` fails). Once a server of this
 * OpenCode version has listened, the db is migrated and servers start side by side.
 */
export class ServerStartGate {
  #chain: Promise<unknown> = Promise.resolve();

  constructor(
    /** The instance's directory, where the marker of a migrated db is kept. */
    private readonly root: string,
  ) {}

  #marker(version: string): string {
    return path.join(this.root, `migrated-${version.replace(/[^A-Za-z0-9._-]/g, "_")}`);
  }

  /** Runs `start`, alone while the db may still need migrating for `version`. */
  async run<T>(version: string, start: () => Promise<T>): Promise<T> {
    if (existsSync(this.#marker(version))) return start();
    const result = this.#chain.then(async () => {
      const value = await start();
      await mkdir(this.root, { recursive: true });
      await writeFile(this.#marker(version), new Date().toISOString());
      return value;
    });
    this.#chain = result.catch(() => undefined);
    return result;
  }
}
