import { z } from "zod";
import { ApiFailure } from "./api-errors.js";

type JsonType = "string" | "number" | "integer" | "boolean" | "array" | "object" | "null";

function typesOf(schema: Record<string, unknown> | undefined): JsonType[] {
  if (schema === undefined) return [];
  const type = schema.type;
  if (typeof type === "string") return [type as JsonType];
  if (Array.isArray(type)) return type as JsonType[];
  const union = (schema.anyOf ?? schema.oneOf) as Record<string, unknown>[] | undefined;
  return union === undefined ? [] : union.flatMap((member) => typesOf(member));
}

/** A query value as the type its schema names; text that is not one is left as text, for the schema to refuse by name. */
function convert(text: string, types: readonly JsonType[]): unknown {
  if ((types.includes("integer") || types.includes("number")) && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (types.includes("boolean") && (text === "true" || text === "false")) return text === "true";
  return text;
}

const propertiesCache = new WeakMap<z.ZodObject, Record<string, Record<string, unknown>>>();

function propertiesOf(schema: z.ZodObject): Record<string, Record<string, unknown>> {
  let properties = propertiesCache.get(schema);
  if (properties === undefined) {
    properties =
      (
        z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as {
          properties?: Record<string, Record<string, unknown>>;
        }
      ).properties ?? {};
    propertiesCache.set(schema, properties);
  }
  return properties;
}

/**
 * Reads a query string into the values a query schema expects. Query parameters are text;
 * the shared schemas want numbers, booleans and arrays, so each value is converted by the type
 * the schema's JSON Schema gives its parameter. An array parameter is repeated
 * (`runStatus=idle&runStatus=running`, as OpenAPI's default `form` style sends it) or
 * comma-separated; any other parameter given twice is refused. Unknown parameters are kept,
 * so the strict schema names them.
 */
export function queryValues(params: URLSearchParams, schema: z.ZodObject): Record<string, unknown> {
  const properties = propertiesOf(schema);
  const values: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const name of new Set(params.keys())) {
    if (name === "__proto__" || name === "constructor" || name === "prototype") {
      throw new ApiFailure("invalid_request", `Query parameter "${name}" is not allowed.`, { field: `query.${name}` });
    }
    const all = params.getAll(name);
    const property = Object.prototype.hasOwnProperty.call(properties, name) ? properties[name] : undefined;
    const types = typesOf(property);
    if (types.includes("array")) {
      const itemTypes = typesOf(property!.items as Record<string, unknown> | undefined);
      values[name] = all
        .flatMap((value) => value.split(","))
        .filter((value) => value !== "")
        .map((value) => convert(value, itemTypes));
      continue;
    }
    if (all.length > 1)
      throw new ApiFailure("invalid_request", `Query parameter "${name}" is given ${all.length} times; give it once.`, {
        field: `query.${name}`,
      });
    values[name] = convert(all[0]!, types);
  }
  return { ...values };
}
