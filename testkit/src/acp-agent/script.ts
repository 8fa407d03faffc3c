/**
 * The scripted agent's prompt language: one directive per line, each starting with `@`.
 * Lines without `@` are ignored when the prompt has directives; a prompt without any is
 * answered `echo: <text>`. A `<switchyard_instructions>` block is never read as script.
 *
 * | directive                     | what the agent does                                                     |
 * |-------------------------------|-------------------------------------------------------------------------|
 * | `@say <text>`                 | streams `<text>` as `agent_message_chunk`s (word by word)               |
 * | `@think <text>`               | streams `agent_thought_chunk`s                                          |
 * | `@tool <kind> <title>`        | a `tool_call` (in_progress) then a `tool_call_update` (completed)       |
 * | `@permission <kind> <title>`  | `session/request_permission` (4 options); says `permission: <outcome>`  |
 * | `@ask <json or Q? \| a, b>`     | vendor ask-user-question request; says `answers: <json>` or the outcome |
 * | `@exit-plan <markdown>`       | vendor exit-plan-mode request (`\n` = newline); says `plan: <outcome>`  |
 * | `@plan <a>; <b>`              | a `plan` session update                                                 |
 * | `@elicit <json schema>`       | `elicitation/create` (form); says `elicitation: <json response>`        |
 * | `@mcp <tool> <json args>`     | calls the tool on the first injected MCP server; says `mcp: <text>`     |
 * | `@read <path>`                | `fs/read_text_file`; says `read: <content>` or `read error: <message>`  |
 * | `@write <path> <content>`     | `fs/write_text_file`; says `wrote: <path>` or `write error: <message>`  |
 * | `@sleep <ms>`                 | waits (ends early on cancel)                                            |
 * | `@hold`                       | waits until `session/cancel`                                            |
 * | `@gate <name>`                | waits until `<gateDir>/<name>` exists (or `session/cancel`)             |
 * | `@fail <message>`             | answers the prompt with a JSON-RPC error                                |
 * | `@crash [code]`               | exits the process                                                       |
 * | `@refuse`                     | stops with `refusal`                                                    |
 * | `@stop <reason>`              | stops with the given stop reason                                        |
 * | `@echo-prompt`                | says the whole prompt text it received                                  |
 * | `@report-mcp`                 | says the `mcpServers` it received, as JSON                              |
 * | `@history`                    | says `history: <n> turns; <json of earlier user texts>`                 |
 * | `@pid`                        | says `pid: <process id>`                                                |
 * | `@state`                      | says `mode: <id>; model: <value>`                                       |
 */
export type AcpAgentScriptStep =
  | { readonly op: "say" | "think" | "ask" | "exit-plan" | "plan" | "elicit" | "fail" | "stop"; readonly text: string }
  | { readonly op: "tool" | "permission"; readonly kind: string; readonly title: string }
  | { readonly op: "mcp"; readonly tool: string; readonly args: Record<string, unknown> }
  | { readonly op: "read"; readonly path: string }
  | { readonly op: "write"; readonly path: string; readonly content: string }
  | { readonly op: "sleep"; readonly ms: number }
  | { readonly op: "gate"; readonly name: string }
  | { readonly op: "crash"; readonly code: number }
  | { readonly op: "hold" | "refuse" | "echo-prompt" | "report-mcp" | "history" | "pid" | "state" };

const INSTRUCTIONS_BLOCK = /<switchyard_instructions>[\s\S]*?<\/switchyard_instructions>/g;

/** The prompt without its instructions block. */
export function stripInstructions(prompt: string): string {
  return prompt.replace(INSTRUCTIONS_BLOCK, "").trim();
}

function splitFirst(text: string): [string, string] {
  const match = /^(\S+)\s*([\s\S]*)$/.exec(text.trim());
  return match ? [match[1] as string, match[2] as string] : ["", ""];
}

/** Parses a prompt into steps. */
export function parseAcpAgentScript(prompt: string): AcpAgentScriptStep[] {
  const body = stripInstructions(prompt);
  const steps: AcpAgentScriptStep[] = [];
  for (const rawLine of body.split("\n")) {
    const line = rawLine.trim();
    if (!line.startsWith("@")) continue;
    const [directive, rest] = splitFirst(line.slice(1));
    switch (directive) {
      case "say":
      case "think":
      case "ask":
      case "plan":
      case "elicit":
      case "fail":
      case "stop":
        steps.push({ op: directive, text: rest });
        break;
      case "exit-plan":
        steps.push({ op: "exit-plan", text: rest.replace(/\\n/g, "\n") });
        break;
      case "tool":
      case "permission": {
        const [kind, title] = splitFirst(rest);
        steps.push({ op: directive, kind, title: title || kind });
        break;
      }
      case "mcp": {
        const [tool, json] = splitFirst(rest);
        steps.push({ op: "mcp", tool, args: json ? (JSON.parse(json) as Record<string, unknown>) : {} });
        break;
      }
      case "read":
        steps.push({ op: "read", path: rest });
        break;
      case "write": {
        const [path, content] = splitFirst(rest);
        steps.push({ op: "write", path, content: content.replace(/\\n/g, "\n") });
        break;
      }
      case "sleep":
        steps.push({ op: "sleep", ms: Number(rest) || 0 });
        break;
      case "gate":
        steps.push({ op: "gate", name: rest });
        break;
      case "crash":
        steps.push({ op: "crash", code: rest ? Number(rest) : 3 });
        break;
      case "hold":
      case "refuse":
      case "echo-prompt":
      case "report-mcp":
      case "history":
      case "pid":
      case "state":
        steps.push({ op: directive });
        break;
      default:
        steps.push({ op: "say", text: `unknown directive @${directive}` });
    }
  }
  if (steps.length === 0) steps.push({ op: "say", text: `echo: ${body}` });
  return steps;
}
