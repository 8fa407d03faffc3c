// A tiny program the adapter runs as a child process to read or copy a Claude transcript:
// `node claude-transcript-tool.mjs fork|messages <sessionId> <projectDir> [<sdk entry>]`. The SDK's
// `forkSession` and `getSessionMessages` find transcripts through CLAUDE_CONFIG_DIR in the
// environment of the process that calls them, never through `options.env`; a host serves many
// instances with different homes, so each call runs in its own process with the instance's
// environment instead of changing the host's. Prints one JSON value on stdout. Plain JavaScript
// beside `src/` and `dist/`, so the same path works from both. The SDK is not the plugin's
// dependency: the adapter passes the entry module of the one the user installed (else the tool's
// own resolution finds it, as in a checkout).
import { pathToFileURL } from "node:url";

const [operation, sessionId, dir, sdkEntry] = process.argv.slice(2);

async function main() {
  if (sessionId === undefined || dir === undefined)
    throw new Error("usage: claude-transcript-tool fork|messages <sessionId> <projectDir> [<sdk entry module>]");
  const { forkSession, getSessionMessages } = await import(
    sdkEntry !== undefined ? pathToFileURL(sdkEntry).href : "@anthropic-ai/claude-agent-sdk"
  );
  switch (operation) {
    case "fork":
      return forkSession(sessionId, { dir });
    case "messages":
      return getSessionMessages(sessionId, { dir });
    default:
      throw new Error(`unknown operation "${operation ?? ""}"`);
  }
}

main().then(
  (value) => process.stdout.write(`${JSON.stringify(value)}\n`),
  (error) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
