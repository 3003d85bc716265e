// The page in Chromium: any branch's history, no switch to where the session is, panes side by side on a laptop's
// screen, a large session read page by page, and late answers ignored.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { runInProcess } from "../cli/in-process.js";
import { available, launchChromium } from "./chromium.js";
import { ensurePageBuilt } from "./page.js";
import { startUiProcess, type UiProcess } from "./serve.js";

const dir = mkdtempSync(join(tmpdir(), "forkpoint-ui-views-"));
const db = join(dir, "views.db");
/** The large session: checkpoints on two branches, more messages than a page of history. */
const BIG = { checkpoints: 2_000, messages: 300 };

interface Ids {
  chat: { session: string; root: string; rolledBack: string; edited: string; checkpoints: string[] };
  agent: { session: string };
  big: { session: string; branches: number };
}
let ids: Ids;
let server: UiProcess | undefined;
let browser: Browser;
let page: Page;

async function writeSessions(): Promise<Ids> {
  const demo = await runInProcess(["--db", db, "--json", "demo", "--files", join(dir, "files")]);
  expect(demo.stderr).toBe("");
  const made = JSON.parse(demo.stdout) as { chat: { sessionId: string; checkpointIds: string[] }; agent: { sessionId: string } };
  const fp = openForkpoint({ path: db });
  try {
    const chat = await fp.getSession(made.chat.sessionId, { userId: "demo" });
    const branches = await chat.branches();
    const big = await fp.createSession({ userId: "demo", title: "A long agent run" });
    let fork = "";
    for (let i = 0; i < BIG.checkpoints; i++) {
      if (i % (BIG.checkpoints / BIG.messages) < 1 && i < BIG.checkpoints / 2)
        await big.append({ role: i % 2 ? "assistant" : "user", content: `step ${i}` });
      const cp = await big.checkpoint({ name: `step ${i}` });
      if (i === 10) fork = cp.id;
      if (i === BIG.checkpoints / 2) await big.rollback(fork);
    }
    for (let i = 0; i < BIG.messages / 2; i++) await big.append({ role: "user", content: `later ${i}` });
    return {
      chat: {
        session: chat.id,
        root: branches.find((b) => b.reason === "root")!.id,
        rolledBack: branches.find((b) => b.reason === "rollback")!.id,
        edited: branches.find((b) => b.reason === "edit")!.id,
        checkpoints: made.chat.checkpointIds,
      },
      agent: { session: made.agent.sessionId },
      big: { session: big.id, branches: (await big.branches()).length },
    };
  } finally {
    await fp.close();
  }
}

/** Opens the page on `session` of user demo, at a fresh load. */
async function open(session: string): Promise<void> {
  await page.goto(server!.url);
  await page.getByRole("button", { name: "demo", exact: true }).click();
  await page.getByTestId(`session-${session}`).click();
  await page.getByTestId("session-title").waitFor();
}

/** The JSON answers of the endpoint `path` while `run` runs (one the page moved on from before its body was read, skipped). */
async function answersOf(path: string, run: () => Promise<void>): Promise<{ url: URL; body: any }[]> {
  const seen: Promise<{ url: URL; body: any } | null>[] = [];
  const listener = (r: { url(): string; json(): Promise<unknown> }) => {
    const url = new URL(r.url());
    if (url.pathname === path)
      seen.push(
        r.json().then(
          (body) => ({ url, body }),
          () => null,
        ),
      );
  };
  page.on("response", listener);
  try {
    await run();
  } finally {
    page.off("response", listener);
  }
  return (await Promise.all(seen)).filter((answer) => answer !== null);
}

/** Holds the answers to requests `matching` until `release` is called; the others pass. */
async function holdAnswers(glob: string, matching: (url: URL) => boolean) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const delivered: Promise<void>[] = [];
  await page.route(glob, (route: Route) => {
    if (!matching(new URL(route.request().url()))) return route.continue();
    const done = (async () => {
      const response = await route.fetch().catch(() => null);
      await released;
      // The page may have aborted the request meanwhile (it no longer waits for it): then nothing is delivered.
      if (response) await route.fulfill({ response }).catch(() => undefined);
    })();
    delivered.push(done);
    return done;
  });
  return {
    release: async () => {
      release();
      await Promise.all(delivered);
      await page.unroute(glob);
      // Whatever the page does with a late answer, it has done it by the next frames.
      await page.evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))");
    },
    requested: () => delivered.length,
  };
}

describe.skipIf(!available)("the page's views, in Chromium", () => {
  beforeAll(async () => {
    const built = ensurePageBuilt();
    ids = await writeSessions();
    await built;
    server = await startUiProcess(["--db", db], []);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("shows the history of any branch, one without a checkpoint on it too", async () => {
    await open(ids.chat.session);
    // The rolled-back branch has no checkpoint of its own, and is not the current one.
    const histories = await answersOf("/api/history", async () => {
      await page.getByTestId(`branch-${ids.chat.rolledBack}`).locator(".node-title button").click();
      await expect.poll(() => page.getByTestId("history-title").textContent()).toContain(ids.chat.rolledBack.slice(-6));
      await expect.poll(() => page.getByTestId("branch-history").locator("li").count()).toBe(2);
    });
    expect(histories.map((h) => h.url.searchParams.get("branch"))).toContain(ids.chat.rolledBack);
    expect(await page.getByTestId("branch-history").locator(".content").allTextContents()).toEqual([
      "I want to visit Lisbon in May.",
      "Lovely! How many days?",
    ]);
  });

  it("offers no switch to the branch the session is on, and one to any other", async () => {
    await open(ids.chat.session);
    await page.getByTestId(`branch-${ids.chat.edited}`).locator(".node-title button").click();
    await expect.poll(() => page.getByTestId("history-title").textContent()).toContain("current");
    expect(await page.getByTestId("no-switch").isVisible()).toBe(true);
    expect(await page.getByTestId("plan-switch").count()).toBe(0);
    await page.getByRole("tab", { name: "Plan" }).click();
    expect(await page.getByTestId("plan-panel").count()).toBe(0);
    await page.getByTestId(`branch-${ids.chat.root}`).locator(".node-title button").click();
    await page.getByTestId("plan-switch").click();
    await expect.poll(() => page.getByTestId("plan-panel").locator("h2").textContent()).toMatch(/^Plan: switch to/);
  });

  for (const [width, height] of [
    [1366, 768],
    [1440, 900],
  ] as const) {
    it(`lays the panes side by side in a ${width}×${height} window: tree, history, details`, async () => {
      await page.setViewportSize({ width, height });
      try {
        await open(ids.chat.session);
        await page.getByTestId(`checkpoint-${ids.chat.checkpoints[1]}`).click();
        await page.getByTestId("checkpoint-state").waitFor();
        await page.getByTestId("branch-history").locator("li").first().waitFor();
        type Box = { x: number; y: number; width: number; height: number };
        const box = async (selector: string): Promise<Box> => (await page.locator(selector).boundingBox())!;
        const [nav, tree, history, details] = (await Promise.all(
          [".nav", ".tree-pane", "[data-testid=history-pane]", ".details-pane"].map(box),
        )) as [Box, Box, Box, Box];
        // Left to right, each where the one before it ends, the last within the window.
        expect(nav.x).toBe(0);
        for (const [a, b] of [
          [nav, tree],
          [tree, history],
          [history, details],
        ] as const)
          expect(Math.abs(a.x + a.width - b.x)).toBeLessThanOrEqual(1);
        expect(details.x + details.width).toBeLessThanOrEqual(width + 0.5);
        // Each as tall as the window under the header, none below the window's bottom edge.
        for (const pane of [tree, history, details]) {
          expect(pane.y).toBe(tree.y);
          expect(pane.y).toBeLessThan(height / 10);
          expect(Math.abs(pane.y + pane.height - height)).toBeLessThanOrEqual(1);
        }
        expect(tree.width).toBeGreaterThanOrEqual(300);
        expect(history.width).toBeGreaterThanOrEqual(260);
        expect(details.width).toBeGreaterThanOrEqual(300);
        // The graph fills its pane; the page itself never scrolls (each pane scrolls on its own).
        const graph = await box("[data-testid=graph]");
        // (less the pane's 1px border)
        expect(tree.width - graph.width).toBeLessThanOrEqual(1);
        expect(graph.height).toBe(tree.height);
        const page_ = await page.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]");
        expect(page_).toEqual([width, height]);
      } finally {
        await page.setViewportSize({ width: 1440, height: 900 });
      }
    });
  }

  it("reads a large session a page at a time: bounded answers, bounded nodes", async () => {
    const answers: Record<string, any[]> = {};
    for (const path of ["/api/session", "/api/checkpoints", "/api/history"]) answers[path] = [];
    const listen = (r: { url(): string; json(): Promise<unknown> }) => {
      const path = new URL(r.url()).pathname;
      if (answers[path]) answers[path].push(r.json());
    };
    page.on("response", listen);
    try {
      await open(ids.big.session);
      await expect.poll(() => page.getByTestId("session-counts").textContent()).toContain(`${BIG.checkpoints} checkpoints`);
      await expect.poll(() => page.getByTestId("checkpoint-list").locator("li").count()).toBe(50);
      await expect.poll(() => page.getByTestId("branch-history").locator("li").count()).toBe(100);
    } finally {
      page.off("response", listen);
    }
    const [tree] = await Promise.all(answers["/api/session"]!);
    expect(tree.checkpoints.length).toBeLessThanOrEqual(8 * ids.big.branches);
    expect(tree.checkpointCount).toBe(BIG.checkpoints);
    const [list] = await Promise.all(answers["/api/checkpoints"]!);
    expect([list.items.length, typeof list.nextCursor]).toEqual([50, "string"]);
    const [history] = await Promise.all(answers["/api/history"]!);
    expect([history.items.length, typeof history.earlier]).toEqual([100, "number"]);
    // What the page draws stays a few thousand elements, whatever the session's size.
    const elements = (await page.evaluate('document.getElementsByTagName("*").length')) as number;
    expect(elements).toBeLessThan(3_000);
    // More on demand: the next page of each.
    await page.getByTestId("checkpoints-more").click();
    await expect.poll(() => page.getByTestId("checkpoint-list").locator("li").count()).toBe(100);
    await page.getByTestId("history-earlier").click();
    await expect.poll(() => page.getByTestId("branch-history").locator("li").count()).toBeGreaterThan(100);
  });

  it("shows the session clicked last, whatever answers last", async () => {
    await open(ids.agent.session);
    const held = await holdAnswers("**/api/session?*", (url) => url.searchParams.get("session") === ids.chat.session);
    await page.getByTestId(`session-${ids.chat.session}`).click();
    await expect.poll(() => held.requested()).toBe(1);
    await page.getByTestId(`session-${ids.agent.session}`).click();
    await expect.poll(() => page.getByTestId("session-title").textContent()).toBe("Agent run");
    await held.release();
    expect(await page.getByTestId("session-title").textContent()).toBe("Agent run");
  });

  it("shows the checkpoint clicked last, whatever answers last", async () => {
    await open(ids.chat.session);
    const [first, second] = ids.chat.checkpoints as [string, string];
    const held = await holdAnswers("**/api/checkpoint?*", (url) => url.searchParams.get("checkpoint") === first);
    await page.getByTestId(`checkpoint-${first}`).click();
    await expect.poll(() => held.requested()).toBe(1);
    await page.getByTestId(`checkpoint-${second}`).click();
    await expect.poll(() => page.getByTestId("checkpoint-state").textContent()).toContain('"days": 5');
    await held.release();
    expect(await page.getByTestId("checkpoint-state").textContent()).toContain('"days": 5');
    expect(await page.getByTestId("checkpoint-panel").locator("h2").textContent()).toContain("five-day plan");
  });
});
