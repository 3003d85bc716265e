// `forkpoint diff <session> <a> <b>`: two checkpoints compared: state paths, messages, tool calls and, for a session with
// a workspace, its files.
import type { Command } from "commander";
import type { FilesDiff, Message, SessionHandle, ToolInvocation } from "../../index.js";
import type { Cli } from "../cli.js";
import { withForkpoint } from "../open.js";
import { inline } from "../output.js";
import { examples, withUser } from "../options.js";

const path = (p: string[]) => (p.length === 0 ? "(the whole state)" : p.map((k) => inline(k)).join("."));

export function diffCommand(program: Command, cli: Cli): void {
  const command = program
    .command("diff")
    .description("compare two checkpoints of a session: state, messages, tool calls, workspace files")
    .argument("<session>", "session id")
    .argument("<checkpointA>")
    .argument("<checkpointB>");
  withUser(command);
  examples(command, ["forkpoint diff s_abc cp_before cp_after -u alice"]);
  command.action((sessionId: string, a: string, b: string, o: { user: string }) =>
    withForkpoint(cli, "read", async (fp) => {
      const session = await fp.getSession(sessionId, { userId: o.user });
      const d = { ...(await session.diff(a, b)), ...(await filesOf(session, a, b)) };
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
        ...("files" in d
          ? [
              `files: ${d.files.added.length} added, ${d.files.modified.length} modified, ${d.files.deleted.length} deleted`,
              ...d.files.added.map((p) => c.green(`  + ${inline(p)}`)),
              ...d.files.modified.map((p) => c.yellow(`  ~ ${inline(p)}`)),
              ...d.files.deleted.map((p) => c.red(`  - ${inline(p)}`)),
            ]
          : []),
        ...("filesNotCompared" in d ? [`files: not compared: ${inline(d.filesNotCompared, 200)}`] : []),
      ]);
    }),
  );
}

/**
 * The workspace files of two checkpoints compared (no patch), for a session with a workspace; why they are not, when a
 * checkpoint holds none (an automatic one, say); nothing for a session without a workspace.
 */
async function filesOf(
  session: SessionHandle,
  a: string,
  b: string,
): Promise<{ files: Omit<FilesDiff, "patch"> } | { filesNotCompared: string } | Record<string, never>> {
  try {
    const { patch: _, ...files } = await session.diffFiles(a, b, { patch: false });
    return { files };
  } catch (error) {
    // Told by its code: --help loads no engine, so this module imports none of the library's values.
    const e = error as { code?: unknown; message?: unknown };
    if (e.code !== "VALIDATION_ERROR" || typeof e.message !== "string") throw error;
    return /has no workspace/.test(e.message) ? {} : { filesNotCompared: e.message };
  }
}
