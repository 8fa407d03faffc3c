import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiClient, FailureBody } from "../support/api-client.js";
import { apiClientFor, startApiLab } from "../support/api-lab.js";
import type { McpLab } from "../support/mcp-lab.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "../support/test-host.js";

const fixtures = fileURLToPath(new URL("../fixtures/plugins/", import.meta.url));

/**
 * Routes a plugin contributes, mounted by the server under /api/v1/plugins/<plugin>/: the
 * router in front of them is the built-in routes' own (tokens, scopes, failure shape), the
 * plugin's validators run before its handler, its typed errors keep their meaning, and a
 * plugin with a malformed route gets none mounted while the others work.
 */
describe("plugin API routes", () => {
  let lab: McpLab;
  let reader: ApiClient;
  let operator: ApiClient;

  beforeAll(async () => {
    ({ lab, client: reader } = await startApiLab(
      { capabilities: ["orchestration:read"] },
      {
        plugins: [
          SCRIPTED_PROVIDER_PLUGIN_DIR,
          `${fixtures}routes-good`,
          `${fixtures}routes-malformed`,
          `${fixtures}routes-clash`,
        ],
      },
    ));
    operator = apiClientFor(lab, { capabilities: ["orchestration:operate"] });
  });
  afterAll(async () => lab.stop());

  it("mounts a plugin's routes under its name (scope and plugin- prefix dropped) and hands the handler validated parts, the caller and the context", async () => {
    const answer = await reader.get("/plugins/routes-good/echo/hi", { times: "2" });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toEqual({
      words: ["hi", "hi"],
      scopes: ["orchestration:read"],
      home: lab.t.home,
      specVersion: "1.0.0",
    });
    const created = await operator.post("/plugins/routes-good/notes");
    expect([created.status, created.body]).toEqual([201, { notes: 1 }]);
  });

  it("refuses what the route's schemas refuse, a scope the token lacks, and no token, before the handler runs", async () => {
    const bad = await reader.get<FailureBody>("/plugins/routes-good/echo/hi", { times: "9" });
    expect([bad.status, bad.body.error.code, bad.body.error.details.field]).toEqual([
      400,
      "invalid_request",
      "query.times",
    ]);
    const unknownQuery = await reader.get<FailureBody>("/plugins/routes-good/echo/hi", { loud: "yes" });
    expect([unknownQuery.status, unknownQuery.body.error.details.field]).toEqual([400, "query.loud"]);
    const unexpectedBody = await operator.post<FailureBody>("/plugins/routes-good/notes", { note: "x" });
    expect([unexpectedBody.status, unexpectedBody.body.error.code, unexpectedBody.body.error.details.field]).toEqual([
      400,
      "invalid_request",
      "body",
    ]);
    const readOnly = await reader.post<FailureBody>("/plugins/routes-good/notes");
    expect([readOnly.status, readOnly.body.error.code]).toEqual([403, "capability_denied"]);
    const anonymous = await reader.with(null).get<FailureBody>("/plugins/routes-good/echo/hi");
    expect([anonymous.status, anonymous.body.error.code]).toEqual([401, "invalid_token"]);
    // Nothing was counted by the refused calls.
    expect((await operator.post("/plugins/routes-good/notes")).body).toEqual({ notes: 2 });
  });

  it.each([
    ["invalid_input", 400, "invalid_request"],
    ["not_found", 404, "not_found"],
    ["conflict", 409, "conflict"],
    ["timeout", 502, "plugin_failed"],
    ["plain", 500, "orchestration_error"],
  ])("answers a handler's %s error with %i %s", async (thrown, status, code) => {
    const answer = await operator.post<FailureBody>("/plugins/routes-good/fail", { code: thrown });
    expect([answer.status, answer.body.error.code]).toEqual([status, code]);
    if (thrown !== "plain")
      expect(answer.body.error.details).toMatchObject({ asked: thrown, plugin: "@fixtures/plugin-routes-good" });
    if (code === "plugin_failed") expect(answer.body.error.details.code).toBe(thrown);
  });

  it("mounts none of a plugin's routes when one is malformed or its operation id is taken, and lists only mounted ones in the OpenAPI document", async () => {
    const fine = await reader.get<FailureBody>("/plugins/routes-malformed/fine");
    expect([fine.status, fine.body.error.code]).toEqual([404, "route_not_found"]);
    // Its id would have been the built-in listProjects: the server started anyway, without it.
    const clash = await reader.get<FailureBody>("/plugins/list/projects");
    expect([clash.status, clash.body.error.code]).toEqual([404, "route_not_found"]);
    expect((await reader.get("/projects")).status).toBe(200);
    const document = await reader.get("/openapi.json");
    const paths = Object.keys(document.body.paths as Record<string, unknown>).filter((path) =>
      path.startsWith("/api/v1/plugins/"),
    );
    expect(paths.sort()).toEqual([
      "/api/v1/plugins/routes-good/echo/{word}",
      "/api/v1/plugins/routes-good/fail",
      "/api/v1/plugins/routes-good/notes",
    ]);
  });
});
