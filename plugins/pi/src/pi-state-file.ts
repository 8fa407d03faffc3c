import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ExtensionSessionState } from "./pi-extension/switchyard-extension.js";

/**
 * The session's private state file the Switchyard extension reads at every tool call (the
 * runtime mode, a rotated MCP token): a running Pi's environment cannot change, this file can.
 */
export class PiStateFile {
  readonly #dir: string;
  #writes: Promise<void> = Promise.resolve();
  #removed = false;

  /** The state file of a provider session, in its own folder under the plugin's cache. */
  constructor(cacheDir: string, providerSessionId: string) {
    this.#dir = path.join(cacheDir, "pi-sessions", providerSessionId.replace(/[^A-Za-z0-9._-]/g, "_"));
  }

  /** The file's path (handed to Pi in its environment). */
  get path(): string {
    return path.join(this.#dir, "state.json");
  }

  /**
   * Replaces the file with `state()` as it is when this write's turn comes: one write at a
   * time (a rotation may come while a turn switches modes), private (0600), and renamed into
   * place so the extension never reads half a file.
   */
  write(state: () => ExtensionSessionState): Promise<void> {
    const write = async (): Promise<void> => {
      // A write queued behind the session's close must not bring the folder back.
      if (this.#removed) return;
      await mkdir(this.#dir, { recursive: true });
      const temp = `${this.path}.tmp`;
      await writeFile(temp, JSON.stringify(state()), { mode: 0o600 });
      await rename(temp, this.path);
    };
    const next = this.#writes.then(write, write);
    this.#writes = next.catch(() => undefined);
    return next;
  }

  /** Removes the session's folder. */
  async remove(): Promise<void> {
    this.#removed = true;
    await this.#writes;
    await rm(this.#dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
