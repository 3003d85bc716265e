// A database whose workspace snapshots were stored before trees and packs (a flat `{ path: hash }` manifest per
// snapshot, every content as it is, no stat cache), as migrating one written by an earlier version leaves it: its
// checkpoints still diff, restore and verify, and new checkpoints build on them.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { inflateRawSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { filesUnder, makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint, sqlOn } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let dbFile: string;
let fp: Forkpoint;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};
const sha = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

beforeEach(() => {
  dir = makeTempDir("forkpoint-wsup-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  dbFile = path.join(dir, "forkpoint.db");
  fp = openForkpoint({ path: dbFile });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

/** Rewrites every snapshot and content into the form earlier versions stored: flat manifests, contents as they are. */
async function downgradeStorage(): Promise<void> {
  const q = <T>(sql: string, params: unknown[] = []) => sqlOn<T>(dbFile, sql, params);
  const trees = new Map((await q<{ hash: string; body: string }>("SELECT hash, body FROM file_trees")).map((t) => [t.hash, t.body]));
  const flatten = (hash: string, prefix: string, out: Record<string, string>) => {
    for (const [name, h] of JSON.parse(trees.get(hash)!) as [string, string][]) {
      if (name.endsWith("/")) flatten(h, `${prefix}${name}`, out);
      else out[`${prefix}${name}`] = h;
    }
    return out;
  };
  for (const m of await q<{ id: number; root: string }>("SELECT id, root FROM file_manifests WHERE root IS NOT NULL")) {
    const files = flatten(m.root, "", {});
    const sorted = Object.fromEntries(
      Object.keys(files)
        .sort()
        .map((p) => [p, files[p]!]),
    );
    const body = JSON.stringify(sorted);
    await q("UPDATE file_manifests SET body = $1, hash = $2, root = NULL WHERE id = $3", [body, sha(body), m.id]);
  }
  const packs = new Map(
    (await q<{ id: number; content: Buffer }>("SELECT id, content FROM file_packs")).map((p) => [Number(p.id), inflateRawSync(p.content)]),
  );
  for (const b of await q<{ hash: string; pack_id: number; pack_offset: number; size: number }>(
    "SELECT hash, pack_id, pack_offset, size FROM file_blobs WHERE pack_id IS NOT NULL",
  )) {
    const at = Number(b.pack_offset);
    await q("UPDATE file_blobs SET content = $1, pack_id = NULL, pack_offset = NULL, size = NULL WHERE hash = $2", [
      packs.get(Number(b.pack_id))!.subarray(at, at + Number(b.size)),
      b.hash,
    ]);
  }
  await q("DELETE FROM file_trees");
  await q("DELETE FROM file_packs");
  await q("DELETE FROM workspace_stats");
}

describe("workspace snapshots stored before trees and packs", () => {
  it("diff, restore, verify and prune as before; new checkpoints build on them", async () => {
    const big = (tag: string) => `${tag} `.repeat(200);
    write("README.md", "hello\n");
    write("src/app.ts", big("app v1"));
    write("src/lib/util.ts", big("util"));
    const s = await fp.createSession({ userId: "u" });
    // Attached before .gitignore files were read: such workspaces keep gitignore off.
    await s.attachWorkspace(ws, { gitignore: false });
    const a = await s.checkpoint({ name: "a" });
    write("src/app.ts", big("app v2"));
    write("notes.txt", "new");
    fs.rmSync(path.join(ws, "src/lib/util.ts"));
    const b = await s.checkpoint({ name: "b" });
    await fp.close();
    await downgradeStorage();

    fp = openForkpoint({ path: dbFile });
    const again = await fp.getSession(s.id, { userId: "u" });
    expect(await fp.verify({ sessionId: s.id })).toMatchObject({ ok: true, problems: [] });
    const d = await again.diffFiles(a.id, b.id);
    expect([d.added, d.modified, d.deleted]).toEqual([["notes.txt"], ["src/app.ts"], ["src/lib/util.ts"]]);
    expect((await again.diffFiles(b.id, "disk")).patch).toBe("");

    await again.rollback(a.id, { scope: "files" });
    expect(filesUnder(ws, dbFile)).toEqual({ "README.md": "hello\n", "src/app.ts": big("app v1"), "src/lib/util.ts": big("util") });

    // A new snapshot (trees and packs) over the old ones; moves between both kinds.
    write("src/app.ts", big("app v3"));
    const c = await again.checkpoint({ name: "c" });
    await again.rollback(b.id, { scope: "files" });
    expect(filesUnder(ws, dbFile)).toEqual({ "README.md": "hello\n", "notes.txt": "new", "src/app.ts": big("app v2") });
    await again.rollback(c.id, { scope: "files" });
    expect(fs.readFileSync(path.join(ws, "src/app.ts"), "utf8")).toBe(big("app v3"));
    expect((await again.diffFiles(a.id, c.id)).modified).toEqual(["src/app.ts"]);

    // Prune keeps every content an old or a new snapshot holds.
    await again.deleteCheckpoint(b.id);
    await fp.prune({ vacuum: false });
    expect(await fp.verify({ sessionId: s.id })).toMatchObject({ ok: true, problems: [] });
    await again.rollback(a.id, { scope: "files" });
    expect(fs.readFileSync(path.join(ws, "src/lib/util.ts"), "utf8")).toBe(big("util"));
  });
});
