// `forkpoint recover`: finish moves a crash interrupted (with --tools for their undo/replay), and list unknown calls.
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { withForkpoint } from "../open.js";
import { escapeText, inline } from "../output.js";
import { examples } from "../options.js";

export function recoverCommand(program: Command, cli: Cli): void {
  const command = program
    .command("recover")
    .description("finish moves a crash interrupted (load their tools with --tools) and list tool calls of unknown outcome");
  examples(command, ["forkpoint recover --tools ./my-tools.js", "forkpoint --json recover"]);
  command.action(() =>
    withForkpoint(cli, "write", async (fp) => {
      const r = await fp.recover();
      const { c } = cli.out;
      const json = { ...r, failed: r.failed.map((f) => ({ moveId: f.moveId, error: f.error.message })) };
      cli.out.print(json, () => [
        `resumed ${r.resumed.length} move(s), ${r.waiting.length} waiting, ${r.failed.length} failed; ${r.workspaces.length} workspace restore(s); ${r.unknown.length} call(s) of unknown outcome`,
        ...r.resumed.map(
          (m) => `  resumed: now on branch ${escapeText(m.branch.id)} (${m.undone.length} undone, ${m.replayed.length} replayed)`,
        ),
        ...r.waiting.map((w) =>
          c.yellow(
            `  waiting ${escapeText(w.moveId)}: ${escapeText(w.reason)}${/TOOL_NOT_REGISTERED/.test(w.reason) ? " (load them with --tools)" : ""}`,
          ),
        ),
        ...r.failed.map((f) => c.red(`  failed ${escapeText(f.moveId)}: ${escapeText(f.error.message)}`)),
        ...r.unknown.map((t) => `  unknown ${escapeText(t.id)} ${inline(t.tool)} ${inline(t.args, 60)} on ${escapeText(t.branchId)}`),
        ...(r.unknown.length > 0 ? ["  record what became of each with: forkpoint resolve <session> <call> --succeeded|--failed"] : []),
      ]);
    }),
  );
}
