/**
 * Every failure this package reports on purpose is a {@link RegistryError} with a stable
 * `reason`. Callers (the core CLI, the ACP Registry provider plugin) branch on `reason`, never
 * on `instanceof`: the error may cross a package boundary where the class identity differs.
 */
export const REGISTRY_ERROR_REASONS = [
  /** A registry or archive URL is not https (http is allowed only for 127.0.0.1/localhost) or carries credentials. */
  "url_not_allowed",
  /** The index could not be fetched and there is no cached copy from the same URL. */
  "index_unavailable",
  /** The index body is larger than the 1 MiB cap. */
  "index_too_large",
  /** The index is not JSON or its envelope (`{version, agents[]}`) is wrong. */
  "invalid_index",
  /** An agent id is not a valid registry id (ids become path segments, so they are checked). */
  "invalid_agent_id",
  /** The agent id is not in the index. */
  "not_found",
  /** The agent has no distribution for this platform (no binary, npx or uvx usable here). */
  "unsupported_platform",
  /** The agent needs npm or uv and that runner is not installed. */
  "runner_unavailable",
  /** npm or uv ran and failed. */
  "package_install_failed",
  /** The archive download failed (HTTP status, network error, timeout). */
  "download_failed",
  /** The connection ended before the promised number of bytes arrived. */
  "download_truncated",
  /** The archive is larger than the download cap. */
  "download_too_large",
  /** The archive's SHA-256 differs from the declared (or previously recorded) one. */
  "checksum_mismatch",
  /** The archive format is not one of tar.gz, tgz, tar.bz2, tbz2, zip or a raw binary. */
  "unsupported_archive",
  /** The archive is corrupt or truncated, or its content does not match its extension. */
  "broken_archive",
  /** An archive entry would escape the install root or is a device/special file. */
  "unsafe_archive_entry",
  /** The archive expands to more bytes or entries than allowed. */
  "archive_too_large",
  /** The declared `cmd` is missing from the install, escapes it, or is not a regular file. */
  "command_not_found",
  /** A local command override does not exist or is not executable. */
  "invalid_command_override",
  /** The agent is supported but not installed yet. */
  "not_prepared",
  /** Uninstall was refused because a running instance uses the agent. */
  "in_use",
  /** Another install of the same agent held the lock for too long. */
  "lock_timeout",
  /** The caller aborted the operation. */
  "aborted",
] as const;

/** Stable machine-readable failure code carried by every {@link RegistryError}. */
export type RegistryErrorReason = (typeof REGISTRY_ERROR_REASONS)[number];

/** Extra, non-secret facts about a failure (the offending value, expected vs actual, …). */
export type RegistryErrorDetails = Readonly<Record<string, unknown>>;

/** A typed failure of the registry catalog or installer. */
export class RegistryError extends Error {
  override readonly name = "RegistryError";
  /** Stable code; see {@link REGISTRY_ERROR_REASONS}. */
  readonly reason: RegistryErrorReason;
  /** Same value as {@link reason}; the project-wide convention is that errors carry a `code`. */
  readonly code: RegistryErrorReason;
  /** The offending values, safe to print (never secrets). */
  readonly details: RegistryErrorDetails;

  constructor(
    reason: RegistryErrorReason,
    message: string,
    options: { details?: RegistryErrorDetails; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.reason = reason;
    this.code = reason;
    this.details = options.details ?? {};
  }

  /** The shape `--json` output prints. */
  toJSON(): { name: string; reason: RegistryErrorReason; message: string; details: RegistryErrorDetails } {
    return { name: this.name, reason: this.reason, message: this.message, details: this.details };
  }
}

/**
 * Recognises a RegistryError by shape, so it also works across duplicated copies of this
 * package (the plugin host may load a second copy).
 */
export function isRegistryError(value: unknown, reason?: RegistryErrorReason): value is RegistryError {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as { name?: unknown; reason?: unknown };
  if (candidate.name !== "RegistryError" || typeof candidate.reason !== "string") return false;
  return reason === undefined || candidate.reason === reason;
}

/** A short, single-line description of any thrown value, for wrapping foreign errors. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return `${error.message}${cause}`;
  }
  return String(error);
}
