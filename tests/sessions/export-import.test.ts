// exportSession / importSession: a deterministic document of the whole session tree, written back elsewhere with
// ids and times kept; untrusted documents are checked (links, hashes, ids already present) and refused whole.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ConflictError,
  IntegrityError,
  NotFoundError,
  ValidationError,
  type Forkpoint,
  type SessionExport,
  type SessionHandle,
} from "../../src/index.js";
import { fileTools, readOrNull, tempDir as toolDir } from "../fixtures/file-tools.js";
import { stateAddress } from "../../src/sessions/integrity/hashes.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { dumpOf, openForkpoint, sqlOn } from "../fixtures/backend.js";
import { answersOutOfBranchOrder, lastVersions } from "../fixtures/versions-across-branches.js";

let dir: string;
let work: string;
const files = { a: "", b: "" };
let fp: Forkpoint;
const opened: Forkpoint[] = [];
const tools = () => fileTools({ outbox: path.join(work, "outbox") });

beforeEach(() => {
  dir = makeTempDir("forkpoint-export-");
  work = toolDir();
  files.a = path.join(work, "a.txt");
  files.b = path.join(work, "b.txt");
  fp = open("source.db");
});
afterEach(async () => {
  for (const f of opened.splice(0)) await f.close();
  removeDir(dir);
  removeDir(work);
});

function open(name: string): Forkpoint {
  const f = openForkpoint({ path: path.join(dir, name), tools: tools() });
  opened.push(f);
  return f;
}

/** A session that used everything: messages, state, tool calls (one failed), checkpoints, rollback, edit, switch. */
async function richSession(): Promise<SessionHandle> {
  const s = await fp.createSession({ userId: "alice", title: "Trip", metadata: { tags: ["travel"] } });
  const [first] = await s.append([
    { role: "user", content: "plan Lisbon", clientId: "c1", metadata: { lang: "en" } },
    { role: "assistant", content: { parts: ["sure", 1, null, { deep: [true] }] } },
    { role: "tool", content: null },
  ]);
  await s.setState({ city: "Lisbon", days: 3 });
  const start = await s.checkpoint({ name: "start", metadata: { by: "test" } });
  await s.invoke("write_file", { path: files.a, text: "booked" });
  await s.invoke("explode", { path: files.b }).catch(() => undefined);
  await s.checkpoint({ name: "after tools" });
  await s.checkpoint({ name: "soon gone", expiresIn: "2h" });
  const doomed = await s.checkpoint({ name: "deleted" });
  await s.deleteCheckpoint(doomed.id);
  await s.rollback(start.id);
  await s.append({ role: "user", content: "Porto instead" });
  const { branch } = await s.edit(first!.id, { role: "user", content: "plan Faro" });
  await s.setState((prev) => ({ ...(prev as object), city: "Faro" }));
  const root = (await s.branches()).find((b) => b.parentId === null)!;
  await s.switchBranch(root.id);
  await s.switchBranch(branch.id);
  return s;
}

describe("exportSession", () => {
  it("is deterministic: the same session gives the same bytes, also after reopening the database", async () => {
    const s = await richSession();
    const one = JSON.stringify(await fp.exportSession(s.id, { userId: "alice" }));
    const two = JSON.stringify(await fp.exportSession(s.id, { userId: "alice" }));
    expect(two).toBe(one);
    await fp.close();
    const again = open("source.db");
    expect(JSON.stringify(await again.exportSession(s.id, { userId: "alice" }))).toBe(one);
  });

  it("holds the whole tree with values, not JSON text, and no owner, applied set or journal", async () => {
    const s = await richSession();
    const doc = await fp.exportSession(s.id, { userId: "alice" });
    expect(doc.format).toBe("forkpoint.session");
    expect(doc.version).toBe(1);
    expect(doc.session).toMatchObject({ id: s.id, title: "Trip", metadata: { tags: ["travel"] } });
    expect(doc.branches.map((b) => b.reason)).toEqual(["root", "rollback", "edit"]);
    const msg = doc.entries.find((e) => e.kind === "message" && e.position === 2)!;
    expect(msg.content).toEqual({ parts: ["sure", 1, null, { deep: [true] }] });
    const calls = doc.entries.filter((e) => e.kind === "tool");
    expect(calls.map((c) => [c.tool, c.completion?.status])).toEqual([
      ["write_file", "succeeded"],
      ["explode", "failed"],
    ]);
    expect(doc.states.map((x) => x.value)).toEqual(expect.arrayContaining([{ city: "Lisbon", days: 3 }, { city: "Faro" }]));
    expect(doc.checkpoints.map((c) => c.name)).toEqual(["start", "after tools", "soon gone"]);
    expect(doc.events.map((e) => e.kind)).toEqual(expect.arrayContaining(["checkpoint-deleted", "switch"]));
    expect(JSON.stringify(doc)).not.toContain("alice");
  });

  it("refuses to export a damaged session (IntegrityError)", async () => {
    const s = await richSession();
    await fp.close();
    await sqlOn(path.join(dir, "source.db"), `UPDATE entries SET content = '"forged"' WHERE position = 1`);
    const again = open("source.db");
    expect(await rejectionOf(again.exportSession(s.id, { userId: "alice" }))).toBeInstanceOf(IntegrityError);
  });

  it("is scoped to the owner and validates its arguments", async () => {
    const s = await richSession();
    expect(await rejectionOf(fp.exportSession(s.id, { userId: "mallory" }))).toBeInstanceOf(NotFoundError);
    expect(await rejectionOf(fp.exportSession("ses_nope", { userId: "alice" }))).toBeInstanceOf(NotFoundError);
    expect((await rejectionOf(fp.exportSession(s.id, {} as never))).field).toBe("userId");
    expect(await rejectionOf(fp.exportSession("", { userId: "alice" }))).toBeInstanceOf(ValidationError);
  });
});

describe("importSession", () => {
  it("writes the session back in another database, for another user, with ids, times, history and hashes intact", async () => {
    const s = await richSession();
    const doc = await fp.exportSession(s.id, { userId: "alice" });
    const other = open("target.db");
    const copy = await other.importSession(JSON.parse(JSON.stringify(doc)) as SessionExport, { userId: "bob" });
    expect(copy.id).toBe(s.id);
    expect(copy.userId).toBe("bob");
    expect(await other.verify()).toMatchObject({ ok: true, problems: [] });
    expect(await copy.history()).toEqual(await s.history());
    expect(await copy.getState()).toEqual(await s.getState());
    expect(await copy.branches()).toEqual(await s.branches());
    expect((await copy.timeline()).items).toEqual((await s.timeline()).items);
    const bobs = (await other.listCheckpoints({ userId: "bob" })).items;
    expect(bobs.map((c) => [c.id, c.name, c.userId])).toEqual((await s.listCheckpoints()).items.map((c) => [c.id, c.name, "bob"]));
    const restored = await copy.restore(bobs.find((c) => c.name === "after tools")!.id);
    expect(restored.toolTrack.map((t) => [t.tool, t.status, t.applied])).toEqual([
      ["write_file", "succeeded", false],
      ["explode", "failed", false],
    ]);
    // The copy exports to the very same document.
    expect(JSON.stringify(await other.exportSession(copy.id, { userId: "bob" }))).toBe(JSON.stringify(doc));
    // And it goes on: new writes chain onto the imported ones.
    await copy.append({ role: "user", content: "and then?" });
    await copy.checkpoint({ name: "after import" });
    expect(await other.verify()).toMatchObject({ ok: true });
  });

  it("imports nothing applied, and never replays an imported call: moves of the copy run no tool", async () => {
    const s = await richSession();
    const doc = await fp.exportSession(s.id, { userId: "alice" });
    fs.writeFileSync(files.a, "untouched");
    const other = open("target.db");
    const copy = await other.importSession(doc, { userId: "bob" });
    const cp = (await copy.listCheckpoints({ name: "start" })).items[0]!;
    const moved = await copy.rollback(cp.id);
    expect([moved.undone, moved.replayed]).toEqual([[], []]);
    // The root branch holds the write_file call: in the source, switching there replays it; in the copy, never.
    const root = (await copy.branches()).find((b) => b.parentId === null)!;
    expect((await copy.plan({ branchId: root.id })).replayed).toEqual([]);
    const switched = await copy.switchBranch(root.id);
    expect(switched.replayed).toEqual([]);
    expect(switched.skipped.map((t) => t.tool)).toEqual(["write_file"]);
    expect(readOrNull(files.a)).toBe("untouched");
    const back = await s.switchBranch(root.id);
    expect(back.replayed.map((t) => t.tool)).toEqual(["write_file"]);
  });

  it("leaves expired checkpoints out of the export, but keeps one a branch forks from", async () => {
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "hi" });
    await s.checkpoint({ name: "gone", expiresIn: 1 });
    const forked = await s.checkpoint({ name: "forked", expiresIn: 400 });
    await s.append({ role: "assistant", content: "left behind" }); // so the rollback forks a branch
    await s.rollback(forked.id);
    await new Promise((r) => setTimeout(r, 450));
    const doc = await fp.exportSession(s.id, { userId: "alice" });
    expect(doc.checkpoints.map((c) => c.name)).toEqual(["forked"]);
    const copy = await open("target.db").importSession(doc, { userId: "bob" });
    expect((await copy.branches()).length).toBe(2);
  });

  it("refuses a document whose ids already exist, whole, leaving the database unchanged (ConflictError)", async () => {
    const s = await richSession();
    const doc = await fp.exportSession(s.id, { userId: "alice" });
    const file = path.join(dir, "source.db");
    const before = await dumpOf(file);
    const e = await rejectionOf(fp.importSession(doc, { userId: "bob" }));
    expect(e).toBeInstanceOf(ConflictError);
    expect(e.code).toBe("CONFLICT");
    expect(e.message).toContain(s.id);
    // Only one id taken (a checkpoint) is enough.
    const other = open("target.db");
    const lone = await other.createSession({ userId: "carol" });
    const tweaked = structuredClone(doc);
    tweaked.session.id = "ses_fresh";
    tweaked.branches = tweaked.branches.map((b) => ({ ...b }));
    expect(
      await rejectionOf(other.importSession({ ...tweaked, session: { ...tweaked.session, id: lone.id } }, { userId: "bob" })),
    ).toBeInstanceOf(ConflictError);
    expect(await dumpOf(file)).toEqual(before);
  });

  const tamperings: [string, (d: SessionExport) => void, typeof IntegrityError | typeof ValidationError, string?][] = [
    ["a message's content", (d) => void (d.entries.find((e) => e.kind === "message")!.content = "forged"), IntegrityError],
    ["an entry's time", (d) => void (d.entries[0]!.createdAt += 1), IntegrityError],
    ["a state document", (d) => void ((d.states[0]!.value as Record<string, unknown>).city = "Rome"), IntegrityError],
    [
      "a tool call's result",
      (d) => void (d.entries.find((e) => e.completion?.status === "succeeded")!.completion!.result = { previous: "x" }),
      IntegrityError,
    ],
    ["a checkpoint's head", (d) => void (d.checkpoints[0]!.headHash = "0".repeat(64)), IntegrityError],
    ["the format tag", (d) => void ((d as { format: string }).format = "other"), ValidationError, "document.format"],
    ["an unknown field", (d) => void ((d.session as Record<string, unknown>).owner = "x"), ValidationError, "document.session"],
    [
      "a branch whose parent is missing",
      (d) => void (d.branches[2]!.parentId = "br_missing"),
      ValidationError,
      "document.branches[2].parentId",
    ],
    ["a checkpoint renamed", (d) => void (d.checkpoints[0]!.name = "forged"), IntegrityError],
    ["a checkpoint's expiry removed", (d) => void (d.checkpoints.find((c) => c.expiresAt !== null)!.expiresAt = null), IntegrityError],
    ["a child branch called the root", (d) => void (d.branches[2]!.reason = "root"), ValidationError, "document.branches[2].reason"],
    [
      "a rollback's branch moved off its checkpoint",
      (d) => void (d.branches[1]!.forkCheckpointId = d.checkpoints[1]!.id),
      ValidationError,
      "document.branches[1].forkCheckpointId",
    ],
    ["a time beyond what a Date holds", (d) => void (d.checkpoints[0]!.createdAt = 1e300), ValidationError],
    [
      "an event on a branch of another session",
      (d) => void d.events.push({ kind: "switch", refId: "br_x", branchId: "br_elsewhere", detail: null, createdAt: 1 }),
      ValidationError,
    ],
    ["a role padded with spaces", (d) => void (d.entries.find((e) => e.kind === "message")!.role = " user"), ValidationError],
    ["a gap in a branch's positions", (d) => void d.entries.splice(1, 1), ValidationError],
    [
      "an entry on no branch",
      (d) => void d.entries.push({ ...d.entries[0]!, id: "msg_stray", branchId: "br_missing" }),
      ValidationError,
      "document.entries",
    ],
    [
      "a current branch that is not there",
      (d) => void (d.session.currentBranchId = "br_missing"),
      ValidationError,
      "document.session.currentBranchId",
    ],
    ["a duplicate entry id", (d) => void (d.entries[1]!.id = d.entries[0]!.id), ValidationError, "document.entries[1].id"],
    ["a state entry without its state", (d) => void (d.entries.find((e) => e.kind === "state")!.state = null), ValidationError],
    ["a non-JSON payload", (d) => void (d.entries[0]!.content = (() => 1) as never), ValidationError],
    [
      "a state of a version no stateVersion reaches (addressed right)",
      (d) => {
        const version = 2 ** 31;
        d.states.push({ hash: stateAddress(JSON.stringify({ v: version }), version), value: { v: version }, version });
        d.states.sort((a, b) => (a.hash < b.hash ? -1 : 1));
      },
      ValidationError,
    ],
  ];
  for (const [what, tamper, kind, field] of tamperings) {
    it(`refuses a document with ${what} changed (${kind.name}), leaving the database unchanged`, async () => {
      const s = await richSession();
      const doc = structuredClone(await fp.exportSession(s.id, { userId: "alice" }));
      tamper(doc);
      const other = open("target.db");
      await other.createSession({ userId: "carol" });
      const file = path.join(dir, "target.db");
      const before = await dumpOf(file);
      const e = await rejectionOf(other.importSession(doc, { userId: "bob" }));
      expect(e, e?.message).toBeInstanceOf(kind);
      if (field) expect(e.field).toBe(field);
      expect(await dumpOf(file)).toEqual(before);
    });
  }

  it("keeps a message's versions in creation order, not branch order, and exports the copy to the same bytes", async () => {
    const s = await fp.createSession({ userId: "alice" });
    await answersOutOfBranchOrder(s);
    const want = { versions: [1, ["answer 1", "answer 2"]], history: [1, ["answer 1", "answer 2"]] };
    expect(await lastVersions(s)).toEqual(want);
    const doc = await fp.exportSession(s.id, { userId: "alice" });
    const other = open("target.db");
    const copy = await other.importSession(JSON.parse(JSON.stringify(doc)) as SessionExport, { userId: "bob" });
    expect(await lastVersions(copy)).toEqual(want);
    expect(JSON.stringify(await other.exportSession(copy.id, { userId: "bob" }))).toBe(JSON.stringify(doc));
  });

  it("orders imported checkpoints by when they were imported: a listing begun before stays newest first", async () => {
    const s = await richSession();
    const doc = await fp.exportSession(s.id, { userId: "alice" });
    const other = open("target.db");
    const bob = await other.createSession({ userId: "bob" });
    await bob.checkpoint({ name: "b1" });
    const b2 = await bob.checkpoint({ name: "b2" });
    const first = await other.listCheckpoints({ userId: "bob", limit: 1 });
    expect(first.items.map((c) => c.name)).toEqual(["b2"]);
    await bob.deleteCheckpoint(b2.id);
    await other.importSession(doc, { userId: "bob" }); // its checkpoints were created long before b2
    const second = await other.listCheckpoints({ userId: "bob", cursor: first.nextCursor });
    expect(second.items.map((c) => c.name)).toEqual(["b1"]);
    const all = (await other.listCheckpoints({ userId: "bob" })).items.map((c) => c.name);
    expect(all.slice(-1)).toEqual(["b1"]);
    expect(all).toHaveLength(4);
  });

  it("validates its scope", async () => {
    const s = await richSession();
    const doc = await fp.exportSession(s.id, { userId: "alice" });
    const other = open("target.db");
    expect((await rejectionOf(other.importSession(doc, { userId: "" }))).field).toBe("userId");
    expect(await rejectionOf(other.importSession(null as never, { userId: "bob" }))).toBeInstanceOf(ValidationError);
  });
});
