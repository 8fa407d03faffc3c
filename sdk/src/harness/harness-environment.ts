import type { ProviderInstanceDescriptor } from "@switchyard/spec";

/** Host variables that never reach a harness: Switchyard's own settings and credentials. @public */
export const HOST_ONLY_ENV_PREFIX = "SWITCHYARD_";

/** What {@link harnessEnvironment} builds from. @public */
export interface HarnessEnvironmentInput {
  /** The instance: its `environment` goes over the host's, its `homePath` into `homeVariable`. */
  readonly instance: ProviderInstanceDescriptor;
  /** The variable that names the harness's home (`CODEX_HOME`, `CLAUDE_CONFIG_DIR`…). */
  readonly homeVariable: string;
  /** The adapter's own values, set last. An `undefined` value removes the variable. */
  readonly own?: Readonly<Record<string, string | undefined>>;
  /** The host environment to start from (default `process.env`). */
  readonly hostEnv?: Readonly<Record<string, string | undefined>>;
}

/**
 * The complete environment of a harness process (spawn it with `extendEnv: false`), built the
 * same way for every provider: the host's variables without Switchyard's own (`SWITCHYARD_*`,
 * which may hold credentials), then the instance's `environment` (how a user points a harness
 * at a gateway), then the instance home in `homeVariable`, then the adapter's own values.
 * @public
 */
export function harnessEnvironment(input: HarnessEnvironmentInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.hostEnv ?? process.env)) {
    if (value !== undefined && !name.startsWith(HOST_ONLY_ENV_PREFIX)) env[name] = value;
  }
  Object.assign(env, input.instance.environment);
  if (input.instance.homePath !== null) env[input.homeVariable] = input.instance.homePath;
  for (const [name, value] of Object.entries(input.own ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}
