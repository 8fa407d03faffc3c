/**
 * What `switchyard doctor` found: one finding per thing it looked at, and a verdict. A finding
 * `fail`s only when something the user configured (or Switchyard itself) cannot work; what
 * works but is worth knowing is a `warn`.
 */

import type { FindingStatus } from "../../services/provider-findings.js";

/** How one check came out (the API's provider findings use the same words). */
export type { FindingStatus };

/** What a finding is about. */
export type FindingArea =
  "node" | "install" | "home" | "config" | "lock" | "database" | "plugin" | "provider" | "port" | "workspaces";

/** One thing doctor looked at. */
export interface DoctorFinding {
  readonly area: FindingArea;
  readonly status: FindingStatus;
  /** What was looked at (`Node.js`, `provider codex`). */
  readonly subject: string;
  /** What was found, in words a person can act on (a `fail` says what to do). */
  readonly detail: string;
  /** The same, as data, for `--json`. */
  readonly data?: Readonly<Record<string, unknown>>;
}

/** Everything doctor found, and what it concludes. */
export interface DoctorReport {
  readonly findings: readonly DoctorFinding[];
  readonly verdict: {
    /** Nothing failed. */
    readonly ok: boolean;
    readonly failures: number;
    readonly warnings: number;
    /** One line: `ok`, `ok, 2 warnings`, `2 problems: …`. */
    readonly summary: string;
  };
}

/** The verdict over a list of findings. */
export function doctorReport(findings: readonly DoctorFinding[]): DoctorReport {
  const failed = findings.filter((finding) => finding.status === "fail");
  const warnings = findings.filter((finding) => finding.status === "warn").length;
  const warned = warnings === 0 ? "" : `, ${warnings} warning${warnings === 1 ? "" : "s"}`;
  const summary =
    failed.length === 0
      ? `ok${warned}`
      : `${failed.length} problem${failed.length === 1 ? "" : "s"}${warned}: ${failed.map((finding) => finding.subject).join(", ")}`;
  return { findings, verdict: { ok: failed.length === 0, failures: failed.length, warnings, summary } };
}
