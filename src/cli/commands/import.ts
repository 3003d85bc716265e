// `forkpoint import <file|->`: an exported session written into this database (created if needed), for a new owner.
import { existsSync, readFileSync } from "node:fs";
import { text } from "node:stream/consumers";
import type { Command } from "commander";
import type { SessionExport } from "../../index.js";
import { ValidationError } from "../../models/errors.js";
import type { Cli } from "../cli.js";
import { withForkpoint } from "../open.js";
import { examples } from "../options.js";
import { escapeText } from "../output.js";
import { progressReporter } from "../progress.js";

export function importCommand(program: Command, cli: Cli): void {
  const command = program
    .command("import")
    .description("write an exported session into this database (created if absent), owned by --user")
    .argument("<file>", "the exported JSON document, or - for standard input")
    .requiredOption("-u, --user <userId>", "the new owner");
  examples(command, ["forkpoint --db copy.db import trip.json -u alice", "cat trip.json | forkpoint import - -u bob"]);
  command.action(async (file: string, o: { user: string }) => {
    // Read and parsed before the database is opened: a bad document creates no file.
    let doc: unknown;
    try {
      doc = JSON.parse(file === "-" ? await text(cli.io.stdin) : readFileSync(file, "utf8"));
    } catch (cause) {
      throw new ValidationError(
        "file",
        `cannot read a JSON document from ${file === "-" ? "standard input" : file}: ${(cause as Error).message}`,
      );
    }
    // Into a database file not there yet, the document is first imported into memory: a refused document creates no
    // file. A file is never removed after a failure, as another writer may have opened it meanwhile.
    if (cli.postgresStore === undefined && cli.dbPath !== ":memory:" && !existsSync(cli.dbPath)) await trialImport(doc, o.user);
    await withForkpoint(cli, "create", async (fp) => {
      const progress = progressReporter("import", cli.io.stderr);
      try {
        const s = await fp.importSession(doc as SessionExport, { userId: o.user, onProgress: progress.onProgress });
        cli.out.print({ sessionId: s.id, userId: s.userId }, () => [`imported session ${escapeText(s.id)} for ${escapeText(s.userId)}`]);
      } finally {
        progress.stop();
      }
    });
  });
}

/** Imports `doc` into a database in memory, which is then dropped: throws what the real import would refuse it with. */
async function trialImport(doc: unknown, userId: string): Promise<void> {
  const { openForkpoint } = await import("../../index.js");
  const fp = openForkpoint({ path: ":memory:" });
  try {
    await fp.importSession(doc as SessionExport, { userId });
  } finally {
    await fp.close();
  }
}
