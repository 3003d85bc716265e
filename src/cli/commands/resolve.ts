// `forkpoint resolve <session> <call> --succeeded|--failed`: record what became of a tool call a crash left running.
import type { Command } from "commander";
import type { JsonValue } from "../../index.js";
import type { Cli } from "../cli.js";
import { withForkpoint } from "../open.js";
import { inline } from "../output.js";
import { examples, withUser } from "../options.js";

interface ResolveFlags {
  user: string;
  succeeded?: boolean;
  failed?: boolean;
  result?: string;
  error?: string;
}

export function resolveCommand(program: Command, cli: Cli): void {
  const command = program
    .command("resolve")
    .description(
      "record the outcome of a tool call a crash left running (`recover` lists them as unknown): succeeded, so later moves " +
        "undo it with its result, or failed, never undone; for a call whose undo or replay a crash interrupted (a move's " +
        "unknown), the outcome of that undo or replay",
    )
    .argument("<session>", "session id")
    .argument("<call>", "the tool call's id (an invocation id)")
    .option("--succeeded", "the call's effect happened")
    .option("--result <json>", "with --succeeded: its result, as JSON (default null), as its undo will receive it")
    .option("--failed", "the call's effect did not happen")
    .option("--error <message>", "with --failed: what went wrong (default: resolved as failed by an operator)");
  withUser(command);
  examples(command, [
    `forkpoint resolve s_abc tc_xyz --succeeded --result '{"sent":3}' -u alice`,
    "forkpoint resolve s_abc tc_xyz --failed --error 'the mail server refused it' -u alice",
  ]);
  command.action((sessionId: string, callId: string, o: ResolveFlags) => {
    if (o.succeeded === o.failed) cli.usage("give one of --succeeded or --failed");
    if (o.succeeded && o.error !== undefined) cli.usage("--error goes with --failed");
    if (o.failed && o.result !== undefined) cli.usage("--result goes with --succeeded");
    let result: JsonValue = null;
    if (o.result !== undefined) {
      try {
        result = JSON.parse(o.result) as JsonValue;
      } catch (error) {
        cli.usage(`--result is not JSON: ${(error as Error).message}`);
      }
    }
    const outcome = o.succeeded
      ? ({ status: "succeeded", result } as const)
      : ({ status: "failed", error: o.error ?? "resolved as failed by an operator" } as const);
    return withForkpoint(cli, "write", async (fp) => {
      const call = await (await fp.getSession(sessionId, { userId: o.user })).resolveToolCall(callId, outcome);
      cli.out.print(call, () => [
        `resolved ${inline(call.id)} ${inline(call.tool)}: ${call.status}` +
          (call.status !== "succeeded"
            ? " (never undone)"
            : call.applied
              ? ` with ${inline(call.result, 100)} (applied: later moves undo it)`
              : " (not applied: its effect is not in the world, later moves replay it)"),
      ]);
    });
  });
}
