// `forkpoint export <session>`: the session's whole tree as one JSON document, to standard output or a file it names.
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { ValidationError } from "../../models/errors.js";
import type { Cli } from "../cli.js";
import { withForkpoint } from "../open.js";
import { examples, withUser } from "../options.js";
import { escapeText, terminalSafeJson } from "../output.js";
import { progressReporter } from "../progress.js";

export function exportCommand(program: Command, cli: Cli): void {
  const command = program
    .command("export")
    .description("write a session's whole tree as one JSON document (to --out, or standard output)")
    .argument("<session>", "session id")
    .option("-o, --out <file>", "the file to write");
  withUser(command);
  examples(command, [
    "forkpoint export s_abc -u alice --out trip.json",
    "forkpoint export s_abc -u alice | forkpoint --db other.db import - -u bob",
  ]);
  command.action((sessionId: string, o: { user: string; out?: string }) =>
    withForkpoint(cli, "read", async (fp) => {
      const progress = progressReporter("export", cli.io.stderr);
      let text: string;
      try {
        text = terminalSafeJson(await fp.exportSession(sessionId, { userId: o.user, onProgress: progress.onProgress }));
      } finally {
        progress.stop();
      }
      if (!o.out) return cli.io.out(text);
      try {
        writeFileSync(o.out, text);
      } catch (cause) {
        throw new ValidationError("out", `cannot write ${o.out}: ${(cause as Error).message}`);
      }
      // Says where it wrote, as an absolute path: a relative one means nothing to a reader elsewhere.
      const file = resolve(o.out);
      const bytes = Buffer.byteLength(text);
      cli.out.print({ exported: { sessionId, file, bytes } }, () => [
        `exported session ${escapeText(sessionId)} to ${escapeText(file)} (${bytes.toLocaleString("en-US")} bytes)`,
      ]);
    }),
  );
}
