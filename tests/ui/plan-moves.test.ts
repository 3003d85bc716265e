// The page performs the move it planned, or none: a session moved since the plan (another server's call) refuses the
// confirmed move and says to plan again; a double click performs one move. And the world it shows is the session's
// applied set: a call applied off the current lineage counts.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineTool, openForkpoint } from "../../src/index.js";
import { available, launchChromium } from "./chromium.js";
import { ensurePageBuilt } from "./page.js";
import { startUiProcess, type UiProcess } from "./serve.js";

const dir = mkdtempSync(join(tmpdir(), "forkpoint-ui-plan-moves-"));
const db = join(dir, "moves.db");
/** Each run and undo of `put`, a line each: what the world saw. */
const world = join(dir, "world.log");
const toolsModule = join(dir, "tools.ts");

/** The tool as the served view loads it (--tools) and as the other server here calls it. */
const put = defineTool({
  name: "put",
  run: async ({ k }: { k: string }) => (appendFileSync(world, `run ${k}\n`), k),
  undo: async ({ args }: { args: { k: string } }) => {
    if (args.k === "bad") throw new Error("cannot undo bad");
    appendFileSync(world, `undo ${args.k}\n`);
  },
});

let server: UiProcess | undefined;
let browser: Browser;
let page: Page;

const worldLines = () => readFileSync(world, "utf8").trim().split("\n");

/** A session of alice: a message, checkpoint "start", then two calls of `put` (a, b) with a message between. */
async function seeded(title: string, [a, b] = ["a", "b"]): Promise<{ session: string; start: string }> {
  const fp = openForkpoint({ path: db, tools: [put] });
  try {
    const s = await fp.createSession({ userId: "alice", title });
    await s.append({ role: "user", content: "hello" });
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("put", { k: a });
    await s.append({ role: "assistant", content: "wrote a" });
    await s.invoke("put", { k: b });
    return { session: s.id, start: start.id };
  } finally {
    await fp.close();
  }
}

/** What the public API says of the session: its current branch and the calls whose effect is applied. */
async function state(session: string) {
  const fp = openForkpoint({ path: db, readonly: true });
  try {
    const s = await fp.getSession(session, { userId: "alice" });
    return { current: (await s.info()).currentBranchId, applied: (await s.toolTrack()).filter((t) => t.applied).length };
  } finally {
    await fp.close();
  }
}

/** Opens the page on the session's checkpoint "start" and plans a rollback there: the plan shows `undone` calls. */
async function planRollback(ids: { session: string; start: string }, undone: number) {
  await page.goto(server!.url);
  await page.getByRole("button", { name: "alice", exact: true }).click();
  await page.getByTestId(`session-${ids.session}`).click();
  await page.getByTestId(`checkpoint-${ids.start}`).click();
  await page.getByTestId("plan-rollback").click();
  const plan = page.getByTestId("plan-panel");
  await expect.poll(() => plan.getByTestId("plan-undone").locator("li").count()).toBe(undone);
  return plan;
}

describe.skipIf(!available)("a move performed from the page's plan", () => {
  beforeAll(async () => {
    const built = ensurePageBuilt();
    writeFileSync(world, "");
    writeFileSync(
      toolsModule,
      `import { appendFileSync } from "node:fs";
import { defineTool } from "forkpoint";
export const put = defineTool({
  name: "put",
  run: async ({ k }: { k: string }) => (appendFileSync(${JSON.stringify(world)}, "run " + k + "\\n"), k),
  undo: async ({ args }: { args: { k: string } }) => {
    if (args.k === "bad") throw new Error("cannot undo bad");
    appendFileSync(${JSON.stringify(world)}, "undo " + args.k + "\\n");
  },
});
`,
    );
    // The database exists before the view opens it.
    await seeded("first");
    await built;
    server = await startUiProcess(["--db", db, "--tools", toolsModule], ["--allow-writes"]);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  });
  afterAll(async () => {
    await browser?.close();
    server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is refused when another server called a tool since the plan: nothing undone, and the page says to plan again", async () => {
    const ids = await seeded("moved under the plan");
    const plan = await planRollback(ids, 2);
    const before = await state(ids.session);

    // Another server calls a tool on the session while the user reads the plan.
    const other = openForkpoint({ path: db, tools: [put] });
    try {
      await (await other.getSession(ids.session, { userId: "alice" })).invoke("put", { k: "c" });
    } finally {
      await other.close();
    }
    writeFileSync(world, "");
    await plan.getByTestId("perform-move").click();
    await expect.poll(() => plan.getByTestId("plan-stale").textContent()).toMatch(/session changed since this plan.*Plan again/);
    expect(await plan.getByTestId("move-done").count()).toBe(0);
    expect(await plan.getByTestId("perform-move").isDisabled()).toBe(true);
    // Nothing moved: no undo ran, the session is on its branch with its three calls applied.
    expect(readFileSync(world, "utf8")).toBe("");
    expect(await state(ids.session)).toEqual({ current: before.current, applied: 3 });

    // Planned again, the plan shows the three calls, and the rollback confirmed undoes those three.
    await plan.getByTestId("plan-again").click();
    await expect.poll(() => plan.getByTestId("plan-undone").locator("li").count()).toBe(3);
    // The tree is read again with it: the header counts the third call.
    await expect.poll(() => page.getByTestId("session-counts").textContent()).toContain("the world: 3 tool effects applied");
    expect(await plan.getByTestId("plan-stale").count()).toBe(0);
    await plan.getByTestId("perform-move").click();
    await expect.poll(() => plan.getByTestId("move-done").textContent()).toContain("(3 undone, 0 replayed)");
    expect(worldLines()).toEqual(["undo c", "undo b", "undo a"]);
    expect((await state(ids.session)).applied).toBe(0);
  });

  it("a double click on Roll back sends one rollback, and the page shows what it undid", async () => {
    const ids = await seeded("double click");
    const plan = await planRollback(ids, 2);
    writeFileSync(world, "");
    // The answer held until both clicks are in: a second click before the first answer must find the button disabled.
    const posts: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route("**/api/rollback", async (route: Route) => {
      posts.push(route.request().postData() ?? "");
      const response = await route.fetch().catch(() => null);
      await released;
      if (response) await route.fulfill({ response }).catch(() => undefined);
    });
    try {
      await plan.getByTestId("perform-move").dblclick();
      await expect.poll(() => posts.length).toBe(1);
      expect(await plan.getByTestId("perform-move").isDisabled()).toBe(true);
      release();
      await expect.poll(() => plan.getByTestId("move-done").textContent()).toContain("(2 undone, 0 replayed)");
    } finally {
      release();
      await page.unroute("**/api/rollback");
    }
    expect(posts).toHaveLength(1);
    expect(JSON.parse(posts[0]!)).toMatchObject({ ifAt: { branchId: expect.any(String), head: expect.any(Number) } });
    expect(worldLines()).toEqual(["undo b", "undo a"]);
  });

  it("counts in the world a call applied off the current lineage (invoke after a question), as the rollback undoes it", async () => {
    const fp = openForkpoint({ path: db, tools: [put] });
    let ids: { session: string; start: string };
    try {
      const s = await fp.createSession({ userId: "alice", title: "off the lineage" });
      const [question] = await s.append({ role: "user", content: "question" });
      const start = await s.checkpoint({ name: "start" });
      await s.append({ role: "user", content: "another tab's message" });
      await s.invoke("put", { k: "off" }, { after: question!.id });
      expect(await s.toolTrack()).toEqual([]);
      ids = { session: s.id, start: start.id };
    } finally {
      await fp.close();
    }
    const plan = await planRollback(ids, 1);
    await expect.poll(() => page.getByTestId("session-counts").textContent()).toContain("the world: 1 tool effects applied");
    expect(await page.locator(".node.current").textContent()).toContain("world · 1 applied");
    await page.getByRole("tab", { name: "World" }).click();
    expect(await page.getByTestId("world-tools").locator("li").count()).toBe(1);
    expect(await page.getByTestId("world-off-lineage").textContent()).toContain("put");
  });

  it("lists a clone's calls a switch passes as not replayed, apart from irreversible calls that stay applied", async () => {
    const fp = openForkpoint({ path: db, tools: [put] });
    let ids: { session: string; root: string };
    try {
      const { session } = await seeded("to clone", ["c1", "c2"]);
      const copy = await fp.clone(session, { userId: "alice" });
      const root = (await copy.info()).currentBranchId;
      await copy.rollback((await copy.listCheckpoints({ name: "start" })).items[0]!.id);
      ids = { session: copy.id, root };
    } finally {
      await fp.close();
    }
    await page.goto(server!.url);
    await page.getByRole("button", { name: "alice", exact: true }).click();
    await page.getByTestId(`session-${ids.session}`).click();
    await page.getByTestId(`branch-${ids.root}`).locator(".node-title button").click();
    await page.getByTestId("plan-switch").click();
    const plan = page.getByTestId("plan-panel");
    await expect.poll(() => plan.getByTestId("plan-not-replayed").locator("li").count()).toBe(2);
    expect(await plan.getByTestId("plan-skipped").locator("li").count()).toBe(0);
    expect(await plan.textContent()).not.toContain("stays applied (2)");
  });

  it("stopped by an undo that throws: the page shows what was undone before the failure, and that nothing moved", async () => {
    const ids = await seeded("undo fails", ["bad", "ok"]);
    const plan = await planRollback(ids, 2);
    writeFileSync(world, "");
    await plan.getByTestId("perform-move").click();
    await expect.poll(() => plan.getByRole("alert").textContent()).toMatch(/undo of put invocation tc_\S+ failed: cannot undo bad/);
    expect(await plan.getByTestId("move-stopped").textContent()).toContain("the session did not move, but the rollback had undone 1");
    expect(await plan.getByTestId("stopped-undone").locator("li").count()).toBe(1);
    expect(await plan.getByTestId("stopped-undone").textContent()).toContain('"ok"');
    expect(worldLines()).toEqual(["undo ok"]);
  });

  it("says a rollback of a session with a workspace leaves its files as they are, before and after it", async () => {
    const ids = await seeded("with a workspace");
    const plain = await planRollback(ids, 2);
    expect(await plain.getByTestId("plan-files").count()).toBe(0);

    const ws = mkdtempSync(join(dir, "ws-"));
    writeFileSync(join(ws, "a.txt"), "kept");
    const fp = openForkpoint({ path: db, tools: [put] });
    try {
      await (await fp.getSession(ids.session, { userId: "alice" })).attachWorkspace(ws);
    } finally {
      await fp.close();
    }
    const plan = await planRollback(ids, 2);
    await expect.poll(() => plan.getByTestId("plan-files").textContent()).toContain(`leaves the files of the workspace ${ws} as they are`);
    writeFileSync(join(ws, "a.txt"), "changed after the checkpoint");
    await plan.getByTestId("perform-move").click();
    await expect.poll(() => plan.getByTestId("move-done").textContent()).toContain("; workspace files left as they are)");
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("changed after the checkpoint");
  });
});
