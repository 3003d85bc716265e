// clone: the same history, state, branch tree and checkpoints under new ids; the copy verifies and applies nothing.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { IntegrityError, NotFoundError, ValidationError, defineTool, type SessionHandle } from "../../src/index.js";
import { openForkpoint, sqlOn } from "../fixtures/backend.js";
import { makeTempDir, rejectionOf, tempDatabases, writeFileTool } from "../helpers.js";
import { answersOutOfBranchOrder, lastVersions } from "../fixtures/versions-across-branches.js";

const dbs = tempDatabases();
const dir = makeTempDir();
const writeFile = writeFileTool(dir);

describe("clone", () => {
  it("its mark does not push the source's checkpoints out under a retention policy", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.setRetention({ keepLast: 1 });
    await s.checkpoint({ name: "mine" });
    const copy = await fp.clone(s.id, { userId: "u" });
    expect((await s.listCheckpoints()).items.map((c) => c.name)).toEqual(["clone", "mine"]);
    expect((await copy.listCheckpoints()).items.map((c) => c.name)).toEqual(["clone", "mine"]);
    await s.checkpoint({ name: "next" });
    await fp.prune({ vacuum: false }); // the policy still holds, applied in full
    expect((await s.listCheckpoints()).items.map((c) => c.name)).toEqual(["next"]);
  });

  it("copies the whole tree under new ids, verifies, and points back at the source", async () => {
    const { fp } = dbs.open({ tools: [writeFile] });
    const s = await fp.createSession({ userId: "u", title: "src" });
    await s.append({ role: "user", content: "one" });
    await s.setState({ n: 1 });
    const cp1 = await s.checkpoint({ name: "first" });
    await s.invoke("write_file", { name: "clone.txt", text: "x" });
    await s.append({ role: "assistant", content: "two" });
    await s.setState({ n: 2 });
    await s.rollback(cp1.id);
    await s.append({ role: "assistant", content: "other" });
    // Switches are timeline events naming the session's branches: the copy's name its own.
    const here = (await s.info()).currentBranchId;
    await s.switchBranch((await s.branches()).find((b) => b.reason === "root")!.id);
    await s.switchBranch(here);

    const copy = await fp.clone(s.id, { userId: "u" });
    expect(copy.id).not.toBe(s.id);
    expect(copy.userId).toBe("u");
    const info = await copy.info();
    const mark = (await s.listCheckpoints()).items[0]!;
    expect(mark).toMatchObject({ name: "clone", metadata: { cloneId: copy.id } });
    expect(info.origin).toEqual({ sessionId: s.id, checkpointId: mark.id });
    expect(info.title).toBe("src");

    const contents = async (h: typeof s) => (await h.history()).map((m) => [m.role, m.content]);
    expect(await contents(copy)).toEqual(await contents(s));
    expect(await copy.getState()).toEqual(await s.getState());
    const [srcBranches, copyBranches] = [await s.branches(), await copy.branches()];
    expect(copyBranches.map((b) => [b.reason, b.forkPosition])).toEqual(srcBranches.map((b) => [b.reason, b.forkPosition]));
    expect(copyBranches.map((b) => b.id).filter((id) => srcBranches.some((b) => b.id === id))).toEqual([]);
    const [srcCps, copyCps] = [(await s.listCheckpoints()).items, (await copy.listCheckpoints()).items];
    expect(copyCps.map((c) => c.name)).toEqual(srcCps.map((c) => c.name));
    expect(copyCps.map((c) => c.id).filter((id) => srcCps.some((c) => c.id === id))).toEqual([]);
    const copyFirst = copyCps.find((c) => c.name === "first")!;
    expect((await copy.restore(copyFirst.id)).state).toEqual({ n: 1 });
    const kinds = async (h: typeof s) => (await h.timeline({ limit: 100 })).items.map((i) => i.kind);
    expect(await kinds(copy)).toEqual(await kinds(s));
    expect((await fp.verify()).ok).toBe(true);

    // Nothing is applied in the copy: moving it back to the old branch replays nothing; the source's file stays.
    const old = copyBranches.find((b) => b.reason === "root")!;
    const moved = await copy.switchBranch(old.id);
    expect(moved).toBeDefined();
    expect(await copy.getState()).toEqual({ n: 2 });
    expect((await copy.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([["write_file", false]]);
    expect(fs.existsSync(path.join(dir, "clone.txt"))).toBe(false);
    // The source is as it was (but for the mark).
    expect(await contents(s)).toEqual([
      ["user", "one"],
      ["assistant", "other"],
    ]);
    expect((await fp.verify()).ok).toBe(true);
  });

  it("keeps a message's versions in creation order, not branch order", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await answersOutOfBranchOrder(s);
    const copy = await fp.clone(s.id, { userId: "u" });
    expect(await lastVersions(copy)).toEqual({ versions: [1, ["answer 1", "answer 2"]], history: [1, ["answer 1", "answer 2"]] });
  });

  it("refuses another user's session and bad input, writing nothing", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    expect(await rejectionOf(fp.clone(s.id, { userId: "v" }))).toBeInstanceOf(NotFoundError);
    expect(await rejectionOf(fp.clone(s.id, {} as never))).toBeInstanceOf(ValidationError);
    expect(await rejectionOf(fp.clone("", { userId: "u" }))).toBeInstanceOf(ValidationError);
    expect((await s.listCheckpoints()).items).toEqual([]);
    expect((await fp.listSessions({ userId: "u" })).items).toHaveLength(1);
  });

  it("copies tool calls whose result is null, and message contents that are null", async () => {
    const nothing = defineTool({ name: "nothing", run: () => undefined, undo: () => undefined });
    const { fp } = dbs.open({ tools: [nothing] });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: null });
    expect(await s.invoke("nothing", {})).toBeUndefined();
    await s.recordToolCall({ tool: "framework_tool", args: { a: 1 } });
    await s.recordToolCall({ tool: "framework_tool", args: { a: 2 }, result: null });
    expect((await fp.verify()).ok).toBe(true);
    const copy = await fp.clone(s.id, { userId: "u" });
    const track = async (h: SessionHandle) => (await h.toolTrack()).map((t) => [t.tool, t.args, t.status, t.result]);
    expect(await track(copy)).toEqual(await track(s));
    expect((await copy.history()).map((m) => m.content)).toEqual([null]);
    expect((await fp.verify()).ok).toBe(true);
  });

  it("a clone that fails leaves no mark in the source, nor any copy", async () => {
    const { fp, path: file } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const [m] = await s.append({ role: "user", content: "hello" });
    await s.checkpoint({ name: "mine" });
    await sqlOn(file, `UPDATE entries SET content = $1 WHERE id = $2`, [JSON.stringify("hellp"), m!.id]);
    expect(await rejectionOf(fp.clone(s.id, { userId: "u" }))).toBeInstanceOf(IntegrityError);
    expect((await s.listCheckpoints()).items.map((c) => c.name)).toEqual(["mine"]);
    expect((await fp.listSessions({ userId: "u" })).items.map((i) => i.id)).toEqual([s.id]);
  });

  it("is the source as of its mark, whatever another handle appends meanwhile", async () => {
    const { fp, path: file } = dbs.open();
    const other = dbs.track(openForkpoint({ path: file }));
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "before" });
    const there = (await other.getSession(s.id, { userId: "u" }))!;
    // Another handle writes as soon as the mark is announced, and keeps writing while the clone runs.
    let writes: Promise<unknown>[] = [];
    fp.on("checkpoint", (cp) => {
      if (cp.name === "clone") writes.push(there.append({ role: "user", content: `after ${cp.id}` }));
    });
    const copies: SessionHandle[] = [];
    for (let i = 0; i < 5; i++) {
      const writer = (async () => {
        for (let n = 0; n < 5; n++) await there.append({ role: "assistant", content: `meanwhile ${i}.${n}` });
      })();
      copies.push(await fp.clone(s.id, { userId: "u" }));
      await writer;
      await Promise.all(writes);
      writes = [];
    }
    for (const copy of copies) {
      const mark = (await copy.info()).origin!.checkpointId;
      const asOfMark = (await s.restore(mark)).history.map((m) => m.content);
      expect((await copy.history()).map((m) => m.content)).toEqual(asOfMark);
      const copied = (await copy.listCheckpoints({ name: "clone" })).items[0]!;
      expect((await copy.restore(copied.id)).history.map((m) => m.content)).toEqual(asOfMark);
    }
    expect((await fp.verify()).ok).toBe(true);
  });

  it("copies a call still running as running, though it completes later in the source", async () => {
    let finish!: (value: string) => void;
    const slow = defineTool({ name: "slow", run: () => new Promise<string>((resolve) => (finish = resolve)) });
    const { fp } = dbs.open({ tools: [slow] });
    const s = await fp.createSession({ userId: "u" });
    const running = s.invoke("slow", {});
    await expect.poll(async () => (await s.toolTrack()).length).toBe(1);
    const copy = await fp.clone(s.id, { userId: "u" });
    finish("done");
    expect(await running).toBe("done");
    expect((await s.toolTrack()).map((t) => [t.status, t.result])).toEqual([["succeeded", "done"]]);
    expect((await copy.toolTrack()).map((t) => [t.status, t.result])).toEqual([["running", null]]);
    expect((await fp.verify()).ok).toBe(true);
  });
});
