/**
 * The one logging hook this package needs: warnings (agents dropped from the index, stale
 * index in use). Fields never contain secrets: URLs are passed through `describeUrl`.
 * A pino logger adapts as `{ warn: (message, fields) => log.warn(fields, message) }`.
 */
export interface RegistryLogger {
  warn(message: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: RegistryLogger = { warn: () => undefined };
