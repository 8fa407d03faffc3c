import {
  MalformedJsonError,
  parseJsoncDocument,
  removeJsoncProperty,
  setJsoncProperty,
} from "../../util/jsonc-edit.js";
import type {
  ConnectionTarget,
  EntrySpec,
  HarnessConnector,
  HarnessId,
  HarnessSelfCheck,
  TokenDelivery,
  ToolApprovalRule,
} from "../harness-connector.js";

/** What differs between harnesses whose config is a JSON object with a map of MCP servers. */
export interface JsonServersShape {
  readonly id: HarnessId;
  readonly displayName: string;
  readonly tokenDelivery: TokenDelivery;
  /** The keys from the root to the servers map (`["mcpServers"]`, `["mcp"]`). */
  readonly serversPath: readonly string[];
  configFile(target: ConnectionTarget): string;
  entry(spec: EntrySpec): Record<string, unknown>;
  secretContent?(token: string): string;
  tokenFromSecret?(text: string): string | null;
  secretSuffix?: string;
  selfCheck?(target: ConnectionTarget): HarnessSelfCheck;
  checkEnvironment?(target: ConnectionTarget): Record<string, string>;
  toolApproval?: ToolApprovalRule;
}

function entryAt(document: unknown, path: readonly string[]): unknown {
  let node = document;
  for (const key of path) {
    if (node === null || typeof node !== "object" || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** A connector for a JSON(C) config with an MCP servers map, edited in place. */
export function jsonServersConnector(shape: JsonServersShape): HarnessConnector {
  const path = (serverName: string) => [...shape.serversPath, serverName];
  return {
    id: shape.id,
    displayName: shape.displayName,
    tokenDelivery: shape.tokenDelivery,
    configFile: (target) => shape.configFile(target),
    secretContent: (token) => (shape.secretContent ? shape.secretContent(token) : token),
    tokenFromSecret: (text) => (shape.tokenFromSecret ? shape.tokenFromSecret(text) : text.trim() || null),
    secretSuffix: shape.secretSuffix ?? ".token",
    apply(current, spec) {
      const text = current ?? "";
      const document = parseJsoncDocument(text);
      if (document === null || typeof document !== "object" || Array.isArray(document))
        throw new MalformedJsonError("the file is not a JSON object", 0);
      const servers = entryAt(document, shape.serversPath);
      if (servers !== undefined && (servers === null || typeof servers !== "object" || Array.isArray(servers))) {
        throw new MalformedJsonError(`"${shape.serversPath.join(".")}" is not an object`, 0);
      }
      return setJsoncProperty(text, path(spec.serverName), shape.entry(spec));
    },
    remove: (current, spec) => removeJsoncProperty(current, path(spec.serverName)),
    read: (current, spec) => entryAt(parseJsoncDocument(current), path(spec.serverName)),
    expected: (spec) => shape.entry(spec),
    ...(shape.selfCheck ? { selfCheck: shape.selfCheck } : {}),
    ...(shape.checkEnvironment ? { checkEnvironment: shape.checkEnvironment } : {}),
    ...(shape.toolApproval ? { toolApproval: shape.toolApproval } : {}),
  };
}

/** A shell word: single-quoted, with single quotes inside escaped. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Finds the line of a `mcp list` output that names the server. */
export function lineNaming(output: string, serverName: string): string | null {
  // Strip colors and box drawing so the verdict reads plainly.
  const plain = output.replace(/\u001b\[[0-9;]*m/g, "");
  const line = plain
    .split("\n")
    .find((candidate) =>
      new RegExp(`(^|[^A-Za-z0-9_-])${serverName.replace(/[-]/g, "\\-")}([^A-Za-z0-9_-]|$)`).test(candidate),
    );
  return line === undefined ? null : line.replace(/^[\s│┌└●○✓✗•*-]+/u, "").trim();
}
