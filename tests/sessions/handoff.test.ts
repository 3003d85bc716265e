// handoff: a new session for another user, seeded with a checkpoint's history and state but none of its tool calls.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { IntegrityError, NotFoundError, ValidationError, defineTool, type Forkpoint } from "../../src/index.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { dumpOf, openForkpoint, sqlOn } from "../fixtures/backend.js";

let dir: string;
let file: string;
let fp: Forkpoint;
let undone: string[];
beforeEach(() => {
  dir = makeTempDir("forkpoint-handoff-");
  file = join(dir, "db.sqlite");
  undone = [];
  const tool = defineTool({ name: "t", run: async (a: { k: string }) => a, undo: async ({ args }) => void undone.push(args.k) });
  fp = openForkpoint({ path: file, tools: [tool] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

async function aliceWithCheckpoint() {
  const alice = await fp.createSession({ userId: "alice", title: "Trip" });
  await alice.append([
    { role: "user", content: "plan Lisbon", clientId: "c1", metadata: { lang: "en" } },
    { role: "assistant", content: { parts: ["sure"] } },
  ]);
  await alice.setState({ city: "Lisbon" });
  await alice.invoke("t", { k: "booked" });
  const cp = await alice.checkpoint({ name: "ready for bob" });
  await alice.append({ role: "user", content: "after the checkpoint" });
  return { alice, cp };
}

describe("handoff", () => {
  it("seeds the new owner's session with the checkpoint's history and state, and links it to its origin", async () => {
    const { alice, cp } = await aliceWithCheckpoint();
    const bob = await alice.handoff(cp.id, { userId: "bob", title: "Lisbon, continued" });
    expect(bob.userId).toBe("bob");
    const info = await bob.info();
    expect(info).toMatchObject({ userId: "bob", title: "Lisbon, continued", origin: { sessionId: alice.id, checkpointId: cp.id } });
    expect((await bob.history()).map((m) => [m.role, m.content, m.clientId, m.metadata])).toEqual([
      ["user", "plan Lisbon", "c1", { lang: "en" }],
      ["assistant", { parts: ["sure"] }, null, null],
    ]);
    expect(await bob.getState()).toEqual({ city: "Lisbon" });
    expect((await alice.info()).origin).toBeNull();
    // The new owner reaches it; the old one does not.
    expect((await fp.getSession(bob.id, { userId: "bob" })).id).toBe(bob.id);
    await expect(fp.getSession(bob.id, { userId: "alice" })).rejects.toBeInstanceOf(NotFoundError);
  });

  it("copies no tool calls: nothing is applied in the new session, so its moves undo nothing", async () => {
    const { alice, cp } = await aliceWithCheckpoint();
    const bob = await alice.handoff(cp.id, { userId: "bob" });
    expect(await bob.toolTrack()).toEqual([]);
    const start = await bob.checkpoint();
    await bob.append({ role: "user", content: "more" });
    expect((await bob.rollback(start.id)).undone).toEqual([]);
    expect(undone).toEqual([]);
  });

  it("shows in the source session's timeline", async () => {
    const { alice, cp } = await aliceWithCheckpoint();
    const bob = await alice.handoff(cp.id, { userId: "bob" });
    const items = (await alice.timeline()).items;
    expect(items[0]).toMatchObject({ kind: "handoff", id: bob.id });
  });

  it("refuses another user's checkpoint, bad targets and a damaged checkpoint, changing nothing", async () => {
    const { alice, cp } = await aliceWithCheckpoint();
    const mallory = await fp.createSession({ userId: "mallory" });
    const before = await dumpOf(file);
    await expect(mallory.handoff(cp.id, { userId: "mallory" })).rejects.toBeInstanceOf(NotFoundError);
    await expect(alice.handoff(cp.id, { userId: "" })).rejects.toBeInstanceOf(ValidationError);
    await expect(alice.handoff(cp.id, { userId: "bob", extra: 1 } as never)).rejects.toBeInstanceOf(ValidationError);
    expect(await dumpOf(file)).toEqual(before);
    await sqlOn(file, `UPDATE entries SET content = '"plan Porto"' WHERE content = '"plan Lisbon"'`);
    await expect(alice.handoff(cp.id, { userId: "bob" })).rejects.toBeInstanceOf(IntegrityError);
  });
});
