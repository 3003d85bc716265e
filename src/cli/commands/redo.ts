// `forkpoint redo <session>`: do the move the last undo took back again; the world follows.
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { moveOptions, moveResultLines, withMoveOptions, withToolsHint, type MoveFlags } from "../moves.js";
import { withForkpoint } from "../open.js";
import { examples, withUser } from "../options.js";

export function redoCommand(program: Command, cli: Cli): void {
  const command = program
    .command("redo")
    .description("do the move the last undo took back again; tool calls are undone and replayed (--tools)")
    .argument("<session>", "session id");
  withUser(command);
  withMoveOptions(command);
  examples(command, ["forkpoint redo s_abc -u alice", "forkpoint redo s_abc -u alice --tools ./my-tools.js"]);
  command.action((sessionId: string, o: { user: string } & MoveFlags) => {
    const options = moveOptions(cli, o);
    return withForkpoint(cli, "write", async (fp) => {
      const s = await fp.getSession(sessionId, { userId: o.user });
      const r = await withToolsHint(() => s.redo(options));
      cli.out.print(r, () => ["redid the move", ...moveResultLines(cli.out, r)]);
    });
  });
}
