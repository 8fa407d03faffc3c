import type { JsonSchema } from "./conversation.js";

/**
 * Builds a value that satisfies a schema by property type, for schema-constrained side calls
 * (Gemini CLI's router wants `{complexity_reasoning: string, complexity_score: integer}`, its
 * next-speaker check wants `next_speaker` from an enum). Accepts JSON Schema (`"integer"`) and
 * Gemini's OpenAPI flavour (`"INTEGER"`). Enums take their first value, numbers their minimum or 1,
 * strings a fixed placeholder, arrays one element when `minItems` asks for it.
 */
export function fillJsonSchema(schema: unknown, depth = 0): unknown {
  if (!schema || typeof schema !== "object" || depth > 12) return null;
  const s = schema as JsonSchema;
  if ("const" in s) return s["const"];
  if (Array.isArray(s["enum"]) && s["enum"].length > 0) return s["enum"][0];
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = s[key];
    if (Array.isArray(options)) {
      const first = options.find(
        (o) => !(o && typeof o === "object" && String((o as JsonSchema)["type"]).toLowerCase() === "null"),
      );
      return fillJsonSchema(first ?? options[0], depth + 1);
    }
  }
  if (Array.isArray(s["allOf"]) && s["allOf"].length > 0) return fillJsonSchema(s["allOf"][0], depth + 1);
  let type = s["type"];
  if (Array.isArray(type)) type = type.find((t) => String(t).toLowerCase() !== "null") ?? type[0];
  if (type === undefined && s["properties"]) type = "object";
  switch (String(type).toLowerCase()) {
    case "object": {
      const out: Record<string, unknown> = {};
      const properties = (s["properties"] ?? {}) as Record<string, unknown>;
      for (const [name, propertySchema] of Object.entries(properties)) {
        out[name] = fillJsonSchema(propertySchema, depth + 1);
      }
      return out;
    }
    case "array": {
      const minItems = typeof s["minItems"] === "number" ? s["minItems"] : 0;
      return Array.from({ length: minItems }, () => fillJsonSchema(s["items"], depth + 1));
    }
    case "integer":
      return typeof s["minimum"] === "number" ? Math.ceil(s["minimum"]) : 1;
    case "number":
      return typeof s["minimum"] === "number" ? s["minimum"] : 1;
    case "boolean":
      return false;
    case "string":
      return "scripted";
    case "null":
      return null;
    default:
      return null;
  }
}
