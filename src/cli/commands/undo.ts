// `forkpoint undo <session>`: take back the session's last move (rollback, switch, edit); the world follows.
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { moveOptions, moveResultLines, withMoveOptions, withToolsHint, type MoveFlags } from "../moves.js";
import { withForkpoint } from "../open.js";
import { examples, withUser } from "../options.js";

export function undoCommand(program: Command, cli: Cli): void {
  const command = program
    .command("undo")
    .description("take back the session's last move: back where it left from; tool calls are undone and replayed (--tools)")
    .argument("<session>", "session id");
  withUser(command);
  withMoveOptions(command);
  examples(command, ["forkpoint undo s_abc -u alice", "forkpoint undo s_abc -u alice --tools ./my-tools.js"]);
  command.action((sessionId: string, o: { user: string } & MoveFlags) => {
    const options = moveOptions(cli, o);
    return withForkpoint(cli, "write", async (fp) => {
      const s = await fp.getSession(sessionId, { userId: o.user });
      const r = await withToolsHint(() => s.undo(options));
      cli.out.print(r, () => ["undid the last move", ...moveResultLines(cli.out, r)]);
    });
  });
}
