// `forkpoint show <checkpoint>`: a checkpoint restored (checksum verified): its state, history and tool track.
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { withForkpoint } from "../open.js";
import { escapeText, inline, Raw } from "../output.js";
import { examples, withUser } from "../options.js";

export function showCommand(program: Command, cli: Cli): void {
  const command = program
    .command("show")
    .description("a checkpoint as restored (checksum verified): state, history and tool track")
    .argument("<checkpoint>", "checkpoint id");
  withUser(command);
  examples(command, ["forkpoint show cp_abc -u alice", "forkpoint --json show cp_abc -u alice"]);
  command.action((checkpointId: string, o: { user: string }) =>
    withForkpoint(cli, "read", async (fp) => {
      const cp = await fp.getCheckpoint(checkpointId, { userId: o.user });
      const restored = await (await fp.getSession(cp.sessionId, { userId: o.user })).restore(cp.id);
      const { out } = cli;
      out.print(restored, () => [
        `checkpoint ${escapeText(cp.id)}${cp.name ? ` "${escapeText(cp.name)}"` : ""}${cp.auto ? " (auto)" : ""}`,
        `session    ${escapeText(cp.sessionId)}, branch ${escapeText(cp.branchId)}, position ${cp.position}`,
        `created    ${out.time(cp.createdAt)}${cp.expiresAt ? `, expires ${out.time(cp.expiresAt)}` : ""}`,
        `checksum   ${cp.checksum} (verified)`,
        `state      ${inline(restored.state)}`,
        "",
        `history (${restored.history.length} messages)`,
        ...out.table(
          ["POS", "ROLE", "CONTENT"],
          restored.history.map((m) => [m.position, m.role, new Raw(inline(m.content, 100))]),
        ),
        "",
        `tool track (${restored.toolTrack.length} calls)`,
        ...(restored.toolTrack.length === 0
          ? []
          : out.table(
              ["POS", "TOOL", "STATUS", "APPLIED", "ARGS"],
              restored.toolTrack.map((t) => [t.position, t.tool, t.status, t.applied ? "yes" : "no", new Raw(inline(t.args, 60))]),
            )),
      ]);
    }),
  );
}
