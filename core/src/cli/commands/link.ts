import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { ReachLinks } from "../../services/reach/reach-links.js";
import { displayFingerprint, fetchCertificateFingerprint } from "../../services/reach/pinned-fetch.js";
import { withHost } from "../open-host.js";
import { CliError, EXIT, printJson, printTable, style } from "../output.js";

const SECRET_STYLE = { stored: "green", missing: "red", changed: "red" } as const;

/**
 * The link secret, read from stdin (`-`) or a file (`@path`): never from the command line, where
 * other users' `ps` and the shell's history would see it.
 */
function readSecret(source: string): string {
  if (source === "-") return readFileSync(0, "utf8").trim();
  if (source.startsWith("@") && source.length > 1) {
    try {
      return readFileSync(source.slice(1), "utf8").trim();
    } catch (error) {
      throw new CliError(`Could not read the secret file ${source.slice(1)}: ${(error as Error).message}.`, EXIT.usage);
    }
  }
  throw new CliError(
    "Pass the link secret on stdin (--secret -) or in a file (--secret @path), not on the command line, where other users' ps and your shell's history would see it.",
    EXIT.usage,
  );
}

export function registerLink(program: Command): void {
  const link = program
    .command("link")
    .description(
      "Links: other Switchyard environments (machines) this one may call, each with the secret of a grant issued there",
    );
  link
    .command("add <name> <url>")
    .description(
      "Store a link to another server; its secret goes to a file only you can read (never the database, a log or argv)",
    )
    .requiredOption(
      "--secret <source>",
      "the secret `switchyard grant issue` printed there: - to read it from stdin, or @path to read it from a file",
    )
    .option(
      "--fingerprint <sha256>",
      "https: the SHA-256 fingerprint of the other server's certificate (as its serve printed); without it, link add contacts the server and pins the certificate it presents now",
    )
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(
      async (
        name: string,
        url: string,
        options: { secret: string; fingerprint?: string; home?: string; json?: boolean },
      ) => {
        const secret = readSecret(options.secret);
        await withHost(options, async (host) => {
          const links = host.container.resolve(ReachLinks);
          const checked = await links.check({ name, url, secret });
          let fingerprint = options.fingerprint ?? null;
          if (fingerprint === null && checked.url.startsWith("https:")) {
            try {
              fingerprint = await fetchCertificateFingerprint(checked.url);
            } catch (error) {
              throw new CliError(
                `Could not reach ${checked.url} to pin its TLS certificate (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}). Start its server, or pass --fingerprint with the SHA-256 its serve printed.`,
                EXIT.failed,
              );
            }
          }
          const added = links.add({ name, url, secret, fingerprint });
          if (options.json) printJson(added);
          else {
            process.stdout.write(`Linked ${added.name} (${added.id}) at ${added.url}\n`);
            if (added.fingerprint !== null)
              process.stdout.write(
                `TLS certificate SHA-256 ${displayFingerprint(added.fingerprint)}${options.fingerprint === undefined ? " (pinned on first contact: compare it with what the other server's serve printed)" : ""}\n`,
              );
          }
        });
      },
    );
  link
    .command("list")
    .description("List links (never their secrets): name, URL, and whether the secret file is in place")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { home?: string; json?: boolean }) => {
      await withHost(options, async (host) => {
        const links = await host.container.resolve(ReachLinks).list();
        if (options.json) printJson(links);
        else if (links.length === 0)
          process.stdout.write("No links yet. Add one with: switchyard link add <name> <url> --secret -\n");
        else
          printTable(
            ["NAME", "URL", "SECRET", "ID", "ADDED"],
            links.map((l) => [l.name, l.url, style(l.secret, SECRET_STYLE[l.secret]), l.id, l.createdAt]),
          );
      });
    });
  link
    .command("remove <name>")
    .description("Remove a link and its secret file")
    .option("--home <dir>", "Switchyard home")
    .action(async (name: string, options: { home?: string }) => {
      await withHost(options, async (host) => {
        const removed = await host.container.resolve(ReachLinks).remove(name);
        process.stdout.write(`Removed link ${removed.name} (${removed.url})\n`);
      });
    });
}
