import { z } from "zod";
import { HOST_VERSION } from "../../../util/host-version.js";
import { DelegateTaskResultSchema } from "../../../contract/delegated-task.js";
import { Target } from "../../../contract/fields.js";
import { PendingRequestView } from "../../../contract/pending-request.js";
import { ThreadRow } from "../../../contract/thread-list.js";
import { RunViewSchema, ThreadShell } from "../../../contract/thread-shell.js";
import { ApiFailureBody } from "./api-errors.js";
import type { ApiRoute } from "./api-route.js";
import { PAGE_SECRET_HEADER } from "./web-session-cookie.js";

const PREFIX = "/api/v1";
const COMPONENT = (id: string) => `#/components/schemas/${id}`;

type JsonSchema = Record<string, unknown>;

function pascal(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The schemas several operations share, named once in the document's components. */
const SHARED_OUTPUTS: readonly [z.ZodType, string][] = [
  [ThreadShell, "ThreadShell"],
  [ThreadRow, "ThreadRow"],
  [RunViewSchema, "Run"],
  [DelegateTaskResultSchema, "DelegatedTask"],
  [PendingRequestView, "PendingRequest"],
  [ApiFailureBody, "Failure"],
];
const SHARED_INPUTS: readonly [z.ZodType, string][] = [[Target, "Target"]];

/** Adds a schema to a registry under `id` unless it is there already; returns the id it has. */
function named(registry: z.core.$ZodRegistry<{ id: string }>, schema: z.ZodType, id: string): string {
  const existing = registry.get(schema);
  if (existing !== undefined) return existing.id;
  registry.add(schema, { id });
  return id;
}

function components(registry: z.core.$ZodRegistry<{ id: string }>, io: "input" | "output"): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(registry, { io, uri: COMPONENT, unrepresentable: "any" }) as {
    schemas: Record<string, JsonSchema>;
  };
  const clean: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _schema, $id: _id, ...rest } = schema;
    clean[id] = rest;
  }
  return clean;
}

function objectProperties(schema: z.ZodObject): { properties: Record<string, JsonSchema>; required: Set<string> } {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  return { properties: json.properties ?? {}, required: new Set(json.required ?? []) };
}

function parameters(route: ApiRoute): JsonSchema[] {
  const list: JsonSchema[] = [];
  if (route.params) {
    const { properties } = objectProperties(route.params);
    for (const [name, schema] of Object.entries(properties)) list.push({ name, in: "path", required: true, schema });
  }
  if (route.query) {
    const { properties, required } = objectProperties(route.query);
    for (const [name, schema] of Object.entries(properties)) {
      const { description, ...rest } = schema;
      list.push({
        name,
        in: "query",
        required: required.has(name),
        ...(typeof description === "string" ? { description } : {}),
        schema: rest,
        ...(rest.type === "array" ? { style: "form", explode: true } : {}),
      });
    }
  }
  if (route.idempotencyKey) {
    list.push({
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description: `The operation's retry key, the same as ${route.idempotencyKey} (in the body or over MCP) and scoped to the token the same way: a retry with the same key returns the same work; a new key makes new work.`,
      schema: { type: "string", minLength: 1, maxLength: 200 },
    });
  }
  return list;
}

/**
 * Generates the OpenAPI 3.1 document of the API from its routes' zod schemas (zod 4's
 * `z.toJSONSchema`, JSON Schema 2020-12, which OpenAPI 3.1 uses as is). Request bodies are
 * the input JSON Schemas, responses the output ones; shared shapes (a thread shell, a task,
 * a pending request, the failure body) are components every operation refers to.
 */
export function buildOpenApiDocument(routes: readonly ApiRoute[]): Record<string, unknown> {
  const inputs = z.registry<{ id: string }>();
  const outputs = z.registry<{ id: string }>();
  for (const [schema, id] of SHARED_INPUTS) named(inputs, schema, id);
  for (const [schema, id] of SHARED_OUTPUTS) named(outputs, schema, id);
  const paths: Record<string, Record<string, unknown>> = {};
  const failure = {
    description: "A typed failure: its code says what was refused, its message what to do.",
    content: { "application/json": { schema: { $ref: COMPONENT("Failure") } } },
  };
  for (const route of routes) {
    const outputId = named(outputs, route.output, route.outputName);
    const bodyId = route.body ? named(inputs, route.body, `${pascal(route.operationId)}Body`) : null;
    const status = String(route.status ?? 200);
    const contentType = route.produces ?? "application/json";
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      ...(route.requires === null ? { security: [] } : { "x-switchyard-capability": route.requires }),
      parameters: parameters(route),
      ...(bodyId !== null
        ? {
            requestBody: {
              required: objectProperties(route.body!).required.size > 0,
              content: { "application/json": { schema: { $ref: COMPONENT(bodyId) } } },
            },
          }
        : {}),
      responses: {
        [status]: { description: route.summary, content: { [contentType]: { schema: { $ref: COMPONENT(outputId) } } } },
        ...(route.requires === null
          ? {}
          : { "401": { ...failure, description: "No valid bearer token (invalid_token)." } }),
        default: failure,
      },
    };
    const path = `${PREFIX}${route.path}`;
    paths[path] = { ...(paths[path] ?? {}), [route.method.toLowerCase()]: operation };
  }
  const inputComponents = components(inputs, "input");
  const outputComponents = components(outputs, "output");
  for (const id of Object.keys(inputComponents))
    if (id in outputComponents)
      throw new Error(`OpenAPI component ${id} is both an input and an output schema; give one another name.`);
  return {
    openapi: "3.1.0",
    info: {
      title: "Switchyard API",
      version: HOST_VERSION,
      description: [
        "The HTTP API for programs (a router, a CI job, a script): projects, threads, messages, waits, stops, delegated tasks, pending requests and providers.",
        "It is served on the same loopback server as /mcp, with the same rules: the Host (and a browser's Origin) must be a loopback name; a bearer token from `switchyard token issue` in the Authorization header, never in the URL.",
        "Operations use the same schemas, failure codes and retry keys as the MCP tools. See docs/api.md.",
      ].join(" "),
    },
    servers: [
      {
        url: "http://127.0.0.1:{port}",
        variables: {
          port: { default: "7410", description: "server.port, or the port `switchyard serve --port` was given" },
        },
      },
    ],
    security: [{ bearerAuth: [] }, { webSession: [], webPageSecret: [] }],
    tags: [...new Set(routes.map((route) => route.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description:
            "A client token (`switchyard token issue`): its verbs, projects, mode ceiling and expiry bound every call.",
        },
        webSession: {
          type: "apiKey",
          in: "cookie",
          name: "switchyard_session_<environmentId>",
          description:
            "The web UI's session cookie (POST /api/v1/ui/session), named for this server's home (GET /health says its environmentId; over TLS the name is __Host-switchyard_session_<environmentId>). It acts as the token it was signed in with, and only together with the session's page secret, from the UI's own origin.",
        },
        webPageSecret: {
          type: "apiKey",
          in: "header",
          name: PAGE_SECRET_HEADER,
          description:
            "The web UI session's page secret: answered once, by the sign-in, to the page that signed in; needed with the cookie on every request (the cookie alone authorises nothing).",
        },
      },
      schemas: { ...inputComponents, ...outputComponents },
    },
  };
}
