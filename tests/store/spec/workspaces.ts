// Spec: a session's workspace record and stat cache, content-addressed file contents (as they are and in packs),
// snapshots as trees, checkpoints' files, and pruning what nothing holds.
import { expect, it } from "vitest";
import type { CheckpointFilesRow, Store, Tx, WorkspaceRow } from "../../../src/store/port/index.js";
import { at, checkpoint, hex, seed } from "./fixture.js";

const bytes = (text: string) => Buffer.from(text, "utf8");

const workspace = (over: Partial<WorkspaceRow> = {}): WorkspaceRow => ({
  sessionId: "ws",
  dir: "/work/x",
  exclude: '["node_modules"]',
  gitignore: true,
  manifestId: 0,
  updatedAt: at(80),
  host: "h1",
  ...over,
});

export function workspacesSpec(store: () => Store): void {
  let m1 = 0;
  let m2 = 0;

  it("stores contents once per hash, as they are and in packs, and reads either back", async () => {
    await seed(store(), "ws", "alice", 4);
    const pack = await store().write({ sessionId: "ws" }, function* (tx) {
      yield* tx.insertBlob(hex("a"), bytes("alpha\u0000\u00ff"));
      yield* tx.insertBlob(hex("a"), bytes("ignored"));
      yield* tx.insertBlob(hex("empty"), bytes(""));
      return yield* tx.insertPack("deflate-raw", bytes("packed"), [
        { hash: hex("p1"), offset: 0, size: 3 },
        { hash: hex("p2"), offset: 3, size: 3 },
        { hash: hex("a"), offset: 0, size: 1 },
      ]);
    });
    const got = await store().read(function* (tx: Tx) {
      const rows = yield* tx.blobRows([hex("a"), hex("empty"), hex("p2"), hex("none")]);
      return {
        rows: new Map(rows.map((r) => [r.hash, r])),
        present: yield* tx.presentBlobs([hex("a"), hex("none"), hex("p1")]),
        packs: yield* tx.getPacks([pack, 999_999]),
      };
    });
    expect(got.rows.size).toBe(3);
    expect(got.rows.get(hex("a"))).toMatchObject({ content: bytes("alpha\u0000\u00ff"), packId: null });
    expect(got.rows.get(hex("empty"))!.content).toEqual(bytes(""));
    expect(got.rows.get(hex("p2"))).toMatchObject({ packId: pack, packOffset: 3, size: 3 });
    expect(got.present.sort()).toEqual([hex("a"), hex("p1")].sort());
    expect(got.packs).toEqual([{ id: pack, codec: "deflate-raw", content: bytes("packed") }]);
  });

  it("stores trees and manifests once per hash, each manifest under one id", async () => {
    const ids = await store().write({ sessionId: "ws" }, function* (tx) {
      yield* tx.insertTrees([
        { hash: hex("t-sub"), body: JSON.stringify([["p2", hex("p2")]]) },
        {
          hash: hex("t-root"),
          body: JSON.stringify([
            ["p1", hex("p1")],
            ["sub/", hex("t-sub")],
          ]),
        },
      ]);
      yield* tx.insertTrees([{ hash: hex("t-sub"), body: "ignored" }]);
      return [
        yield* tx.putManifest(hex("m1"), JSON.stringify({ "a.txt": hex("a") }), null),
        yield* tx.putManifest(hex("m1"), "ignored", null),
        yield* tx.putManifest(hex("m2"), "{}", hex("t-root")),
      ];
    });
    [m1, , m2] = ids as [number, number, number];
    expect(ids[1]).toBe(m1);
    expect(m2).not.toBe(m1);
    const trees = await store().read((tx) => tx.getTrees([hex("t-root"), hex("t-sub"), hex("none")]));
    expect(new Map(trees.map((t) => [t.hash, t.body])).get(hex("t-sub"))).toBe(JSON.stringify([["p2", hex("p2")]]));
    expect(trees).toHaveLength(2);
    expect(await store().read((tx) => tx.manifestId(hex("m1")))).toBe(m1);
    expect(await store().read((tx) => tx.manifestId(hex("none")))).toBeUndefined();
    expect(await store().read((tx) => tx.getManifest(m1))).toEqual({
      hash: hex("m1"),
      body: JSON.stringify({ "a.txt": hex("a") }),
      root: null,
    });
    expect((await store().read((tx) => tx.getManifest(m2)))?.root).toBe(hex("t-root"));
    expect(await store().read((tx) => tx.getManifest(999_999))).toBeUndefined();
  });

  it("attaches a workspace (marking the session), records its files, and journals a restore one process claims", async () => {
    await store().write({ sessionId: "ws" }, (tx) => tx.putWorkspace(workspace({ manifestId: m1 })));
    expect(await store().read((tx) => tx.getWorkspace("ws"))).toMatchObject({ ...workspace({ manifestId: m1 }), restoring: null });
    expect((await store().read((tx) => tx.getSession("ws")))?.hasWorkspace).toBe(true);
    expect(await store().read((tx) => tx.getWorkspace("nope"))).toBeUndefined();
    const restoring = JSON.stringify({ manifestId: m2, pid: 1, pidStart: null });
    const claims = await store().write({ sessionId: "ws" }, function* (tx) {
      yield* tx.setWorkspaceManifest("ws", m2, at(82));
      yield* tx.setWorkspaceRestoring("ws", restoring);
      return [yield* tx.claimWorkspaceRestore("ws", "other", "x"), yield* tx.claimWorkspaceRestore("ws", restoring, restoring + " ")];
    });
    expect(claims).toEqual([false, true]);
    expect(await store().read((tx) => tx.getWorkspace("ws"))).toMatchObject({
      manifestId: m2,
      updatedAt: at(82),
      restoring: restoring + " ",
    });
    expect((await store().read((tx) => tx.restoringWorkspaces())).map((w) => w.sessionId)).toContain("ws");
    await store().write({ sessionId: "ws" }, (tx) => tx.setWorkspaceRestoring("ws", null));
    expect((await store().read((tx) => tx.restoringWorkspaces())).map((w) => w.sessionId)).not.toContain("ws");
  });

  it("keeps a stat cache per directory, replaced and deleted by directory, and cleared on re-attach", async () => {
    await store().write({ sessionId: "ws" }, function* (tx) {
      yield* tx.putWorkspaceStats(
        "ws",
        [
          { dir: "", body: bytes("root") },
          { dir: "sub", body: bytes("sub") },
        ],
        [],
      );
      yield* tx.putWorkspaceStats("ws", [{ dir: "sub", body: bytes("sub 2") }], [""]);
    });
    expect(await store().read((tx) => tx.workspaceStats("ws"))).toEqual([{ dir: "sub", body: bytes("sub 2") }]);
    await store().write({ sessionId: "ws" }, (tx) => tx.putWorkspace(workspace({ manifestId: m2, dir: "/work/y", gitignore: false })));
    expect(await store().read((tx) => tx.workspaceStats("ws"))).toEqual([]);
  });

  it("records a checkpoint's files and finds a branch's newest ones by position", async () => {
    await store().write({ sessionId: "ws" }, function* (tx) {
      yield* tx.insertCheckpoint(checkpoint("ws-c2", "ws", 2), at(41));
      yield* tx.insertCheckpoint(checkpoint("ws-c3", "ws", 3), at(42));
      yield* tx.insertCheckpoint(checkpoint("ws-c4", "ws", 4), at(43));
      yield* tx.insertCheckpointFiles({ checkpointId: "ws-c2", manifestId: m1, dir: "/work/y", exclude: "[]", gitignore: true });
      yield* tx.insertCheckpointFiles({ checkpointId: "ws-c4", manifestId: m2, dir: "/work/y", exclude: "[]", gitignore: false });
    });
    const files = (manifestId: number, gitignore: boolean) => ({ manifestId, dir: "/work/y", exclude: "[]", gitignore });
    const got = await store().read(function* (tx) {
      return {
        c2: yield* tx.checkpointManifest("ws-c2"),
        none: yield* tx.checkpointManifest("ws-c3"),
        last: yield* tx.lastCheckpointFiles("ws-b1", 0, 4),
        lastBefore: yield* tx.lastCheckpointFiles("ws-b1", 0, 3),
        lastNone: yield* tx.lastCheckpointFiles("ws-b1", 3, 3),
        position: yield* tx.lastFilesPosition("ws-b1", 0, 3),
      };
    });
    expect(got).toMatchObject({ c2: files(m1, true), last: files(m2, false), lastBefore: files(m1, true), position: 2 });
    expect([got.none, got.lastNone]).toEqual([undefined, undefined]);
  });

  it("keeps the calls a checkpoint's files do not hold, finds those awaiting a call, and rewrites them", async () => {
    await seed(store(), "wc", "alice", 4);
    await seed(store(), "wd", "alice", 1);
    const base = { dir: "/work/c", exclude: "[]", gitignore: true };
    const mid = await store().write({ sessionIds: ["wc", "wd"] }, function* (tx) {
      const manifestId = yield* tx.putManifest(hex("wc-m"), "{}", null);
      for (const p of [1, 2, 3, 4]) yield* tx.insertCheckpoint(checkpoint(`wc-c${p}`, "wc", p), at(50 + p));
      yield* tx.insertCheckpoint(checkpoint("wd-c1", "wd", 1), at(55));
      const files = { manifestId, ...base };
      yield* tx.insertCheckpointFiles({ checkpointId: "wc-c1", ...files, unapplied: '["wc-b1-e2"]', unknown: '["wc-b1-e3","wc-b1-e30"]' });
      // Absent and null alike: every call applied, none unknown.
      yield* tx.insertCheckpointFiles({ checkpointId: "wc-c2", ...files });
      yield* tx.insertCheckpointFiles({ checkpointId: "wc-c3", ...files, unapplied: null, unknown: '["wc-b1-e30"]' });
      yield* tx.insertCheckpointFiles({ checkpointId: "wd-c1", ...files, unapplied: null, unknown: '["wc-b1-e3"]' });
      return manifestId;
    });
    const files = { manifestId: mid, ...base };
    const calls = (row: CheckpointFilesRow | undefined) => row && [row.unapplied ?? null, row.unknown ?? null];
    const read = () =>
      store().read(function* (tx) {
        return {
          c1: yield* tx.checkpointManifest("wc-c1"),
          c2: yield* tx.checkpointManifest("wc-c2"),
          c3: yield* tx.checkpointManifest("wc-c3"),
          c4: yield* tx.checkpointManifest("wc-c4"),
          last1: yield* tx.lastCheckpointFiles("wc-b1", 0, 1),
          last3: yield* tx.lastCheckpointFiles("wc-b1", 0, 4),
        };
      });
    const before = await read();
    expect(before.c1).toEqual({ ...files, unapplied: '["wc-b1-e2"]', unknown: '["wc-b1-e3","wc-b1-e30"]' });
    expect(before.last1).toEqual(before.c1);
    expect(before.c2).toMatchObject(files);
    expect(calls(before.c2)).toEqual([null, null]);
    expect(calls(before.c3)).toEqual([null, '["wc-b1-e30"]']);
    expect(calls(before.last3)).toEqual([null, '["wc-b1-e30"]']);
    expect(before.c4).toBeUndefined();

    // A superset of the session's checkpoints whose `unknown` names the call: never one that names none, nor another
    // session's, nor one without files.
    const awaiting = async (sessionId: string, entryId: string) =>
      new Map((await store().read((tx) => tx.checkpointsAwaiting(sessionId, entryId))).map((r) => [r.checkpointId, r]));
    const e3 = await awaiting("wc", "wc-b1-e3");
    expect(e3.get("wc-c1")).toEqual({ checkpointId: "wc-c1", unapplied: '["wc-b1-e2"]', unknown: '["wc-b1-e3","wc-b1-e30"]' });
    expect([...e3.keys()].filter((id) => id !== "wc-c1" && id !== "wc-c3")).toEqual([]);
    const e30 = await awaiting("wc", "wc-b1-e30");
    expect(e30.get("wc-c3")).toEqual({ checkpointId: "wc-c3", unapplied: null, unknown: '["wc-b1-e30"]' });
    expect([...e30.keys()].sort()).toEqual(["wc-c1", "wc-c3"]);
    expect([...(await awaiting("wd", "wc-b1-e3")).keys()]).toEqual(["wd-c1"]);
    expect([...(await awaiting("nope", "wc-b1-e3")).keys()]).toEqual([]);

    // A call's outcome learned: the record is rewritten whole, the files and other checkpoints left as they are.
    await store().write({ sessionId: "wc" }, function* (tx) {
      yield* tx.setCheckpointCalls({ checkpointId: "wc-c1", unapplied: '["wc-b1-e2","wc-b1-e3"]', unknown: null });
      yield* tx.setCheckpointCalls({ checkpointId: "wc-c3", unapplied: null, unknown: null });
      yield* tx.setCheckpointCalls({ checkpointId: "wc-c4", unapplied: '["x"]', unknown: '["x"]' });
    });
    const after = await read();
    expect(after.c1).toMatchObject(files);
    expect(calls(after.c1)).toEqual(['["wc-b1-e2","wc-b1-e3"]', null]);
    expect(calls(after.last1)).toEqual(['["wc-b1-e2","wc-b1-e3"]', null]);
    expect(calls(after.c2)).toEqual([null, null]);
    expect(after.c3).toMatchObject(files);
    expect(calls(after.c3)).toEqual([null, null]);
    expect(after.c4).toBeUndefined();
    expect([...(await awaiting("wc", "wc-b1-e3")).keys()]).toEqual([]);
    expect([...(await awaiting("wc", "wc-b1-e30")).keys()]).toEqual([]);
    expect([...(await awaiting("wd", "wc-b1-e3")).keys()]).toEqual(["wd-c1"]);
  });

  it("prunes contents, packs, trees and manifests nothing holds, and keeps the rest", async () => {
    await store().write({ sessionId: "ws" }, function* (tx) {
      yield* tx.insertBlob(hex("orphan"), bytes("orphan"));
      yield* tx.insertPack("deflate-raw", bytes("lonely"), [{ hash: hex("lonely"), offset: 0, size: 6 }]);
      yield* tx.insertTrees([{ hash: hex("t-orphan"), body: "[]" }]);
      yield* tx.putManifest(hex("m-orphan"), "{}", null);
    });
    const deleted = await store().write({ global: true }, (tx) => tx.deleteUnreferencedFiles());
    expect(deleted).toBeGreaterThanOrEqual(4);
    const got = await store().read(function* (tx) {
      return {
        gone: yield* tx.presentBlobs([hex("orphan"), hex("lonely")]),
        kept: (yield* tx.presentBlobs([hex("a"), hex("p1"), hex("p2")])).sort(),
        trees: (yield* tx.getTrees([hex("t-orphan"), hex("t-root"), hex("t-sub")])).map((t) => t.hash).sort(),
        manifest: yield* tx.manifestId(hex("m-orphan")),
      };
    });
    expect(got).toEqual({
      gone: [],
      kept: [hex("a"), hex("p1"), hex("p2")].sort(),
      trees: [hex("t-root"), hex("t-sub")].sort(),
      manifest: undefined,
    });
  });
}
