// At least 5,000 malformed inputs against a real server: tool calls through the MCP SDK client
// whose arguments the tool's own published schema rejects (or that name things that do not
// exist), and raw HTTP requests broken below the tool level. Every one must get a typed error:
// a tool error result carrying one of the contract's failure codes (an unexpected
// `orchestration_error` does not count: it means the server failed on the input), or for raw
// HTTP a 4xx (or a JSON-RPC error) whose JSON body says what went wrong. A success, a 5xx, a
// body that is not JSON, a dropped connection or no answer count against the figure.
//
// The random part of the inputs comes from the run's seed (reliability/lib/seed.js): a new one
// from the clock each run, printed at the start of the run and in this scenario's lines, so runs
// over time try different inputs. To replay a run that missed, give it its seed:
//   node reliability/run.js malformed --seed N      (or RELIABILITY_SEED=N)
import { addProject, issueToken } from "../lib/cli.js";
import { scalar } from "../lib/db.js";
import { FAILURE_CODES, callTool, connect, jsonRpcMessage, rawRequest } from "../lib/mcp.js";
import { malformedHttpRequests, malformedToolCalls, unknownIdCalls } from "../lib/malformed-inputs.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "../lib/paths.js";
import { SwitchyardServer, writeConfig } from "../lib/server.js";
import { mapConcurrent } from "../lib/wait.js";

const TOOL_CALLS = 3_600;
const UNKNOWN_ID_ROUNDS = 25;
const HTTP_REQUESTS = 1_300;
const CONCURRENCY = 8;

/** Whether a raw HTTP answer is a typed error: 4xx, or a JSON-RPC error, with a JSON body naming it. */
function typedHttpError(answer) {
  if (answer.status === 0 || answer.status >= 500) return false;
  const message = jsonRpcMessage(answer.body);
  const messages = Array.isArray(message) ? message : [message];
  if (messages.length === 0 || messages.some((m) => m === null || typeof m !== "object")) return false;
  return messages.every((m) => {
    if (m.error && typeof m.error === "object")
      return Number.isInteger(m.error.code) && typeof m.error.message === "string" && m.error.message.length > 0;
    if (typeof m.error === "string") return answer.status >= 400 && answer.status < 500;
    // A tool result is typed only when it is the contract's failure.
    if (m.result?.isError) {
      try {
        const { error } = JSON.parse(m.result.content?.[0]?.text ?? "");
        return FAILURE_CODES.has(error?.code) && error.code !== "orchestration_error";
      } catch {
        return false;
      }
    }
    return false;
  });
}

export default {
  name: "malformed",
  title: "at least 5,000 malformed inputs",
  timeoutMs: 240_000,
  async run(run, report) {
    const seed = run.seed;
    report.note(`seed ${seed} (replay: node reliability/run.js malformed --seed ${seed})`);
    const home = run.newHome("malformed");
    writeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "alpha", driver: "scripted", options: {} }],
    });
    await addProject(home, run.dir("malformed-workspace"));
    const { token } = await issueToken(run, home);
    const server = await SwitchyardServer.start(run, home, { logLevel: "info" });
    const clients = await Promise.all(Array.from({ length: CONCURRENCY }, () => connect(server.mcpUrl, token)));
    const { tools } = await clients[0].listTools();

    const toolCalls = [...malformedToolCalls(tools, TOOL_CALLS, seed), ...unknownIdCalls(UNKNOWN_ID_ROUNDS)];
    const failures = [];
    let namingTheField = 0;
    let schemaCalls = 0;
    const toolOutcomes = await mapConcurrent(toolCalls, CONCURRENCY, async (call, index) => {
      let outcome;
      try {
        outcome = await callTool(clients[index % CONCURRENCY], call.name, call.args, { timeoutMs: 30_000 });
      } catch (error) {
        failures.push(`${call.name} ${JSON.stringify(call.args).slice(0, 120)}: threw ${error.message.slice(0, 160)}`);
        return false;
      }
      const typed = !outcome.ok && FAILURE_CODES.has(outcome.code) && outcome.code !== "orchestration_error";
      if (!typed)
        failures.push(
          `${call.name} ${JSON.stringify(call.args).slice(0, 120)}: ${outcome.ok ? "accepted" : `${outcome.code}: ${outcome.message.slice(0, 160)}`}`,
        );
      if (typed && outcome.code === "invalid_request") {
        schemaCalls += 1;
        if (call.field === "" || outcome.message.includes(call.field)) namingTheField += 1;
      }
      return typed;
    });
    for (const client of clients) await client.close().catch(() => undefined);

    const httpRequests = malformedHttpRequests(HTTP_REQUESTS, seed, token);
    const statuses = {};
    const httpOutcomes = await mapConcurrent(httpRequests, CONCURRENCY, async (request) => {
      const answer = await rawRequest(`${server.url}${request.path}`, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        timeoutMs: 30_000,
      });
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      const typed = typedHttpError(answer);
      if (!typed)
        failures.push(
          `HTTP ${request.label} ${String(request.body ?? "").slice(0, 80)}: ${answer.status} ${answer.error ?? answer.body.slice(0, 160)}`,
        );
      return typed;
    });

    const health = await rawRequest(`${server.url}/health`, { method: "GET" });
    const alive = server.alive && health.status === 200;
    await server.stop();
    const threads = scalar(home, "SELECT COUNT(*) FROM threads");

    const total = toolOutcomes.length + httpOutcomes.length;
    const typed = toolOutcomes.filter(Boolean).length + httpOutcomes.filter(Boolean).length;
    for (const failure of failures.slice(0, process.env.RELIABILITY_VERBOSE ? 1000 : 8))
      report.note(`not a typed error: ${failure}`);
    if (failures.length > 8) report.note(`… and ${failures.length - 8} more`);
    report.note(
      `${toolOutcomes.length} tool calls (seed ${seed}), ${httpOutcomes.length} raw HTTP requests (statuses ${Object.entries(
        statuses,
      )
        .map(([s, n]) => `${s}×${n}`)
        .join(", ")})`,
    );
    report.note(`${namingTheField} of ${schemaCalls} invalid_request messages name the field that was wrong`);
    report.note(
      `server ${alive ? "still answered /health" : "DID NOT answer /health"} afterwards; ${threads} thread(s) were created by malformed input`,
    );
    report.figure(
      "malformed inputs: typed errors",
      `${((100 * typed) / total).toFixed(2)}% of ${total} (seed ${seed})`,
      "goal 100% of at least 5000",
      typed === total && total >= 5_000 && alive && threads === 0,
    );
  },
};
