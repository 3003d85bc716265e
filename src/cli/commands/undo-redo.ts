// `forkpoint undo <session>` / `forkpoint redo <session>`: walk the session's own move history; the world follows.
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { moveOptions, moveResultLines, withMoveOptions, withToolsHint, workspaceLeftLines, type MoveFlags } from "../moves.js";
import { withForkpoint } from "../open.js";
import { examples, withUser } from "../options.js";

const VERBS = {
  undo: {
    description: "take back the session's last move: back where it left from; tool calls are undone and replayed (--tools)",
    done: "undid the last move",
  },
  redo: { description: "do the move the last undo took back again; tool calls are undone and replayed (--tools)", done: "redid the move" },
} as const;

function historyMoveCommand(op: keyof typeof VERBS, program: Command, cli: Cli): void {
  const command = program.command(op).description(VERBS[op].description).argument("<session>", "session id");
  withUser(command);
  withMoveOptions(command);
  examples(command, [`forkpoint ${op} s_abc -u alice`, `forkpoint ${op} s_abc -u alice --tools ./my-tools.js`]);
  command.action((sessionId: string, o: { user: string } & MoveFlags) => {
    const options = moveOptions(cli, o);
    return withForkpoint(cli, "write", async (fp) => {
      const s = await fp.getSession(sessionId, { userId: o.user });
      const r = await withToolsHint(cli, op, () => (op === "undo" ? s.undo(options) : s.redo(options)));
      // As rollback and switch say it: a conversation move leaves an attached workspace's files as they are.
      const left = await workspaceLeftLines(cli.out, s, r);
      cli.out.print(r, () => [VERBS[op].done, ...moveResultLines(cli.out, r), ...left]);
    });
  });
}

export const undoCommand = (program: Command, cli: Cli): void => historyMoveCommand("undo", program, cli);
export const redoCommand = (program: Command, cli: Cli): void => historyMoveCommand("redo", program, cli);
