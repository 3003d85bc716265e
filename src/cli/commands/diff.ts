// `forkpoint diff <session> <a> <b>`: two checkpoints compared: state paths, messages and tool calls.
import type { Command } from "commander";
import type { Message, ToolInvocation } from "../../index.js";
import type { Cli } from "../cli.js";
import { withForkpoint } from "../open.js";
import { inline } from "../output.js";
import { examples, withUser } from "../options.js";

const path = (p: string[]) => (p.length === 0 ? "(the whole state)" : p.map((k) => inline(k)).join("."));

export function diffCommand(program: Command, cli: Cli): void {
  const command = program
    .command("diff")
    .description("compare two checkpoints of a session: state, messages, tool calls")
    .argument("<session>", "session id")
    .argument("<checkpointA>")
    .argument("<checkpointB>");
  withUser(command);
  examples(command, ["forkpoint diff s_abc cp_before cp_after -u alice"]);
  command.action((sessionId: string, a: string, b: string, o: { user: string }) =>
    withForkpoint(cli, "read", async (fp) => {
      const d = await (await fp.getSession(sessionId, { userId: o.user })).diff(a, b);
      const { c } = cli.out;
      const message = (side: string, m: Message) =>
        `  ${side} ${String(m.position).padStart(4)}  ${inline(m.role)}: ${inline(m.content, 100)}`;
      const tool = (side: string, t: ToolInvocation) =>
        `  ${side} ${String(t.position).padStart(4)}  ${inline(t.tool)} ${inline(t.args, 60)} (${t.status})`;
      const s = d.state;
      cli.out.print(d, () => [
        `state: ${s.added.length} added, ${s.removed.length} removed, ${s.changed.length} changed`,
        ...s.added.map((x) => c.green(`  + ${path(x.path)}: ${inline(x.value, 100)}`)),
        ...s.removed.map((x) => c.red(`  - ${path(x.path)}: ${inline(x.value, 100)}`)),
        ...s.changed.map((x) => c.yellow(`  ~ ${path(x.path)}: ${inline(x.from, 50)} -> ${inline(x.to, 50)}`)),
        `messages: ${d.messages.common} in common, ${d.messages.onlyA.length} only in ${inline(a)}, ${d.messages.onlyB.length} only in ${inline(b)}`,
        ...d.messages.onlyA.map((m) => c.red(message("A", m))),
        ...d.messages.onlyB.map((m) => c.green(message("B", m))),
        `tool calls: ${d.tools.common} in common, ${d.tools.onlyA.length} only in ${inline(a)}, ${d.tools.onlyB.length} only in ${inline(b)}`,
        ...d.tools.onlyA.map((t) => c.red(tool("A", t))),
        ...d.tools.onlyB.map((t) => c.green(tool("B", t))),
      ]);
    }),
  );
}
