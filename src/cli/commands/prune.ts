// `forkpoint prune`: delete expired checkpoints and unreferenced data, then vacuum.
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { withForkpoint } from "../open.js";
import { examples } from "../options.js";
import { progressReporter } from "../progress.js";

export function pruneCommand(program: Command, cli: Cli): void {
  const command = program
    .command("prune")
    .description("delete expired checkpoints and unreferenced data, then vacuum (SQLite gives the space back; PostgreSQL reuses it)")
    .option("-s, --session <sessionId>", "one session's checkpoints and journals only")
    .option("--no-vacuum", "do not rebuild the file");
  examples(command, ["forkpoint prune", "forkpoint prune --no-vacuum -s s_abc"]);
  command.action((o: { session?: string; vacuum: boolean }) =>
    withForkpoint(cli, "write", async (fp) => {
      const progress = progressReporter("prune", cli.io.stderr);
      let r;
      try {
        r = await fp.prune({ ...(o.session ? { sessionId: o.session } : {}), vacuum: o.vacuum, onProgress: progress.onProgress });
      } finally {
        progress.stop();
      }
      cli.out.print(r, () => [
        `deleted ${r.checkpoints} expired checkpoint(s), ${r.snapshots} unreferenced state(s), ${r.moves} finished move journal(s)`,
        `size ${(r.bytesBefore / 1024).toFixed(0)} KiB -> ${(r.bytesAfter / 1024).toFixed(0)} KiB`,
      ]);
    }),
  );
}
