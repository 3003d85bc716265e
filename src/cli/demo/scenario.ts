// The demo: a chat with checkpoints, a rollback and an edited message, and an agent loop whose tool writes real
// files that rollbacks undo and a switch replays. Written through the public API; safe to run again on one file.
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Forkpoint } from "../../index.js";

export interface DemoIds {
  userId: string;
  chat: { sessionId: string; checkpointIds: string[]; editedMessageId: string };
  agent: { sessionId: string; startCheckpointId: string; filesBranchId: string };
}

/** Runs the demo on `fp` (opened with the demo's tools), writing files under `workspace`; `log` gets the narrative. */
export async function runDemo(fp: Forkpoint, workspace: string, log: (line: string) => void): Promise<DemoIds> {
  mkdirSync(workspace, { recursive: true });
  const show = (label: string, value: unknown) => log(`${label.padEnd(26)} ${typeof value === "string" ? value : JSON.stringify(value)}`);
  const files = () => readdirSync(workspace).sort().join(", ") || "(none)";
  const userId = "demo";

  log("1. A chat with checkpoints, a rollback and an edited message");
  const chat = await fp.createSession({ userId, title: `Trip planning ${new Date().toISOString()}` });
  await chat.append([
    { role: "user", content: "I want to visit Lisbon in May." },
    { role: "assistant", content: "Lovely! How many days?" },
  ]);
  await chat.setState({ city: "Lisbon", month: "May" });
  const planned = await chat.checkpoint({ name: "destination chosen" });
  await chat.setState((s) => ({ ...(s as object), days: 5 }));
  // A turn: the question, the answer and a checkpoint after them, in one transaction.
  const {
    messages: [askDays],
    checkpoint: fiveDays,
  } = await chat.turn(
    [
      { role: "user", content: "Five days, on a budget." },
      { role: "assistant", content: "Here is a 5-day budget plan…" },
    ],
    { name: "five-day plan" },
  );
  show("history length", (await chat.history()).length);
  const back = await chat.rollback(planned.id);
  show("rolled back to", `"${planned.name}" → new branch ${back.branch.id}`);
  show(
    "history after rollback",
    (await chat.history()).map((m) => m.content),
  );
  show("state after rollback", await chat.getState());
  const edited = await chat.edit(askDays!.id, { role: "user", content: "Three days, luxury please." });
  const v = await chat.versions(edited.message.id);
  show("edited message versions", `< ${v.index + 1}/${v.count} > ${v.versions.map((x) => JSON.stringify(x.message.content)).join(" | ")}`);
  const d = await chat.diff(planned.id, fiveDays.id);
  show("diff of the checkpoints", `${d.messages.onlyB.length} more messages, state added ${JSON.stringify(d.state.added)}`);

  log("");
  log("2. An agent loop whose tool writes real files, then a rollback that undoes them");
  const agent = await fp.createSession({ userId, title: "Agent run" });
  const start = await agent.checkpoint({ name: "empty workspace" });
  for (const [name, text] of [
    ["notes.md", "# Notes\n"],
    ["plan.txt", "day 1: museum\n"],
    ["notes.md", "# Notes\n- pack light\n"],
  ] as const) {
    await agent.append({ role: "assistant", content: { toolCall: "write_file", name } });
    await agent.invoke("write_file", { path: join(workspace, name), text });
  }
  await agent.checkpoint({ name: "files written" });
  show("files on disk", files());
  const preview = await agent.plan({ checkpointId: start.id });
  show("plan of rollback", `reverts ${preview.undone.length} calls, cannot undo ${preview.skipped.length}`);
  const undone = await agent.rollback(start.id);
  const names = (list: { args: unknown }[]) =>
    list.map((t) => `write_file(${(t.args as { path: string }).path.slice(workspace.length + 1)})`);
  show("undone (newest first)", names(undone.undone));
  show("files on disk now", files());
  const filesBranchId = undone.branch.parentId!;
  const redo = await agent.switchBranch(filesBranchId);
  show("switched back: replayed", names(redo.replayed));
  show("files on disk again", files());
  await agent.rollback(start.id);
  show("and undone again", files());

  return {
    userId,
    chat: { sessionId: chat.id, checkpointIds: [planned.id, fiveDays.id], editedMessageId: edited.message.id },
    agent: { sessionId: agent.id, startCheckpointId: start.id, filesBranchId },
  };
}
