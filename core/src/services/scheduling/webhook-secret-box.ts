import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { inject, injectable } from "tsyringe";
import { type SwitchyardPaths, PathsToken } from "../../config/paths.js";
import { type Logger, LoggerToken } from "../../logging/logger.js";
import { SwitchyardError } from "../../spec/index.js";
import type { SealedSecret } from "../../store/records.js";

const KEY_BYTES = 32;

/** Where the home keeps the key webhook secrets are sealed with. */
export function webhookKeyFile(paths: SwitchyardPaths): string {
  return join(paths.home, "keys", "webhook-secrets.key");
}

/**
 * Webhook signature secrets at rest. A signature can only be checked with the secret itself,
 * so it cannot be stored as a hash like a bearer token; instead it is sealed with AES-256-GCM
 * under a random key kept in `<home>/keys/webhook-secrets.key` (mode 0600, in a 0700 folder,
 * created on first use), with the task id as additional data so a sealed secret cannot be moved
 * to another task. The database and its event log only ever hold the ciphertext: a copy of the
 * database alone reveals no secret. Losing the key file makes the sealed secrets unreadable;
 * signed webhooks then refuse every request until the task gets a new secret.
 */
@injectable()
export class WebhookSecretBox {
  private key: Buffer | null = null;

  constructor(
    @inject(PathsToken) private readonly paths: SwitchyardPaths,
    @inject(LoggerToken) private readonly logger: Logger,
  ) {}

  /** A new random secret (64 hex characters), for `signature: "generate"`. */
  generate(): string {
    return randomBytes(32).toString("hex");
  }

  /** Seals a secret for one task. */
  seal(taskId: string, secret: string): SealedSecret {
    const key = this.loadKey(true)!;
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    cipher.setAAD(Buffer.from(taskId, "utf8"));
    const ciphertext = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
    return {
      v: 1,
      keyId: keyId(key),
      iv: iv.toString("base64url"),
      tag: cipher.getAuthTag().toString("base64url"),
      ciphertext: ciphertext.toString("base64url"),
    };
  }

  /** Opens a task's sealed secret, or explains why it cannot be read. */
  open(taskId: string, sealed: SealedSecret): { secret: string } | { problem: string } {
    const key = this.loadKey(false);
    if (key === null) return { problem: `the key file ${webhookKeyFile(this.paths)} is missing` };
    if (keyId(key) !== sealed.keyId)
      return { problem: `the key file ${webhookKeyFile(this.paths)} is not the one the secret was sealed with` };
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(sealed.iv, "base64url"));
      decipher.setAAD(Buffer.from(taskId, "utf8"));
      decipher.setAuthTag(Buffer.from(sealed.tag, "base64url"));
      return {
        secret: Buffer.concat([
          decipher.update(Buffer.from(sealed.ciphertext, "base64url")),
          decipher.final(),
        ]).toString("utf8"),
      };
    } catch {
      return { problem: "the sealed secret does not open with the key file" };
    }
  }

  /**
   * A keyed digest of a secret, for a command's request (whose hash a receipt keeps): a retry
   * with another secret is told apart from a true retry, and no plain hash of the secret, which
   * could be guessed offline, is stored.
   */
  requestDigest(secret: string): string {
    return createHmac("sha256", this.loadKey(true)!).update("request\u0000").update(secret).digest("base64url");
  }

  /**
   * The key in an unsigned webhook's URL (`/hooks/<task>/<key>`): the URL is that task's only
   * credential, so it must not follow from the task's id, which read-only callers see. Derived
   * from the home's key and the task id (192 bits), so nothing more is stored; a replaced key
   * file gives every unsigned webhook a new URL.
   */
  webhookUrlKey(taskId: string): string {
    return createHmac("sha256", this.loadKey(true)!)
      .update("webhook-url\u0000")
      .update(taskId)
      .digest("base64url")
      .slice(0, 32);
  }

  /** Whether `given` is the task's URL key, compared in constant time. */
  matchesWebhookUrlKey(taskId: string, given: string): boolean {
    const expected = Buffer.from(this.webhookUrlKey(taskId));
    const offered = Buffer.from(given);
    // Equal lengths whatever was sent, so the comparison's time says nothing about the key.
    return (
      timingSafeEqual(offered.length === expected.length ? offered : Buffer.alloc(expected.length), expected) &&
      offered.length === expected.length
    );
  }

  private loadKey(create: boolean): Buffer | null {
    if (this.key !== null) return this.key;
    const file = webhookKeyFile(this.paths);
    let key = this.readKey(file);
    if (key === null) {
      if (!create) return null;
      mkdirSync(join(this.paths.home, "keys"), { recursive: true, mode: 0o700 });
      try {
        // wx: never replace a key another process wrote meanwhile; that one is read below.
        const fd = openSync(file, "wx", 0o600);
        try {
          writeSync(fd, randomBytes(KEY_BYTES));
        } finally {
          closeSync(fd);
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      key = this.readKey(file);
      if (key === null)
        throw new SwitchyardError("internal", `The webhook key file ${file} could not be created.`, { file });
    }
    this.key = key;
    return key;
  }

  private readKey(file: string): Buffer | null {
    let mode: number;
    try {
      mode = statSync(file).mode;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
    if ((mode & 0o077) !== 0) {
      chmodSync(file, 0o600);
      this.logger.warn("webhook key file was readable by others; its mode is now 0600", { file });
    }
    const key = readFileSync(file);
    if (key.length !== KEY_BYTES)
      throw new SwitchyardError(
        "internal",
        `The webhook key file ${file} is not a ${KEY_BYTES}-byte key; restore it from a backup, or remove it and give signed webhooks new secrets.`,
        { file },
      );
    return key;
  }
}

function keyId(key: Buffer): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 16);
}
