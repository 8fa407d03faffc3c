/** What an install is doing right now; passed to `prepare`'s `onProgress`. */
export type InstallProgress =
  /** Another install of the same agent (this or another process) holds the lock. */
  | { readonly phase: "waiting_for_lock"; readonly agentId: string }
  /** Bytes of the archive received so far; `totalBytes` when the server announced a length. */
  | {
      readonly phase: "downloading";
      readonly agentId: string;
      readonly receivedBytes: number;
      readonly totalBytes?: number;
    }
  /** The archive arrived whole; its SHA-256 is being checked against the declared (or recorded) one. */
  | { readonly phase: "verifying"; readonly agentId: string }
  /** Listing, checking and extracting the archive. */
  | { readonly phase: "extracting"; readonly agentId: string }
  /** npm or uv is installing the pinned package. */
  | {
      readonly phase: "installing_package";
      readonly agentId: string;
      readonly packageManager: "npm" | "uv";
      readonly package: string;
    }
  /** The agent is ready (`alreadyInstalled` when nothing had to be done). */
  | { readonly phase: "done"; readonly agentId: string; readonly alreadyInstalled: boolean };

export type ProgressListener = (progress: InstallProgress) => void;

/** A stream a progress bar can draw on (process.stderr, a test buffer…). */
export interface ProgressStream {
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
}

const MIB = 1024 * 1024;

/**
 * One line such as `[##########----------]  50%  12.0/24.0 MiB`, or a byte count when the
 * size is unknown. Pure, so the CLI can also use it in its own rendering.
 */
export function renderProgressBar(receivedBytes: number, totalBytes: number | undefined, width = 24): string {
  if (totalBytes === undefined || totalBytes <= 0) return `${formatMiB(receivedBytes)} MiB`;
  const fraction = Math.min(1, receivedBytes / totalBytes);
  const filled = Math.round(fraction * width);
  const percent = String(Math.floor(fraction * 100)).padStart(3, " ");
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${percent}%  ${formatMiB(receivedBytes)}/${formatMiB(totalBytes)} MiB`;
}

function formatMiB(bytes: number): string {
  return (bytes / MIB).toFixed(1);
}

/**
 * A `prepare` progress listener that draws on `stream`. On a terminal it redraws one line in
 * place (at most every `intervalMs`); elsewhere (CI logs, files) it writes a line per phase
 * and per quarter of the download, so logs stay short.
 */
export function createProgressBar(
  stream: ProgressStream,
  options: { width?: number; intervalMs?: number } = {},
): ProgressListener {
  const width = options.width ?? 24;
  const intervalMs = options.intervalMs ?? 100;
  let lastPhase: InstallProgress["phase"] | undefined;
  let lastDrawAt = 0;
  let lastQuarter = -1;
  let lineOpen = false;

  const endLine = (): void => {
    if (lineOpen) stream.write("\n");
    lineOpen = false;
  };

  return (progress) => {
    const phaseChanged = progress.phase !== lastPhase;
    lastPhase = progress.phase;
    switch (progress.phase) {
      case "downloading": {
        const bar = renderProgressBar(progress.receivedBytes, progress.totalBytes, width);
        if (stream.isTTY === true) {
          const now = Date.now();
          const finished = progress.totalBytes !== undefined && progress.receivedBytes >= progress.totalBytes;
          if (phaseChanged || finished || now - lastDrawAt >= intervalMs) {
            stream.write(`\r${progress.agentId}: downloading ${bar}`);
            lineOpen = true;
            lastDrawAt = now;
          }
        } else {
          const quarter = progress.totalBytes ? Math.floor((4 * progress.receivedBytes) / progress.totalBytes) : 0;
          if (phaseChanged || quarter > lastQuarter) {
            stream.write(`${progress.agentId}: downloading ${bar}\n`);
            lastQuarter = quarter;
          }
        }
        return;
      }
      case "waiting_for_lock":
        if (phaseChanged) stream.write(`${progress.agentId}: waiting for another install to finish\n`);
        return;
      case "verifying":
        // Hashing happened while the bytes arrived; the comparison is instant, so no line of its own.
        return;
      case "extracting":
        endLine();
        stream.write(`${progress.agentId}: checking and extracting the archive\n`);
        return;
      case "installing_package":
        endLine();
        stream.write(`${progress.agentId}: installing ${progress.package} with ${progress.packageManager}\n`);
        return;
      case "done":
        endLine();
        stream.write(`${progress.agentId}: ${progress.alreadyInstalled ? "already installed" : "installed"}\n`);
        return;
    }
  };
}
