import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_ROUTES } from "../../src/transports/http/api/index.js";
import { McpLab } from "../support/mcp-lab.js";
import { ApiClient, ok } from "../support/api-client.js";

/** The document, generated from the routes' zod schemas, is valid OpenAPI 3.1 and describes what the server really answers. */
describe("the OpenAPI document", () => {
  let lab: McpLab;
  let document: Record<string, any>;
  let ajv: InstanceType<typeof Ajv2020>;

  beforeAll(async () => {
    lab = await McpLab.start();
    document = await ok(new ApiClient(lab.server.apiUrl, null).get("/openapi.json"));
    ajv = new Ajv2020({ strict: false, allErrors: true });
    // Ajv annotates what it is given; the document the other tests read stays as served.
    ajv.addSchema(structuredClone(document), "switchyard-openapi");
  });
  afterAll(async () => lab.stop());

  /** Checks a body against the schema the document gives an operation's answer with this status. */
  const conforms = (path: string, method: string, status: number, body: unknown) => {
    const responses = document.paths[path][method].responses as Record<
      string,
      { content: Record<string, { schema: { $ref: string } }> }
    >;
    const response = responses[String(status)] ?? responses.default!;
    const validate = ajv.compile({ $ref: `switchyard-openapi${response.content["application/json"]!.schema.$ref}` });
    const valid = validate(body);
    return valid ? "conforms" : ajv.errorsText(validate.errors);
  };

  it("validates as OpenAPI 3.1 and every reference resolves", async () => {
    const validator = new Validator();
    // The validator resolves references in place: give it a copy.
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? null).toBeNull();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(() => validator.resolveRefs()).not.toThrow();
    const refs = JSON.stringify(document).match(/"\$ref":"[^"]+"/g) ?? [];
    for (const ref of refs)
      expect(document.components.schemas, ref).toHaveProperty(ref.slice('"$ref":"#/components/schemas/'.length, -1));
  });

  it("lists every registered route once, with its capability, and the served document is the router's", () => {
    const operations = Object.entries(
      document.paths as Record<string, Record<string, { operationId: string; security?: unknown[] }>>,
    ).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`),
    );
    expect(operations.sort()).toEqual(
      API_ROUTES.map((route) => `${route.method} /api/v1${route.path} ${route.operationId}`).sort(),
    );
    expect(document.paths["/api/v1/openapi.json"].get.security).toEqual([]);
    expect(document.paths["/api/v1/threads"].post["x-switchyard-capability"]).toBe("orchestration:operate");
    expect(document.paths["/api/v1/threads"].post.parameters).toContainEqual(
      expect.objectContaining({ name: "Idempotency-Key", in: "header" }),
    );
    expect(document).toEqual(lab.server.api.openApiDocument());
  });

  it("describes what the server answers, successes and failures alike", async () => {
    const client = new ApiClient(
      lab.server.apiUrl,
      lab.registry.issueClientToken({
        ttlMs: 60_000,
        capabilities: ["orchestration:operate"],
        ceiling: { runtimeMode: "full-access", interactionMode: "default" },
      }).token,
    );
    const created = await client.post("/threads", {
      projectId: lab.projectId,
      threads: [{ prompt: "@@reply described", target: { providerInstanceId: "alpha" } }],
    });
    const threadId = created.body.threads[0].thread.threadId as string;
    const answers: [string, string, { status: number; body: unknown }][] = [
      ["/api/v1/threads", "post", created],
      ["/api/v1/threads/{threadId}/wait", "get", await client.get(`/threads/${threadId}/wait`)],
      ["/api/v1/threads/{threadId}", "get", await client.get(`/threads/${threadId}`, { view: "activity" })],
      ["/api/v1/threads", "get", await client.get("/threads", { projectId: lab.projectId })],
      [
        "/api/v1/threads/{threadId}/messages",
        "post",
        await client.post(`/threads/${threadId}/messages`, { message: "@@reply again", mode: "queue" }),
      ],
      ["/api/v1/threads/{threadId}/stop", "post", await client.post(`/threads/${threadId}/stop`, {})],
      ["/api/v1/threads/{threadId}/resume", "post", await client.post(`/threads/${threadId}/resume`, {})],
      ["/api/v1/threads/{threadId}/interrupt", "post", await client.post(`/threads/${threadId}/interrupt`, {})],
      ["/api/v1/threads/{threadId}/pending-requests", "get", await client.get(`/threads/${threadId}/pending-requests`)],
      ["/api/v1/projects", "get", await client.get("/projects")],
      ["/api/v1/providers", "get", await client.get("/providers")],
      ["/api/v1/usage", "get", await client.get("/usage")],
      ["/api/v1/threads/{threadId}", "get", await client.get("/threads/thread_nope")],
      ["/api/v1/threads", "post", await client.post("/threads", { projectId: lab.projectId, threads: [] })],
      ["/api/v1/projects", "get", await client.with(null).get("/projects")],
    ];
    expect(
      answers.map(([path, method, answer]) => [
        path,
        method,
        answer.status,
        conforms(path, method, answer.status, answer.body),
      ]),
    ).toEqual(answers.map(([path, method, answer]) => [path, method, answer.status, "conforms"]));
    expect(answers.map(([, , answer]) => answer.status)).toEqual([
      201, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 404, 400, 401,
    ]);
  });
});
