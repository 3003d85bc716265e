// `forkpoint ui --postgres URL`: the same endpoints on a PostgreSQL database, moves only with --allow-writes.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";
import { startUiProcess, type UiProcess } from "./serve.js";
import { expectOneStateWhileMoving, twoBranches } from "./torn-tree.js";

let database: string;
let ids: { session: string; cp: string; root: string };
const running: UiProcess[] = [];

const call = async (ui: UiProcess, path: string, body?: unknown) => {
  const res = await fetch(`http://127.0.0.1:${ui.port}${path}`, {
    method: body ? "POST" : "GET",
    headers: { "x-forkpoint-token": ui.token, "content-type": "application/json" },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
};

describe.skipIf(!(await pgServer()))("forkpoint ui --postgres", () => {
  beforeAll(async () => {
    database = await freshPgDatabase();
    const fp = openForkpoint({ postgres: database });
    const s = await fp.createSession({ userId: "ann", title: "On PostgreSQL" });
    await s.append({ role: "user", content: "hello" });
    const cp = await s.checkpoint({ name: "start" });
    await s.append({ role: "user", content: "more" });
    ids = { session: s.id, cp: cp.id, root: (await s.info()).currentBranchId };
    await fp.close();
  });
  afterAll(() => running.forEach((ui) => ui.stop()));

  it("serves the tree read-only, and refuses moves without --allow-writes", async () => {
    const ui = await startUiProcess([], ["--postgres", database]);
    running.push(ui);
    expect((await fetch(`http://127.0.0.1:${ui.port}/api/users`)).status).toBe(401);
    expect((await call(ui, "/api/users")).body.items).toEqual([expect.objectContaining({ userId: "ann", sessions: 1 })]);
    const tree = await call(ui, `/api/session?user=ann&session=${ids.session}`);
    expect(tree.body.checkpoints.map((c: { id: string }) => c.id)).toEqual([ids.cp]);
    expect((await call(ui, `/api/session?user=bob&session=${ids.session}`)).status).toBe(404);
    const plan = await call(ui, "/api/plan", { user: "ann", session: ids.session, checkpointId: ids.cp });
    expect(plan.status).toBe(200);
    const refused = await call(ui, "/api/rollback", { user: "ann", session: ids.session, checkpointId: ids.cp });
    expect([refused.status, refused.body.error.code]).toEqual([409, "READ_ONLY"]);
    expect((await call(ui, `/api/session?user=ann&session=${ids.session}`)).body.info.currentBranchId).toBe(ids.root);
  });

  it("rolls back with --allow-writes", async () => {
    const ui = await startUiProcess([], ["--postgres", database, "--allow-writes"]);
    running.push(ui);
    const moved = await call(ui, "/api/rollback", { user: "ann", session: ids.session, checkpointId: ids.cp });
    expect(moved.status).toBe(200);
    const fp = openForkpoint({ postgres: database });
    try {
      const s = await fp.getSession(ids.session, { userId: "ann" });
      expect((await s.info()).currentBranchId).toBe(moved.body.branch.id);
      expect((await s.history()).map((m) => m.content)).toEqual(["hello"]);
    } finally {
      await fp.close();
    }
  });

  it("plans a move with files when asked its scope, and refuses a scope plan does not know", async () => {
    const ui = await startUiProcess([], ["--postgres", database]);
    running.push(ui);
    const files = mkdtempSync(join(tmpdir(), "forkpoint-ui-pg-scope-"));
    const fp = openForkpoint({ postgres: database });
    try {
      const s = await fp.createSession({ userId: "scoped", title: "with files" });
      writeFileSync(join(files, "a.txt"), "one\n");
      await s.attachWorkspace(files);
      const cp = await s.checkpoint({ name: "one" });
      writeFileSync(join(files, "a.txt"), "by hand\n");
      const target = { user: "scoped", session: s.id, checkpointId: cp.id };
      expect((await call(ui, "/api/plan", target)).body.files).toBeUndefined();
      const both = await call(ui, "/api/plan", { ...target, scope: "both" });
      expect([both.status, both.body.files, both.body.drift]).toEqual([200, { written: ["a.txt"], deleted: [] }, ["a.txt"]]);
      const bad = await call(ui, "/api/plan", { ...target, scope: "everything" });
      expect([bad.status, bad.body.error.field]).toEqual([400, "scope"]);
    } finally {
      await fp.close();
      rmSync(files, { recursive: true, force: true });
    }
  });

  it("a session's tree is one state of it while another process moves the session, over and over", async () => {
    const ui = await startUiProcess([], ["--postgres", database]);
    running.push(ui);
    const w = openForkpoint({ postgres: database });
    const made = await twoBranches(w, "mo").finally(() => w.close());
    // Fewer reads than on SQLite: each costs a few round trips.
    await expectOneStateWhileMoving(database, { user: "mo", ...made }, async (path) => (await call(ui, path)).body, 150);
  });
});
