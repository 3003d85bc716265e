// Every call is scoped to one user: another user's ids behave exactly like unknown ids (NotFoundError, same message).
import { beforeAll, afterAll, describe, expect, it } from "vitest";
import { NotFoundError, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir, unknownId, withIdMasked } from "../helpers.js";
import path from "node:path";
import { dumpOf, openForkpoint } from "../fixtures/backend.js";

let dir: string;
let file: string;
let fp: Forkpoint;
let alice: SessionHandle;
/** Bob's ids: his session, a checkpoint, a message, a non-root branch. */
let bob: { session: string; checkpoint: string; message: string; branch: string; rootBranch: string };
/** Alice's own ids, valid wherever a second id is needed. */
let mine: { checkpoint: string; message: string; branch: string };

beforeAll(async () => {
  dir = makeTempDir();
  file = path.join(dir, "owners.db");
  fp = openForkpoint({ path: file });
  alice = await fp.createSession({ userId: "alice" });
  const [am] = await alice.append([
    { role: "user", content: "a1" },
    { role: "assistant", content: "a2" },
  ]);
  const acp = await alice.checkpoint({ name: "shared-name" });
  mine = { checkpoint: acp.id, message: am!.id, branch: (await alice.info()).currentBranchId };

  const b = await fp.createSession({ userId: "bob" });
  const rootBranch = (await b.info()).currentBranchId;
  const [bm] = await b.append([
    { role: "user", content: "b1" },
    { role: "assistant", content: "b2" },
  ]);
  const bcp = await b.checkpoint({ name: "shared-name" });
  const { branch } = await b.rollback(bcp.id);
  bob = { session: b.id, checkpoint: bcp.id, message: bm!.id, branch: branch.id, rootBranch };
});

afterAll(async () => {
  await fp.close();
  removeDir(dir);
});

/**
 * Calls `call` with bob's id and with an unknown id of the same shape: both must reject with NotFoundError,
 * same code, same kind, and the same message once the id is masked; neither may change the database.
 */
async function expectLikeUnknown(foreignId: string, prefix: string, call: (id: string) => Promise<unknown>): Promise<void> {
  const missing = unknownId(prefix);
  const before = await dumpOf(file);
  const foreign = await rejectionOf(call(foreignId));
  const unknown = await rejectionOf(call(missing));
  expect(await dumpOf(file)).toEqual(before);
  expect(foreign).toBeInstanceOf(NotFoundError);
  expect(unknown).toBeInstanceOf(NotFoundError);
  expect(foreign.code).toBe("NOT_FOUND");
  expect(foreign.code).toBe(unknown.code);
  expect(foreign.kind).toBe(unknown.kind);
  expect(foreign.constructor).toBe(unknown.constructor);
  expect(withIdMasked(foreign.message, foreignId)).toBe(withIdMasked(unknown.message, missing));
  expect(withIdMasked(foreign.message, foreignId)).not.toContain("bob");
}

const calls: [string, "session" | "checkpoint" | "message" | "branch", (id: string) => Promise<unknown>][] = [
  ["fp.getSession(sessionId)", "session", (id) => fp.getSession(id, { userId: "alice" })],
  ["restore(checkpointId)", "checkpoint", (id) => alice.restore(id)],
  ["rollback(checkpointId)", "checkpoint", (id) => alice.rollback(id)],
  ["deleteCheckpoint(checkpointId)", "checkpoint", (id) => alice.deleteCheckpoint(id)],
  ["diff(checkpointId, mine)", "checkpoint", (id) => alice.diff(id, mine.checkpoint)],
  ["diff(mine, checkpointId)", "checkpoint", (id) => alice.diff(mine.checkpoint, id)],
  ["plan({ checkpointId })", "checkpoint", (id) => alice.plan({ checkpointId: id })],
  ["edit(messageId)", "message", (id) => alice.edit(id, { role: "user", content: "x" })],
  ["versions(messageId)", "message", (id) => alice.versions(id)],
  ["plan({ messageId })", "message", (id) => alice.plan({ messageId: id })],
  ["history({ branchId })", "branch", (id) => alice.history({ branchId: id })],
  ["toolTrack({ branchId })", "branch", (id) => alice.toolTrack({ branchId: id })],
  ["switchBranch(branchId)", "branch", (id) => alice.switchBranch(id)],
  ["plan({ branchId })", "branch", (id) => alice.plan({ branchId: id })],
];

describe("another user's id behaves exactly like an unknown id", () => {
  for (const [name, kind, call] of calls) {
    it(`${name}: NotFoundError with the same message, database unchanged`, async () => {
      const foreignId =
        kind === "session" ? bob.session : kind === "checkpoint" ? bob.checkpoint : kind === "message" ? bob.message : bob.branch;
      const prefix = { session: "ses", checkpoint: "cp", message: "msg", branch: "br" }[kind];
      await expectLikeUnknown(foreignId, prefix, call);
    });
  }

  it("history/switchBranch of bob's root branch: NotFoundError like an unknown branch", async () => {
    await expectLikeUnknown(bob.rootBranch, "br", (id) => alice.history({ branchId: id }));
    await expectLikeUnknown(bob.rootBranch, "br", (id) => alice.switchBranch(id));
  });

  it("fp.getSession of alice's session for bob is NotFoundError like an unknown session", async () => {
    const missing = unknownId("ses");
    const foreign = await rejectionOf(fp.getSession(alice.id, { userId: "bob" }));
    const unknown = await rejectionOf(fp.getSession(missing, { userId: "bob" }));
    expect(foreign).toBeInstanceOf(NotFoundError);
    expect(withIdMasked(foreign.message, alice.id)).toBe(withIdMasked(unknown.message, missing));
  });

  it("listCheckpoints filtered by bob's session gives alice the same answer as an unknown session", async () => {
    const foreign = await fp.listCheckpoints({ userId: "alice", sessionId: bob.session }).catch((e: unknown) => e);
    const unknown = await fp.listCheckpoints({ userId: "alice", sessionId: unknownId("ses") }).catch((e: unknown) => e);
    if (foreign instanceof Error) {
      expect(unknown).toBeInstanceOf(foreign.constructor);
      expect(withIdMasked(foreign.message, bob.session)).toBe(withIdMasked((unknown as Error).message, unknownId("ses")));
    } else {
      expect(foreign).toEqual(unknown);
      expect(foreign).toEqual({ items: [], nextCursor: null });
    }
  });

  it("listCheckpoints never shows another user's checkpoints, even with a name both share", async () => {
    const page = await fp.listCheckpoints({ userId: "alice", name: "shared-name" });
    expect(page.items.map((c) => c.id)).toEqual([mine.checkpoint]);
  });

  it("listSessions never shows another user's sessions", async () => {
    expect((await fp.listSessions({ userId: "alice" })).items.map((s) => s.id)).toEqual([alice.id]);
    expect((await fp.listSessions({ userId: "bob" })).items.map((s) => s.id)).toEqual([bob.session]);
  });

  it("listSessions with a cursor from another user's listing still shows only the caller's sessions", async () => {
    const extra: string[] = [];
    const { fp: other, dir: otherDir } = await (async () => {
      const d = makeTempDir();
      return { fp: openForkpoint({ path: path.join(d, "x.db") }), dir: d };
    })();
    try {
      for (let i = 0; i < 3; i++) {
        extra.push((await other.createSession({ userId: "alice" })).id);
        await other.createSession({ userId: "bob" });
      }
      const bobsPage = await other.listSessions({ userId: "bob", limit: 1 });
      const page = await other.listSessions({ userId: "alice", cursor: bobsPage.nextCursor });
      expect(page.items.every((s) => s.userId === "alice")).toBe(true);
    } finally {
      await other.close();
      removeDir(otherDir);
    }
  });

  it("a checkpoint of another session of the same user is not found in this session", async () => {
    const second = await fp.createSession({ userId: "alice" });
    const cp = await second.checkpoint();
    await expectLikeUnknown(cp.id, "cp", (id) => alice.restore(id));
    await expectLikeUnknown(cp.id, "cp", (id) => alice.rollback(id));
  });

  it("alice's own ids still work (the setup is sound)", async () => {
    expect((await alice.restore(mine.checkpoint)).history).toHaveLength(2);
    expect((await alice.versions(mine.message)).count).toBe(1);
    expect(await alice.history({ branchId: mine.branch })).toHaveLength(2);
  });
});
