/**
 * The harness protocol this driver speaks: the whole prompt on stdin (then stdin closes), the
 * reply on stdout as it is produced, exit code 0 for success. Many command-line agents have a
 * one-shot mode like this (`<agent> -p`); a richer harness gets typed messages here instead.
 */
export interface TemplateHarnessCommand {
  /** The executable. */
  readonly command: string;
  /** Its arguments (never secrets: they are visible to every local user). */
  readonly args: readonly string[];
}

/** What one turn of the harness produced. */
export interface TemplateTurnOutcome {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
}
