// `forkpoint delete <session> [checkpoint]`: delete a whole session, or one of its checkpoints; asked first on a terminal.
import type { Command } from "commander";
import { CliError, type Cli } from "../cli.js";
import { confirmed, onTerminal } from "../confirm.js";
import { withForkpoint } from "../open.js";
import { inline } from "../output.js";
import { examples, withUser } from "../options.js";

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export function deleteCommand(program: Command, cli: Cli): void {
  const command = program
    .command("delete")
    .description("delete a session and everything it recorded, or (with a checkpoint id) one checkpoint; asks first on a terminal")
    .argument("<session>", "session id")
    .argument("[checkpoint]", "a checkpoint of the session: only it is deleted")
    .option("-y, --yes", "delete without asking (nothing is asked when standard input is not a terminal)");
  withUser(command);
  examples(command, ["forkpoint delete s_abc cp_xyz -u alice", "forkpoint delete s_abc -u alice --yes"]);
  command.action((sessionId: string, checkpointId: string | undefined, o: { user: string; yes?: boolean }) =>
    withForkpoint(cli, "write", async (fp) => {
      // Found (and owned) before anything is asked: no question about a session that is not there.
      const s = await fp.getSession(sessionId, { userId: o.user });
      const ask = !o.yes && onTerminal(cli);
      if (checkpointId) {
        if (ask) {
          const cp = await fp.getCheckpoint(checkpointId, { userId: o.user });
          const named = cp.name === null ? "" : ` "${inline(cp.name, 60)}"`;
          await confirmOrStop(cli, `delete checkpoint ${inline(checkpointId)}${named} of session ${inline(sessionId)}?`);
        }
        await s.deleteCheckpoint(checkpointId);
        return cli.out.print({ deleted: { checkpointId, sessionId } }, () => [
          `deleted checkpoint ${inline(checkpointId)} of session ${inline(sessionId)}`,
        ]);
      }
      if (ask) {
        const sum = await s.summary();
        const title = sum.title === null ? "" : ` "${inline(sum.title, 60)}"`;
        const holds = [
          count(sum.messages, "message", "messages"),
          count(sum.branches, "branch", "branches"),
          count(sum.checkpoints, "checkpoint", "checkpoints"),
        ];
        await confirmOrStop(
          cli,
          `delete session ${inline(sessionId)}${title} of ${inline(o.user)} (${holds.join(", ")}) and everything it recorded?`,
        );
      }
      await fp.deleteSession(sessionId, { userId: o.user });
      cli.out.print({ deleted: { sessionId } }, () => [`deleted session ${inline(sessionId)} (run prune to reclaim its space)`]);
    }),
  );
}

/** Asks, and stops the command (exit 1, nothing deleted) unless the answer is yes. */
async function confirmOrStop(cli: Cli, question: string): Promise<void> {
  if (!(await confirmed(cli, question))) throw new CliError("not deleted (answer y to delete, or pass --yes)", { code: "NOT_CONFIRMED" });
}
