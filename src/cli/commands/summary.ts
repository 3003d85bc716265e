// `forkpoint summary <session>`: a session at a glance (branches, head, last message, checkpoints, tool calls).
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { withForkpoint } from "../open.js";
import { escapeText, inline } from "../output.js";
import { examples, withUser } from "../options.js";

export function summaryCommand(program: Command, cli: Cli): void {
  const command = program
    .command("summary")
    .description("a session at a glance: branches, head, last message, checkpoints, tool calls")
    .argument("<session>", "session id");
  withUser(command);
  examples(command, ["forkpoint summary s_abc -u alice"]);
  command.action((sessionId: string, o: { user: string }) =>
    withForkpoint(cli, "read", async (fp) => {
      const sum = await (await fp.getSession(sessionId, { userId: o.user })).summary();
      const { out } = cli;
      const t = sum.toolCalls;
      out.print(sum, () => [
        `${escapeText(sum.id)}  ${escapeText(sum.title ?? "(untitled)")}  updated ${out.time(sum.updatedAt)}`,
        `branches     ${sum.branches}; current ${escapeText(sum.currentBranchId)} at position ${sum.position}, ${sum.messages} messages`,
        `last message ${sum.lastMessage ? `${inline(sum.lastMessage.role)}: ${inline(sum.lastMessage.content, 120)}` : "(none)"}`,
        `checkpoints  ${sum.checkpoints}${sum.latestCheckpoint ? `; latest ${escapeText(sum.latestCheckpoint.id)} ${inline(sum.latestCheckpoint.name ?? "(unnamed)")} ${out.time(sum.latestCheckpoint.createdAt)}` : ""}`,
        `tool calls   ${t.total} on this lineage (${t.succeeded} succeeded, ${t.failed} failed, ${t.running} running); ${t.applied} applied in the world`,
      ]);
    }),
  );
}
