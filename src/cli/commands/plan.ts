// `forkpoint plan <session>`: what a rollback, switch or edit would do (entries left behind, tool calls), doing nothing.
import type { Command } from "commander";
import type { PlanTarget } from "../../index.js";
import type { Cli } from "../cli.js";
import { checkScope, planLines, workspaceLeftLines } from "../moves.js";
import { withForkpoint } from "../open.js";
import { examples, withUser } from "../options.js";

export function planCommand(program: Command, cli: Cli): void {
  const command = program
    .command("plan")
    .description("what a move would do, without doing it: to a checkpoint, a branch or before a message")
    .argument("<session>", "session id")
    .option("-c, --checkpoint <id>", "a rollback to this checkpoint")
    .option("-b, --branch <id>", "a switch to this branch")
    .option("-m, --message <id>", "an edit of this message")
    .option("--scope <scope>", "the move's scope: conversation, files or both (with an attached workspace)");
  withUser(command);
  examples(command, [
    "forkpoint plan s_abc --checkpoint cp_xyz -u alice",
    "forkpoint plan s_abc --branch br_xyz -u alice --tools ./my-tools.js",
    "forkpoint plan s_abc --checkpoint cp_xyz -u alice --scope both",
  ]);
  type Flags = { user: string; checkpoint?: string; branch?: string; message?: string; scope?: "conversation" | "files" | "both" };
  command.action((sessionId: string, o: Flags) => {
    const targets: PlanTarget[] = [
      ...(o.checkpoint ? [{ checkpointId: o.checkpoint }] : []),
      ...(o.branch ? [{ branchId: o.branch }] : []),
      ...(o.message ? [{ messageId: o.message }] : []),
    ];
    if (targets.length !== 1) cli.usage("give one of --checkpoint, --branch or --message");
    checkScope(cli, o.scope);
    return withForkpoint(cli, "read", async (fp) => {
      const s = await fp.getSession(sessionId, { userId: o.user });
      const plan = await s.plan(o.scope ? { ...targets[0]!, scope: o.scope } : targets[0]!);
      const current = (await s.info()).currentBranchId;
      const left = await workspaceLeftLines(cli.out, s, plan);
      cli.out.print(plan, () => [...planLines(cli.out, plan, current), ...left]);
    });
  });
}
