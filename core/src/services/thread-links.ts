import { inject, injectable } from "tsyringe";
import { ConfigToken, type SwitchyardConfig } from "../config/config-schema.js";
import { EngineToken, type Engine } from "../engine/ports.js";
import { environmentId } from "../store/settings.js";
import { threadIdOfReference, threadPathSegment } from "./thread-reference.js";
import { threadLink } from "./thread-views.js";

/**
 * How results name a thread of this environment, and how inputs name one back: its
 * `switchyard-thread://` link, and the URL of its page in this server's web UI (for outside
 * clients, which cannot open the link). The web base is `server.webUrl` when configured (a
 * proxy or a public name), else the address the server listens on once it does; with neither
 * (a host used without its HTTP server) results carry no web URL.
 */
@injectable()
export class ThreadLinks {
  /** The origins the server listens on (its loopback address first), once it listens. */
  private boundUrls: readonly string[] = [];

  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    @inject(ConfigToken) private readonly config: SwitchyardConfig,
  ) {}

  get environmentId(): string {
    return environmentId(this.engine.store);
  }

  /** The server's addresses, once it listens (web URLs are built on the first); empty when it stops. */
  setBoundUrls(urls: readonly string[]): void {
    this.boundUrls = [...urls];
  }

  /** Where the web UI is served: the configured public URL, else the bound address; null when unknown. */
  webBase(): string | null {
    return this.config.server.webUrl ?? this.boundUrls[0] ?? null;
  }

  /** A thread's link, as the environment that owns it builds it. */
  link(threadId: string): string {
    return threadLink(this.environmentId, threadId);
  }

  /** The thread's page in this server's web UI, or undefined when no UI address is known. */
  webUrl(threadId: string): string | undefined {
    const base = this.webBase();
    return base === null ? undefined : `${base}/threads/${threadPathSegment(threadId)}`;
  }

  /** The thread id an input names: its id, its link, or its web URL on this server (see threadIdOfReference). */
  threadIdOf(value: string, field: string): string {
    const webBases = [this.config.server.webUrl, ...this.boundUrls].filter((url): url is string => url !== undefined);
    return threadIdOfReference(value, field, { environmentId: this.environmentId, webBases });
  }
}
