// A "both" move whose snapshot is older than the point the world and its target share leaves the calls made between
// them applied: undone only after that point, replayed only when not applied, their files kept as they are.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** A session attached to a fresh workspace, with a log of what the tools did outside it. */
async function attached(extra: Parameters<typeof defineTool>[0][] = []) {
  const ws = tempDir("forkpoint-shared-calls-");
  const events: string[] = [];
  let runs = 0;
  // Writes a file of random content: run again, it writes something else than what the user saw.
  const generate = defineTool<{ path: string }, { previous: string | null }>({
    name: "generate",
    run: ({ path: p }) => {
      runs++;
      const previous = readOrNull(p);
      fs.writeFileSync(p, `generated ${Math.random().toString(36).slice(2, 10)}\n`);
      return { previous };
    },
    undo: ({ args, result }) => {
      if (result.previous === null) fs.rmSync(args.path);
      else fs.writeFileSync(args.path, result.previous);
    },
  });
  const email = defineTool<{ to: string }, { id: string }>({
    name: "send_email",
    run: ({ to }) => {
      events.push(`send ${to}`);
      return { id: to };
    },
    undo: ({ args }) => {
      events.push(`recall ${args.to}`);
    },
  });
  const { fp, path: file } = dbs.open({ tools: [writeFileTool(), generate, email, ...extra] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  return { fp, ws, s, file, events, runs: () => runs, at: (rel: string) => path.join(ws, rel) };
}

it("an edit and the switches between the siblings neither undo nor run again a call made before the fork point", async () => {
  const { s, events, at } = await attached();
  await s.append({ role: "user", content: "go" });
  await s.checkpoint({ name: "start" });
  await s.invoke("write_file", { path: at("a.txt"), text: "1" });
  await s.invoke("send_email", { to: "bob" });
  const [m] = await s.append({ role: "user", content: "now write 2" });
  await s.invoke("write_file", { path: at("a.txt"), text: "2" });
  const x = (await s.info()).currentBranchId;
  events.length = 0;

  const edited = await s.edit(m!.id, { content: "now write 3" }, { scope: "both" });
  expect(edited.undone.map((t) => t.position)).toEqual([6]);
  expect(edited.replayed).toEqual([]);
  expect(edited.skipped).toEqual([]);
  expect(edited.files?.kept).toBeUndefined();
  expect(readOrNull(at("a.txt"))).toBe("1");
  await s.invoke("write_file", { path: at("a.txt"), text: "3" });
  const y = edited.branch.id;

  for (const [target, text] of [
    [x, "2"],
    [y, "3"],
  ] as const) {
    const planned = await s.plan({ branchId: target });
    const moved = await s.switchBranch(target, { scope: "both" });
    // As planned, and as a move without files does it.
    expect(moved.undone.map((t) => t.position)).toEqual([6]);
    expect(moved.replayed.map((t) => t.position)).toEqual([6]);
    expect(planned.undone.map((t) => t.id)).toEqual(moved.undone.map((t) => t.id));
    expect(planned.replayed.map((t) => t.id)).toEqual(moved.replayed.map((t) => t.id));
    expect(readOrNull(at("a.txt"))).toBe(text);
  }
  const undone = await s.undo({ scope: "both" });
  expect(undone.undone.map((t) => t.position)).toEqual([6]);
  expect(readOrNull(at("a.txt"))).toBe("2");
  // The email before the fork point was never recalled, nor sent again.
  expect(events).toEqual([]);
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true, true, true]);
});

it("a file a call before the fork point generated stays what the user saw", async () => {
  const { s, at, runs } = await attached();
  await s.append({ role: "user", content: "scaffold" });
  await s.checkpoint({ name: "start" });
  await s.invoke("generate", { path: at("main.ts") });
  const seen = readOrNull(at("main.ts"));
  const [m] = await s.append({ role: "user", content: "add tests" });
  await s.invoke("generate", { path: at("test.ts") });
  const x = (await s.info()).currentBranchId;

  const edited = await s.edit(m!.id, { content: "add docs" }, { scope: "both" });
  expect(edited.replayed).toEqual([]);
  expect(readOrNull(at("main.ts"))).toBe(seen);
  expect(readOrNull(at("test.ts"))).toBeNull();
  await s.switchBranch(x, { scope: "both" });
  expect(readOrNull(at("main.ts"))).toBe(seen);
  // Only the call after the fork point runs again.
  expect(runs()).toBe(3);
  const back = await s.switchBranch(edited.branch.id, { scope: "both" });
  expect(back.undone.map((t) => t.position)).toEqual([5]);
  expect(back.replayed).toEqual([]);
  expect(readOrNull(at("main.ts"))).toBe(seen);
  expect(readOrNull(at("test.ts"))).toBeNull();
});

it("an irreversible call before the fork point is neither skipped nor refused, and its neighbours' files stay", async () => {
  const deploy = defineTool({ name: "deploy", run: () => ({ ok: true }) });
  const { s, at } = await attached([deploy as never]);
  await s.append({ role: "user", content: "go" });
  await s.checkpoint({ name: "start" });
  await s.invoke("write_file", { path: at("a.txt"), text: "1" });
  await s.invoke("deploy", {});
  const [m] = await s.append({ role: "user", content: "then" });
  await s.invoke("write_file", { path: at("a.txt"), text: "2" });

  const edited = await s.edit(m!.id, { content: "other" }, { scope: "both", refuseIrreversible: true });
  expect(edited.undone.map((t) => t.position)).toEqual([6]);
  expect(edited.skipped).toEqual([]);
  expect(edited.files?.kept).toBeUndefined();
  expect(readOrNull(at("a.txt"))).toBe("1");
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true, true]);
});

it("an opener without the tool of a call before the fork point edits after it", async () => {
  const { s, at, file } = await attached();
  await s.append({ role: "user", content: "go" });
  await s.checkpoint({ name: "start" });
  await s.invoke("write_file", { path: at("a.txt"), text: "1" });
  await s.append({ role: "user", content: "then" });
  const [answer] = await s.append({ role: "assistant", content: "ok" });

  const bare = dbs.open({ path: file }).fp;
  const viewer = await bare.getSession(s.id, { userId: "u" });
  const edited = await viewer.edit(answer!.id, { content: "fine" }, { scope: "both" });
  expect(edited.unregistered).toEqual([]);
  expect(edited.undone).toEqual([]);
  expect(readOrNull(at("a.txt"))).toBe("1");
  await bare.close();
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true]);
});

it("a path a shared call and a later call both changed gets the shared call's content back", async () => {
  const { s, at } = await attached();
  fs.writeFileSync(at("base.txt"), "base");
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("write_file", { path: at("a.txt"), text: "shared" });
  await s.invoke("write_file", { path: at("base.txt"), text: "shared base" });
  const [m] = await s.append({ role: "user", content: "more" });
  await s.invoke("write_file", { path: at("a.txt"), text: "later" });
  await s.invoke("write_file", { path: at("b.txt"), text: "later" });

  const edited = await s.edit(m!.id, { content: "less" }, { scope: "both" });
  expect(edited.undone.map((t) => (t.args as { text: string }).text)).toEqual(["later", "later"]);
  expect([readOrNull(at("a.txt")), readOrNull(at("base.txt")), readOrNull(at("b.txt"))]).toEqual(["shared", "shared base", null]);
  // The checkpoint's own files still come back with a rewind to it.
  const back = await s.rollback(start.id, { scope: "both" });
  expect(back.undone.map((t) => (t.args as { text: string }).text)).toEqual(["shared base", "shared"]);
  expect([readOrNull(at("a.txt")), readOrNull(at("base.txt"))]).toEqual([null, "base"]);
});

it("a shared call with no record of its paths takes none of the other lineage's later hand edits along", async () => {
  const { s, at } = await attached();
  fs.writeFileSync(at("p.txt"), "P0");
  fs.writeFileSync(at("q.txt"), "Q0");
  await s.append({ role: "user", content: "go" });
  await s.checkpoint({ name: "start" });
  // Run by the app itself, then recorded: no record of the paths it changed.
  fs.writeFileSync(at("p.txt"), "P1");
  await s.recordToolCall({ tool: "write_file", args: { path: at("p.txt"), text: "P1" }, result: { previous: "P0" } });
  const [m] = await s.append({ role: "user", content: "more" });
  fs.writeFileSync(at("q.txt"), "Q by hand");
  await s.checkpoint({ name: "after the fork point" });
  const x = (await s.info()).currentBranchId;

  const edited = await s.edit(m!.id, { content: "other" }, { scope: "both" });
  // Undone and replayed through its tool, as the snapshots cannot tell which paths are its own.
  expect(edited.undone.map((t) => t.tool)).toEqual(["write_file"]);
  expect(edited.replayed.map((t) => t.tool)).toEqual(["write_file"]);
  expect([readOrNull(at("p.txt")), readOrNull(at("q.txt"))]).toEqual(["P1", "Q0"]);
  await s.switchBranch(x, { scope: "both" });
  expect([readOrNull(at("p.txt")), readOrNull(at("q.txt"))]).toEqual(["P1", "Q by hand"]);
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true]);
});

it("a shared call's file hand-edited on the other branch and saved there comes back as of the fork point", async () => {
  const { fp, s, at, runs } = await attached();
  fs.writeFileSync(at("p.txt"), "P0");
  await s.append({ role: "user", content: "go" });
  await s.checkpoint({ name: "start" });
  await s.invoke("write_file", { path: at("p.txt"), text: "PR" });
  await s.invoke("generate", { path: at("g.txt") });
  const generated = readOrNull(at("g.txt"));
  const [m] = await s.append({ role: "user", content: "second" });
  fs.writeFileSync(at("p.txt"), "PR by hand on X");
  fs.writeFileSync(at("g.txt"), "G by hand on X");
  await s.checkpoint({ name: "hand edits on X" });
  const x = (await s.info()).currentBranchId;
  // Contents only the calls' outputs hold now: a prune keeps them.
  await fp.prune();

  const edited = await s.edit(m!.id, { content: "other" }, { scope: "both" });
  // The sibling never saw X's hand edits: its files are those at the fork point, with no call run again.
  expect([edited.undone, edited.replayed, edited.files?.kept]).toEqual([[], [], undefined]);
  expect([readOrNull(at("p.txt")), readOrNull(at("g.txt"))]).toEqual(["PR", generated]);
  expect(runs()).toBe(1);
  const planned = await s.plan({ branchId: x });
  const back = await s.switchBranch(x, { scope: "both" });
  expect([planned.undone, planned.replayed]).toEqual([back.undone, back.replayed]);
  expect([readOrNull(at("p.txt")), readOrNull(at("g.txt"))]).toEqual(["PR by hand on X", "G by hand on X"]);
  // An unsaved hand edit of such a file is drift: refused, as any.
  fs.writeFileSync(at("p.txt"), "unsaved");
  expect(await rejectionOf(s.switchBranch(edited.branch.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(at("p.txt"))).toBe("unsaved");
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true, true]);
});
