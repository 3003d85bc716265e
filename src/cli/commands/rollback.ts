// `forkpoint rollback <session> <checkpoint>`: a new branch at the checkpoint, the world moved there (or --dry-run).
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { guardedMove, moveOptions, moveResultLines, planLines, withMoveOptions, workspaceLeftLines, type MoveFlags } from "../moves.js";
import { withForkpoint } from "../open.js";
import { examples, withUser } from "../options.js";

export function rollbackCommand(program: Command, cli: Cli): void {
  const command = program
    .command("rollback")
    .description("roll a session back to a checkpoint: a new branch, nothing is lost; tool calls are undone (--tools)")
    .argument("<session>", "session id")
    .argument("<checkpoint>", "checkpoint id")
    .option("--dry-run", "print what the rollback would do, and do nothing");
  withUser(command);
  withMoveOptions(command);
  examples(command, [
    "forkpoint rollback s_abc cp_xyz -u alice --dry-run",
    "forkpoint rollback s_abc cp_xyz -u alice --tools ./my-tools.js",
    "forkpoint rollback s_abc cp_xyz -u alice --leave-unregistered",
  ]);
  command.action((sessionId: string, checkpointId: string, o: { user: string; dryRun?: boolean } & MoveFlags) => {
    const options = moveOptions(cli, o);
    return withForkpoint(cli, o.dryRun ? "read" : "write", async (fp) => {
      const s = await fp.getSession(sessionId, { userId: o.user });
      const from = (await s.info()).currentBranchId;
      if (o.dryRun) {
        const plan = await s.plan({ checkpointId, ...(o.scope ? { scope: o.scope } : {}) });
        const left = await workspaceLeftLines(cli.out, s, plan);
        return cli.out.print(plan, () => [...planLines(cli.out, plan, from, o.leaveUnregistered), ...left]);
      }
      const r = await guardedMove(cli, s, "rollback", { checkpointId }, o, () => s.rollback(checkpointId, options));
      const left = await workspaceLeftLines(cli.out, s, r);
      cli.out.print(r, () => [...moveResultLines(cli.out, r, from), ...left]);
    });
  });
}
