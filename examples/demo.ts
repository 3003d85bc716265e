// `npm start`: a scripted chat and a small agent loop on ./forkpoint.db, showing checkpoints, rollback,
// message versions and tool calls undone on disk. Safe to run again on the same file.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { branchTree, defineTool, openForkpoint, type BranchTreeNode } from "../src/index.js";

const dbPath = resolve(process.argv[2] ?? "./forkpoint.db");
const workspace = resolve(process.argv[3] ?? "./forkpoint-demo-files");
mkdirSync(workspace, { recursive: true });

// A real tool: writes a file; its undo puts back what was there before.
const writeFile = defineTool({
  name: "write_file",
  run: async ({ name, text }: { name: string; text: string }) => {
    const path = join(workspace, name);
    const previous = existsSync(path) ? readFileSync(path, "utf8") : null;
    writeFileSync(path, text);
    return { path, previous };
  },
  undo: async ({ result }: { args: unknown; result: { path: string; previous: string | null } }) => {
    if (result.previous === null) rmSync(result.path, { force: true });
    else writeFileSync(result.path, result.previous);
  },
});

const fp = openForkpoint({ path: dbPath, tools: [writeFile] });
const show = (label: string, value: unknown) => console.log(`${label.padEnd(26)} ${typeof value === "string" ? value : JSON.stringify(value)}`);
const files = () => readdirSync(workspace).sort().join(", ") || "(none)";

console.log(`forkpoint demo — database ${dbPath}\n`);
console.log("1. A chat with checkpoints, a rollback and an edited message");
const chat = await fp.createSession({ userId: "demo", title: `Trip planning ${new Date().toISOString()}` });
await chat.append([
  { role: "user", content: "I want to visit Lisbon in May." },
  { role: "assistant", content: "Lovely! How many days?" },
]);
await chat.setState({ city: "Lisbon", month: "May" });
const planned = await chat.checkpoint({ name: "destination chosen" });
await chat.setState((s) => ({ ...(s as object), days: 5 }));
// A turn: the question, the answer and a checkpoint after them, in one transaction.
const { messages: [askDays], checkpoint: fiveDays } = await chat.turn(
  [{ role: "user", content: "Five days, on a budget." }, { role: "assistant", content: "Here is a 5-day budget plan…" }],
  { name: "five-day plan" },
);
show("history length", (await chat.history()).length);

const back = await chat.rollback(planned.id);
show("rolled back to", `"${planned.name}" → new branch ${back.branch.id}`);
show("history after rollback", (await chat.history()).map((m) => m.content));
show("state after rollback", await chat.getState());

const edited = await chat.edit(askDays!.id, { role: "user", content: "Three days, luxury please." });
const v = await chat.versions(edited.message.id);
show("edited message versions", `< ${v.index + 1}/${v.count} > ${v.versions.map((x) => JSON.stringify(x.message.content)).join(" | ")}`);

console.log("\n   branch tree:");
const printTree = (nodes: BranchTreeNode[], indent: string) => {
  for (const n of nodes) {
    console.log(`${indent}${n.id}  ${n.reason} at ${n.forkPosition}, head ${n.head}${n.current ? "  ← current" : ""}`);
    printTree(n.children, indent + "    ");
  }
};
printTree(branchTree(await chat.branches()), "   ");
console.log("\n   checkpoints (newest first):");
for (const cp of (await fp.listCheckpoints({ userId: "demo", sessionId: chat.id })).items) {
  console.log(`   ${cp.id}  "${cp.name}" at position ${cp.position} on ${cp.branchId}`);
}
const d = await chat.diff(planned.id, fiveDays.id);
show("\n   diff of the two", `${d.messages.onlyB.length} more messages, state added ${JSON.stringify(d.state.added)}`);

console.log("\n2. An agent loop whose tool writes real files, then a rollback that undoes them");
const agent = await fp.createSession({ userId: "demo", title: "Agent run" });
const start = await agent.checkpoint({ name: "empty workspace" });
for (const [name, text] of [["notes.md", "# Notes\n"], ["plan.txt", "day 1: museum\n"], ["notes.md", "# Notes\n- pack light\n"]] as const) {
  await agent.append({ role: "assistant", content: { toolCall: "write_file", name } });
  await agent.invoke("write_file", { name, text });
}
show("files on disk", files());
const preview = await agent.plan({ checkpointId: start.id });
show("plan of rollback", `reverts ${preview.undone.length} calls, cannot undo ${preview.skipped.length}`);
const undone = await agent.rollback(start.id);
show("undone (newest first)", undone.undone.map((t) => `${t.tool}(${(t.args as { name: string }).name})`));
show("files on disk now", files());
const redo = await agent.switchBranch(undone.branch.parentId!);
show("switched back: replayed", redo.replayed.map((t) => `${t.tool}(${(t.args as { name: string }).name})`));
show("files on disk again", files());
await agent.rollback(start.id);
show("and undone again", files());

await fp.close();
console.log("\nDone. Run `npm start` again: each run adds new sessions to the same database.");
