// The UI server over plain HTTP: the token on every request, loopback only, writes only with allowWrites, inputs checked.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openForkpoint, type Forkpoint } from "../../src/index.js";
import { startUiServer, type UiServer } from "../../src/ui/server.js";
import { expectOneStateWhileMoving, twoBranches } from "./torn-tree.js";

const dir = mkdtempSync(join(tmpdir(), "forkpoint-ui-server-"));
const db = join(dir, "ui.db");
const assets = join(dir, "web");
let fp: Forkpoint;
let ui: UiServer;
let ids: { session: string; cp: string; other: string };

/** A response whose JSON the assertions read as they need (the shapes are the public API's). */
type JsonResponse = Omit<Response, "json"> & { json(): Promise<any> };
const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
const get = (path: string, headers: Record<string, string> = {}) => fetch(`http://127.0.0.1:${ui.port}${path}`, { headers });
const api = (path: string, init: { method?: string; body?: unknown; token?: string } = {}): Promise<JsonResponse> =>
  fetch(`http://127.0.0.1:${ui.port}${path}`, {
    method: init.method ?? "GET",
    headers: { "x-forkpoint-token": init.token ?? ui.token, "content-type": "application/json" },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
  });

beforeAll(async () => {
  const { mkdirSync } = await import("node:fs");
  mkdirSync(assets);
  writeFileSync(join(assets, "index.html"), "<!doctype html><title>page</title>");
  const w = openForkpoint({ path: db });
  const s = await w.createSession({ userId: "ann", title: "Trip to Lisbon" });
  await s.append({ role: "user", content: "hello" });
  const cp = await s.checkpoint({ name: "start" });
  await s.append({ role: "user", content: "more" });
  const other = await w.createSession({ userId: "bob", title: "Bob's" });
  ids = { session: s.id, cp: cp.id, other: other.id };
  await w.close();
  fp = openForkpoint({ path: db, readonly: true });
  ui = await startUiServer({ fp, assetsDir: assets });
});
afterAll(async () => {
  await ui.close();
  await fp.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the token", () => {
  it("is required on the page, the assets and the JSON: none or a wrong one is 401", async () => {
    expect((await get("/")).status).toBe(401);
    expect((await get("/?token=wrong")).status).toBe(401);
    expect((await get("/index.html", { cookie: "forkpoint_ui_token=wrong" })).status).toBe(401);
    expect((await get("/api/users")).status).toBe(401);
    expect((await api("/api/users", { token: "x".repeat(ui.token.length) })).status).toBe(401);
    expect((await api("/api/users", { token: `${ui.token}x` })).status).toBe(401);
  });

  it("the printed URL opens the page and sets a cookie that then serves the assets", async () => {
    expect(ui.url).toBe(`http://127.0.0.1:${ui.port}/?token=${ui.token}`);
    const page = await fetch(ui.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<title>page</title>");
    const cookie = page.headers.get("set-cookie")!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect((await get("/index.html", { cookie: cookie.split(";")[0]! })).status).toBe(200);
    expect((await api("/api/users")).status).toBe(200);
  });

  it("a Host other than the loopback address is refused (DNS rebinding)", async () => {
    const { request } = await import("node:http");
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: "127.0.0.1", port: ui.port, path: `/?token=${ui.token}`, headers: { host: `evil.example:${ui.port}` } },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(403);
  });

  it("an Origin other than the page's own is refused, with the token: another site's page, or a sandboxed one (null)", async () => {
    const plan = { user: "ann", session: ids.session, checkpointId: ids.cp };
    for (const origin of ["http://evil.com", "null", `https://127.0.0.1:${ui.port}`, `http://127.0.0.1:${ui.port + 1}`]) {
      for (const [method, path, body] of [
        ["POST", "/api/plan", plan],
        ["POST", "/api/rollback", plan],
        ["GET", "/api/users", undefined],
        ["GET", `/?token=${ui.token}`, undefined],
      ] as const) {
        const answer = await withOrigin(origin, method, path, body);
        expect([answer.status, answer.body], `${origin} ${method} ${path}`).toEqual([403, expect.stringContaining('"BAD_ORIGIN"')]);
      }
    }
    // The page's own fetches send its Origin; curl and other clients that are not a page send none.
    for (const origin of [`http://127.0.0.1:${ui.port}`, `http://localhost:${ui.port}`, undefined]) {
      expect((await withOrigin(origin, "POST", "/api/plan", plan)).status, String(origin)).toBe(200);
      expect((await withOrigin(origin, "GET", "/api/users")).status, String(origin)).toBe(200);
    }
  });
});

/** A request with the token and the given Origin header (none when undefined), through node:http: fetch sets its own. */
async function withOrigin(
  origin: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: string }> {
  const { request } = await import("node:http");
  const headers: Record<string, string> = { "x-forkpoint-token": ui.token, "content-type": "application/json" };
  if (origin !== undefined) headers.origin = origin;
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: ui.port, method, path, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe("binding", () => {
  it("listens on 127.0.0.1 only", async () => {
    expect(ui.server.address()).toMatchObject({ address: "127.0.0.1", family: "IPv4" });
    const external = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === "IPv4" && !a.internal);
    if (external) {
      await expect(
        fetch(`http://${external.address}:${ui.port}/?token=${ui.token}`, { signal: AbortSignal.timeout(3000) }),
      ).rejects.toThrow();
    }
  });
});

describe("the JSON endpoints", () => {
  it("list users, a user's sessions (searchable by title) and a session's tree", async () => {
    const users = await (await api("/api/users")).json();
    expect(users.items.map((u: { userId: string }) => u.userId)).toEqual(expect.arrayContaining(["ann", "bob"]));
    const found = await (await api("/api/sessions?user=ann&q=lisbon")).json();
    expect(found.items.map((s: { id: string }) => s.id)).toEqual([ids.session]);
    expect((await (await api("/api/sessions?user=ann&q=paris")).json()).items).toEqual([]);
    const tree = await (await api(`/api/session?user=ann&session=${ids.session}`)).json();
    expect(tree.branches).toHaveLength(1);
    expect(tree.checkpoints.map((c: { id: string }) => c.id)).toEqual([ids.cp]);
    const restored = await (await api(`/api/checkpoint?user=ann&session=${ids.session}&checkpoint=${ids.cp}`)).json();
    expect(restored.history.map((m: { content: string }) => m.content)).toEqual(["hello"]);
  });

  it("page a branch's history and the checkpoint list, and the tree's checkpoints stay a few per branch", async () => {
    const w = openForkpoint({ path: db });
    let session = "";
    try {
      const s = await w.createSession({ userId: "pat" });
      for (let i = 1; i <= 130; i++) await s.append({ role: "user", content: `m${i}` });
      for (let i = 0; i < 60; i++) await s.checkpoint({ name: `c${i}` });
      session = s.id;
    } finally {
      await w.close();
    }
    const tree = await (await api(`/api/session?user=pat&session=${session}`)).json();
    expect([tree.checkpoints.length, tree.checkpointCount, tree.moreCheckpoints]).toEqual([8, 60, [tree.info.currentBranchId]]);
    expect(tree.checkpoints.map((c: { name: string }) => c.name)).toEqual(["c59", "c58", "c57", "c56", "c55", "c54", "c53", "c52"]);
    const branch = tree.info.currentBranchId;
    const last = await (await api(`/api/history?user=pat&session=${session}&branch=${branch}`)).json();
    expect([last.items.length, last.items[0].content, last.items.at(-1).content, last.earlier]).toEqual([100, "m31", "m130", 31]);
    const first = await (await api(`/api/history?user=pat&session=${session}&branch=${branch}&before=31`)).json();
    expect([first.items.map((m: { content: string }) => m.content), first.earlier]).toEqual([
      Array.from({ length: 30 }, (_, i) => `m${i + 1}`),
      null,
    ]);
    const bad = await api(`/api/history?user=pat&session=${session}&branch=${branch}&before=x`);
    expect([bad.status, (await bad.json()).error.field]).toEqual([400, "before"]);
    const page1 = await (await api(`/api/checkpoints?user=pat&session=${session}`)).json();
    const page2 = await (await api(`/api/checkpoints?user=pat&session=${session}&cursor=${page1.nextCursor}`)).json();
    expect([page1.items.length, page2.items.length, page2.nextCursor]).toEqual([50, 10, null]);
  });

  it("check their input: unknown ids are 404 NOT_FOUND, another user's session too, missing ones 400 with the field", async () => {
    const notFound = await api(`/api/session?user=ann&session=ses_nope`);
    expect([notFound.status, (await notFound.json()).error.code]).toEqual([404, "NOT_FOUND"]);
    const others = await api(`/api/session?user=ann&session=${ids.other}`);
    expect([others.status, (await others.json()).error.code]).toEqual([404, "NOT_FOUND"]);
    const cp = await api(`/api/checkpoint?user=ann&session=${ids.session}&checkpoint=cp_nope`);
    expect([cp.status, (await cp.json()).error.code]).toEqual([404, "NOT_FOUND"]);
    const missing = await api(`/api/diff?user=ann&session=${ids.session}&a=${ids.cp}`);
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toMatchObject({ code: "VALIDATION_ERROR", field: "b" });
    const badPlan = await api("/api/plan", { method: "POST", body: { user: "ann", session: ids.session } });
    expect([badPlan.status, (await badPlan.json()).error.code]).toEqual([400, "VALIDATION_ERROR"]);
    expect((await api("/api/nothing")).status).toBe(404);
  });

  it("plan always, but refuse rollback and switch without allowWrites, leaving the database file as it was", async () => {
    const before = sha(db);
    const plan = await api("/api/plan", { method: "POST", body: { user: "ann", session: ids.session, checkpointId: ids.cp } });
    expect(plan.status).toBe(200);
    expect((await plan.json()).branch).toMatchObject({ id: null, position: expect.any(Number) });
    const rollback = await api("/api/rollback", { method: "POST", body: { user: "ann", session: ids.session, checkpointId: ids.cp } });
    expect([rollback.status, (await rollback.json()).error.code]).toEqual([409, "READ_ONLY"]);
    const tree = await (await api(`/api/session?user=ann&session=${ids.session}`)).json();
    const sw = await api("/api/switch", { method: "POST", body: { user: "ann", session: ids.session, branchId: tree.branches[0].id } });
    expect([sw.status, (await sw.json()).error.code]).toEqual([409, "READ_ONLY"]);
    expect(sha(db)).toBe(before);
    expect((await (await api(`/api/session?user=ann&session=${ids.session}`)).json()).branches).toHaveLength(1);
  });

  it("a session's tree is one state of it while another process moves the session, over and over", async () => {
    const w = openForkpoint({ path: db });
    const made = await twoBranches(w, "mo").finally(() => w.close());
    await expectOneStateWhileMoving(db, { user: "mo", ...made }, async (path) => (await api(path)).json());
  });

  it("a POST must be JSON (a cross-site form cannot send it)", async () => {
    const res = await fetch(`http://127.0.0.1:${ui.port}/api/plan`, {
      method: "POST",
      headers: { "x-forkpoint-token": ui.token, "content-type": "application/x-www-form-urlencoded" },
      body: "user=ann",
    });
    expect(res.status).toBe(415);
  });

  it("takes JSON with a charset, as HTTP clients send it", async () => {
    const res = await fetch(`http://127.0.0.1:${ui.port}/api/plan`, {
      method: "POST",
      headers: { "x-forkpoint-token": ui.token, "content-type": "Application/JSON; charset=utf-8" },
      body: JSON.stringify({ user: "ann", session: ids.session, checkpointId: ids.cp }),
    });
    expect(res.status).toBe(200);
  });

  it("answers a body over the limit 413 PAYLOAD_TOO_LARGE, as the MCP server does", async () => {
    for (const size of [70 * 1024, 2 * 1024 * 1024]) {
      const res = await fetch(`http://127.0.0.1:${ui.port}/api/plan`, {
        method: "POST",
        headers: { "x-forkpoint-token": ui.token, "content-type": "application/json" },
        body: JSON.stringify({ user: "ann", session: ids.session, checkpointId: ids.cp, pad: "x".repeat(size) }),
      });
      expect([res.status, ((await res.json()) as { error: { code: string } }).error.code]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
    }
  });
});

describe("with allowWrites", () => {
  it("rolls back through the public API", async () => {
    const w = openForkpoint({ path: db });
    const writable = await startUiServer({ fp: w, allowWrites: true, assetsDir: assets });
    try {
      const res = await fetch(`http://127.0.0.1:${writable.port}/api/rollback`, {
        method: "POST",
        headers: { "x-forkpoint-token": writable.token, "content-type": "application/json" },
        body: JSON.stringify({ user: "ann", session: ids.session, checkpointId: ids.cp }),
      });
      expect(res.status).toBe(200);
      const moved = (await res.json()) as { branch: { id: string } };
      const s = await w.getSession(ids.session, { userId: "ann" });
      expect((await s.info()).currentBranchId).toBe(moved.branch.id);
      expect((await s.history()).map((m) => m.content)).toEqual(["hello"]);
    } finally {
      await writable.close();
      await w.close();
    }
  });
});

describe("a move with the plan's ifAt", () => {
  it("performs the plan while the session is where it was planned, and answers 409 SESSION_MOVED once it moved", async () => {
    const w = openForkpoint({ path: db });
    const writable = await startUiServer({ fp: w, allowWrites: true, assetsDir: assets });
    const post = (path: string, body: unknown) =>
      fetch(`http://127.0.0.1:${writable.port}${path}`, {
        method: "POST",
        headers: { "x-forkpoint-token": writable.token, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    try {
      const s = await w.createSession({ userId: "ifat", title: "planned" });
      await s.append({ role: "user", content: "hello" });
      const cp = await s.checkpoint({ name: "start" });
      await s.append({ role: "user", content: "more" });
      const target = { user: "ifat", session: s.id, checkpointId: cp.id };
      const plan = (await (await post("/api/plan", target)).json()) as { at: { branchId: string; head: number } };
      const info = await s.info();
      expect(plan.at).toEqual({ branchId: info.currentBranchId, head: 2 });

      // Another writer adds a message: the plan's ifAt no longer holds, and nothing moves.
      await s.append({ role: "user", content: "written elsewhere" });
      const refused = await post("/api/rollback", { ...target, ifAt: plan.at });
      expect([refused.status, ((await refused.json()) as { error: { code: string } }).error.code]).toEqual([409, "SESSION_MOVED"]);
      const sw = await post("/api/switch", { user: "ifat", session: s.id, branchId: info.currentBranchId, ifAt: { branchId: "br_other" } });
      expect([sw.status, ((await sw.json()) as { error: { code: string } }).error.code]).toEqual([409, "SESSION_MOVED"]);
      expect((await s.branches()).length).toBe(1);

      // Planned again, it is performed.
      const again = (await (await post("/api/plan", target)).json()) as { at: { branchId: string; head: number } };
      expect(again.at.head).toBe(3);
      const moved = await post("/api/rollback", { ...target, ifAt: again.at });
      expect(moved.status).toBe(200);
      expect((await s.history()).map((m) => m.content)).toEqual(["hello"]);
      const bad = await post("/api/rollback", { ...target, ifAt: "here" });
      expect([bad.status, ((await bad.json()) as { error: { field?: string } }).error.field]).toEqual([400, "ifAt"]);
    } finally {
      await writable.close();
      await w.close();
    }
  });
});

describe("a plan's scope", () => {
  it("is passed to plan: with files, the plan says what the restore writes and the drift; a bad one is 400", async () => {
    const w = openForkpoint({ path: db });
    const served = await startUiServer({ fp: w, assetsDir: assets });
    const post = async (body: unknown) => {
      const res = await fetch(`http://127.0.0.1:${served.port}/api/plan`, {
        method: "POST",
        headers: { "x-forkpoint-token": served.token, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const files = mkdtempSync(join(tmpdir(), "forkpoint-ui-scope-"));
    try {
      const s = await w.createSession({ userId: "scoped", title: "with files" });
      writeFileSync(join(files, "a.txt"), "one\n");
      await s.attachWorkspace(files);
      const cp = await s.checkpoint({ name: "one" });
      writeFileSync(join(files, "a.txt"), "by hand\n");
      const target = { user: "scoped", session: s.id, checkpointId: cp.id };
      const plain = await post(target);
      expect(plain.status).toBe(200);
      expect(plain.body.files).toBeUndefined();
      const both = await post({ ...target, scope: "both" });
      expect(both.status).toBe(200);
      expect([both.body.files, both.body.drift]).toEqual([{ written: ["a.txt"], deleted: [] }, ["a.txt"]]);
      expect((await post({ ...target, scope: "files" })).body.files).toEqual({ written: ["a.txt"], deleted: [] });
      const bad = await post({ ...target, scope: "everything" });
      expect([bad.status, bad.body.error.code, bad.body.error.field]).toEqual([400, "VALIDATION_ERROR", "scope"]);
    } finally {
      await served.close();
      await w.close();
      rmSync(files, { recursive: true, force: true });
    }
  });
});

describe("a diff's files", () => {
  it("are null when a checkpoint holds none (taken before the workspace was attached): the rest of the diff is served", async () => {
    const w = openForkpoint({ path: db });
    const served = await startUiServer({ fp: w, assetsDir: assets });
    const files = mkdtempSync(join(tmpdir(), "forkpoint-ui-diff-"));
    try {
      const s = await w.createSession({ userId: "differ", title: "files later" });
      await s.append({ role: "user", content: "before the files" });
      const bare = await s.checkpoint({ name: "no files" });
      writeFileSync(join(files, "a.txt"), "one\n");
      await s.attachWorkspace(files);
      await s.append({ role: "user", content: "with the files" });
      const captured = await s.checkpoint({ name: "files" });
      const get = async (a: string, b: string) => {
        const res = await fetch(`http://127.0.0.1:${served.port}/api/diff?user=differ&session=${s.id}&a=${a}&b=${b}`, {
          headers: { "x-forkpoint-token": served.token },
        });
        return { status: res.status, body: (await res.json()) as any };
      };
      for (const [a, b] of [
        [bare.id, captured.id],
        [captured.id, bare.id],
      ]) {
        const diff = await get(a!, b!);
        expect(diff.status).toBe(200);
        expect(diff.body.files).toBeNull();
        expect(diff.body.messages.common).toBe(1);
      }
      expect((await get(captured.id, captured.id)).body.files).toEqual({ added: [], modified: [], deleted: [] });
    } finally {
      await served.close();
      await w.close();
      rmSync(files, { recursive: true, force: true });
    }
  });
});
