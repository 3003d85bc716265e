// `forkpoint delete <session> [checkpoint]`: delete a whole session, or one of its checkpoints.
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { withForkpoint } from "../open.js";
import { inline } from "../output.js";
import { examples, withUser } from "../options.js";

export function deleteCommand(program: Command, cli: Cli): void {
  const command = program
    .command("delete")
    .description("delete a session and everything it recorded, or (with a checkpoint id) one checkpoint")
    .argument("<session>", "session id")
    .argument("[checkpoint]", "a checkpoint of the session: only it is deleted");
  withUser(command);
  examples(command, ["forkpoint delete s_abc cp_xyz -u alice", "forkpoint delete s_abc -u alice"]);
  command.action((sessionId: string, checkpointId: string | undefined, o: { user: string }) =>
    withForkpoint(cli, "write", async (fp) => {
      if (checkpointId) {
        await (await fp.getSession(sessionId, { userId: o.user })).deleteCheckpoint(checkpointId);
        return cli.out.print({ deleted: { checkpointId, sessionId } }, () => [
          `deleted checkpoint ${inline(checkpointId)} of session ${inline(sessionId)}`,
        ]);
      }
      await fp.deleteSession(sessionId, { userId: o.user });
      cli.out.print({ deleted: { sessionId } }, () => [`deleted session ${inline(sessionId)} (run prune to reclaim its space)`]);
    }),
  );
}
