import { MalformedJsonError, parseJsoncDocument, setJsoncProperty } from "../../util/jsonc-edit.js";
import type { ConnectionTarget, ToolApprovalRule } from "../harness-connector.js";

function listAt(text: string, path: readonly string[]): string[] | undefined {
  let node: unknown = text.trim() === "" ? {} : parseJsoncDocument(text);
  if (node === null || typeof node !== "object" || Array.isArray(node))
    throw new MalformedJsonError("the file is not a JSON object", 0);
  for (const key of path) {
    if (node === null || typeof node !== "object" || Array.isArray(node))
      throw new MalformedJsonError(`"${path.join(".")}" is not where an object should be`, 0);
    node = (node as Record<string, unknown>)[key];
    if (node === undefined) return undefined;
  }
  if (!Array.isArray(node) || node.some((entry) => typeof entry !== "string"))
    throw new MalformedJsonError(`"${path.join(".")}" is not a list of strings`, 0);
  return node as string[];
}

/**
 * A rule kept in a JSON(C) settings file's list of strings (Claude Code's `permissions.allow`):
 * added once at the end of the list, removed alone, the rest of the file as it was.
 */
export function allowListRule(shape: {
  file(target: ConnectionTarget): string;
  path: readonly string[];
  rule(serverName: string): string;
}): ToolApprovalRule {
  return {
    file: (target) => shape.file(target),
    apply(current, spec) {
      const text = current ?? "";
      const list = listAt(text, shape.path) ?? [];
      const rule = shape.rule(spec.serverName);
      return list.includes(rule) ? text : setJsoncProperty(text, shape.path, [...list, rule]);
    },
    remove(current, spec) {
      const list = listAt(current, shape.path);
      const rule = shape.rule(spec.serverName);
      return list === undefined || !list.includes(rule)
        ? current
        : setJsoncProperty(
            current,
            shape.path,
            list.filter((entry) => entry !== rule),
          );
    },
    present: (current, spec) => (listAt(current, shape.path) ?? []).includes(shape.rule(spec.serverName)),
  };
}
