import type { Command } from "commander";
import { printJson } from "../output.js";
import { withServer, type CommandAccess } from "../server-api.js";
import { threadIdOf } from "../thread-arguments.js";

const READ: CommandAccess = { verbs: ["orchestration:read"], command: "switchyard threads changes" };
const OPERATE: CommandAccess = {
  verbs: ["orchestration:read", "orchestration:operate"],
  command: "switchyard threads",
};

interface Outcome {
  outcome: "applied" | "conflict" | "nothing_to_apply" | "failed" | "discarded" | "kept";
  commit: string | null;
  files: string[];
  message: string | null;
}

interface Decision {
  outcome: Outcome | null;
  pending: boolean;
  workspace: { path: string; branch: string | null; targetPath: string };
}

function decisionText(threadId: string, decision: Decision): string {
  const outcome = decision.outcome;
  if (outcome === null)
    return `Still under way for ${threadId}; \`switchyard threads changes ${threadId}\` shows the outcome once it is there.`;
  switch (outcome.outcome) {
    case "applied":
      return `Applied ${threadId}'s changes to ${decision.workspace.targetPath} (now at ${outcome.commit?.slice(0, 12)}).`;
    case "nothing_to_apply":
      return `Nothing to apply: ${decision.workspace.targetPath} already has all of ${threadId}'s changes.`;
    case "conflict":
      return `Conflict in ${outcome.files.join(", ")}: nothing was changed. ${outcome.message ?? ""}`.trim();
    case "failed":
      return `The apply failed: ${outcome.message ?? "no reason given"}`;
    case "discarded":
      return `Discarded ${threadId}'s worktree ${decision.workspace.path} and its branch.`;
    case "kept":
      return `Removed ${threadId}'s worktree; its branch ${decision.workspace.branch ?? ""} stays for a pull request.`;
  }
}

/**
 * `threads changes|apply|discard <thread>`: a person at a terminal reads a thread's change set
 * (its own worktree), applies it to the workspace it goes back to, or discards it, through the
 * running server's API with a token of the verbs each needs (and the home owner's ceiling).
 */
export function registerThreadChanges(threads: Command): void {
  threads
    .command("changes <thread>")
    .description(
      "Show what a thread in its own worktree changed: files, commits and the diff against the commit it started from",
    )
    .option("--path <path>", "only this file or folder")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (thread: string, options: { path?: string; home?: string; json?: boolean }) => {
      await withServer(options, READ, async (api, host) => {
        const threadId = threadIdOf(host, thread);
        const base = `/threads/${encodeURIComponent(threadId)}/changes`;
        type Page = {
          files: { path: string; status: string }[];
          commits: { commit: string; subject: string }[];
          diff: string;
          nextOffset: number | null;
          workspace: { branch: string | null; path: string; lastOutcome: Outcome | null };
        };
        let page = await api.call<Page>(
          "GET",
          `${base}?maxChars=100000${options.path !== undefined ? `&path=${encodeURIComponent(options.path)}` : ""}`,
        );
        let diff = page.diff;
        while (page.nextOffset !== null) {
          page = await api.call<Page>(
            "GET",
            `${base}?maxChars=100000&offset=${page.nextOffset}${options.path !== undefined ? `&path=${encodeURIComponent(options.path)}` : ""}`,
          );
          diff += page.diff;
        }
        if (options.json) return printJson({ ...page, diff, nextOffset: null });
        process.stderr.write(
          `${page.workspace.path}${page.workspace.branch !== null ? ` (branch ${page.workspace.branch})` : ""}: ${page.files.length} file(s), ${page.commits.length} commit(s)\n`,
        );
        for (const commit of page.commits) process.stderr.write(`  ${commit.commit.slice(0, 12)} ${commit.subject}\n`);
        process.stdout.write(diff);
      });
    });

  threads
    .command("apply <thread>")
    .description(
      "Apply a thread's changes (its own worktree) to the workspace they go back to: merge, or --cherry-pick; a conflict changes nothing",
    )
    .option("--cherry-pick", "replay its commits onto the branch instead of merging")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (thread: string, options: { cherryPick?: boolean; home?: string; json?: boolean }) => {
      await withServer(options, OPERATE, async (api, host) => {
        const threadId = threadIdOf(host, thread);
        const decision = await api.call<Decision>("POST", `/threads/${encodeURIComponent(threadId)}/changes/apply`, {
          method: options.cherryPick ? "cherry-pick" : "merge",
        });
        if (options.json) printJson(decision);
        else process.stdout.write(`${decisionText(threadId, decision)}\n`);
        if (decision.outcome?.outcome === "conflict" || decision.outcome?.outcome === "failed") process.exitCode = 1;
      });
    });

  threads
    .command("discard <thread>")
    .description(
      "Remove a thread's own worktree and its branch without applying them (--keep-branch keeps the branch for a pull request)",
    )
    .option("--keep-branch", "keep the branch")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (thread: string, options: { keepBranch?: boolean; home?: string; json?: boolean }) => {
      await withServer(options, OPERATE, async (api, host) => {
        const threadId = threadIdOf(host, thread);
        const decision = await api.call<Decision>("POST", `/threads/${encodeURIComponent(threadId)}/changes/discard`, {
          keepBranch: options.keepBranch === true,
        });
        if (options.json) printJson(decision);
        else process.stdout.write(`${decisionText(threadId, decision)}\n`);
      });
    });
}
