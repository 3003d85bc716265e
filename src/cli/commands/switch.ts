// `forkpoint switch <session> <branch>`: make another branch current, the world moved to its head.
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { guardedMove, moveOptions, moveResultLines, withMoveOptions, workspaceLeftLines, type MoveFlags } from "../moves.js";
import { withForkpoint } from "../open.js";
import { examples, withUser } from "../options.js";

export function switchCommand(program: Command, cli: Cli): void {
  const command = program
    .command("switch")
    .description("make another branch of a session current; tool calls are undone and replayed (--tools)")
    .argument("<session>", "session id")
    .argument("<branch>", "branch id");
  withUser(command);
  withMoveOptions(command);
  examples(command, ["forkpoint switch s_abc br_xyz -u alice", "forkpoint switch s_abc br_xyz -u alice --tools ./my-tools.js"]);
  command.action((sessionId: string, branchId: string, o: { user: string } & MoveFlags) => {
    const options = moveOptions(cli, o);
    return withForkpoint(cli, "write", async (fp) => {
      const s = await fp.getSession(sessionId, { userId: o.user });
      const from = (await s.info()).currentBranchId;
      const r = await guardedMove(cli, s, "switch", { branchId }, o, () => s.switchBranch(branchId, options));
      const left = await workspaceLeftLines(cli.out, s, r);
      cli.out.print(r, () => [...moveResultLines(cli.out, r, from), ...left]);
    });
  });
}
