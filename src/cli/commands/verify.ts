// `forkpoint verify`: recompute every hash and checksum of the database (or one session), like git fsck.
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { withForkpoint } from "../open.js";
import { escapeText } from "../output.js";
import { examples } from "../options.js";
import { progressReporter } from "../progress.js";

export function verifyCommand(program: Command, cli: Cli): void {
  const command = program
    .command("verify")
    .description("recompute every hash chain and checksum (the database, or one session), like git fsck; exit 1 on problems")
    .option("-s, --session <sessionId>", "one session only");
  examples(command, ["forkpoint verify", "forkpoint --json verify -s s_abc"]);
  command.action((o: { session?: string }) =>
    withForkpoint(cli, "read", async (fp) => {
      const progress = progressReporter("verify", cli.io.stderr);
      let report;
      try {
        report = await fp.verify({ ...(o.session ? { sessionId: o.session } : {}), onProgress: progress.onProgress });
      } finally {
        progress.stop();
      }
      const { c } = cli.out;
      cli.out.print(report, () => [
        report.ok
          ? c.green(`ok: ${report.sessions} session(s) verified`)
          : c.red(`${report.problems.length} problem(s) in ${report.sessions} session(s)`),
        ...report.problems.map((p) => `  ${p.kind} ${escapeText(p.id)}: ${escapeText(p.detail)}`),
      ]);
      if (!report.ok) process.exitCode = 1;
    }),
  );
}
