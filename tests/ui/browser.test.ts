// The page in a real browser (Debian's Chromium through playwright-core) on a demo database, served by the CLI.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFile } from "../../src/cli/demo/tools.js";
import { openForkpoint } from "../../src/index.js";
import { available, launchChromium } from "./chromium.js";
import { ensurePageBuilt, repo } from "./page.js";
import { startUiProcess, type UiProcess } from "./serve.js";

const dir = mkdtempSync(join(tmpdir(), "forkpoint-ui-browser-"));
const db = join(dir, "demo.db");
const tools = join(repo, "src", "cli", "demo", "tools.ts");
const XSS_MESSAGE = "<script>window.__xss=1</script>";
const XSS_TITLE = `<img src=x onerror="window.__xss=2">`;

interface DemoIds {
  workspace: string;
  chat: { sessionId: string; checkpointIds: [string, string]; editedMessageId: string };
  agent: { sessionId: string; startCheckpointId: string; filesBranchId: string };
}
let demo: DemoIds;
/** The agent's applied tool calls after the switch, as the public API reports them. */
let applied: number;
let server: UiProcess | undefined;
let url: string;
let browser: Browser;
let page: Page;

const cli = (args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", join(repo, "src/cli/main.ts"), ...args], { encoding: "utf8", cwd: repo });

describe.skipIf(!available)("forkpoint ui in Chromium", () => {
  beforeAll(async () => {
    const built = ensurePageBuilt();
    const made = cli(["--db", db, "--json", "demo", "--files", join(dir, "files")]);
    expect(made.stderr).toBe("");
    demo = JSON.parse(made.stdout) as DemoIds;
    // The agent's files written again (its branch made current), so a rollback has tool effects to undo; and a
    // session whose title and message are markup, which the page must show as text.
    const fp = openForkpoint({ path: db, tools: [writeFile] });
    const agent = await fp.getSession(demo.agent.sessionId, { userId: "demo" });
    await agent.switchBranch(demo.agent.filesBranchId);
    applied = (await agent.toolTrack()).filter((t) => t.applied).length;
    expect(applied).toBeGreaterThan(0);
    const xss = await fp.createSession({ userId: "demo", title: XSS_TITLE });
    await xss.append({ role: "user", content: XSS_MESSAGE });
    await xss.checkpoint({ name: "markup" });
    await fp.close();
    await built;
    server = await startUiProcess(["--db", db, "--tools", tools], ["--allow-writes"]);
    url = server.url;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("shows a user's sessions, a session's tree and a checkpoint's state, history and tool track", async () => {
    await page.goto(url);
    await page.getByRole("button", { name: "demo", exact: true }).click();
    await page.getByTestId(`session-${demo.agent.sessionId}`).click();
    await expect.poll(() => page.getByTestId("session-title").textContent()).toBe("Agent run");
    // The current branch is marked as where the world is, with its applied writes.
    await expect.poll(() => page.getByTestId(`branch-${demo.agent.filesBranchId}`).textContent()).toContain(`world · ${applied} applied`);
    await page.getByRole("tab", { name: "World" }).click();
    expect(await page.getByTestId("world-tools").locator("li").count()).toBe(applied);
    await page.getByRole("button", { name: "◆ files written" }).click();
    const panel = page.getByTestId("checkpoint-panel");
    await expect.poll(() => panel.getByTestId("checkpoint-tools").textContent()).toContain("write_file");
    expect(await panel.getByTestId("checkpoint-tools").locator("li").count()).toBe(applied);
    expect(await panel.getByTestId("checkpoint-tools").textContent()).toContain("plan.txt");
    expect(await panel.getByTestId("checkpoint-history").textContent()).toContain("write_file");
  });

  it("shows a message's versions and the diff of two checkpoints", async () => {
    await page.getByTestId(`session-${demo.chat.sessionId}`).click();
    await expect.poll(() => page.getByTestId("session-title").textContent()).toMatch(/^Trip planning/);
    const [planned, fiveDays] = demo.chat.checkpointIds;
    await page.getByTestId(`checkpoint-${fiveDays}`).click();
    const panel = page.getByTestId("checkpoint-panel");
    await expect.poll(() => panel.getByTestId("checkpoint-state").textContent()).toContain('"days": 5');
    const history = panel.getByTestId("checkpoint-history");
    expect(await history.textContent()).toContain("Five days, on a budget.");
    // The question that was edited later: its versions are the original and the edit.
    await history.locator("li", { hasText: "Five days, on a budget." }).getByRole("button", { name: "versions" }).click();
    const versions = page.getByTestId("versions-panel");
    await expect.poll(() => versions.getByTestId("versions-index").textContent()).toBe("1/2");
    expect(await versions.getByTestId("versions-content").textContent()).toBe("Five days, on a budget.");
    await versions.getByRole("button", { name: "next version" }).click();
    expect(await versions.getByTestId("versions-index").textContent()).toBe("2/2");
    expect(await versions.getByTestId("versions-content").textContent()).toBe("Three days, luxury please.");

    await page.getByRole("tab", { name: "Diff" }).click();
    const diff = page.getByTestId("diff-panel");
    await diff.getByTestId("diff-a").selectOption(planned);
    await diff.getByTestId("diff-b").selectOption(fiveDays);
    await diff.getByTestId("diff-run").click();
    const result = diff.getByTestId("diff-result");
    await expect.poll(() => result.textContent()).toContain("+ days: 5");
    expect(await result.textContent()).toContain("B assistant: Here is a 5-day budget plan…");
  });

  it("shows stored markup as text and runs none of it", async () => {
    const title = page.getByRole("button", { name: XSS_TITLE });
    await title.click();
    await expect.poll(() => page.getByTestId("session-title").textContent()).toBe(XSS_TITLE);
    await page.getByRole("button", { name: "◆ markup" }).click();
    await expect.poll(() => page.getByTestId("checkpoint-history").textContent()).toContain(XSS_MESSAGE);
    expect(await page.evaluate("typeof window.__xss")).toBe("undefined");
    expect(await page.locator("img[src=x]").count()).toBe(0);
  });

  it("isolates stored bidi controls: user text never reorders the page's own text", async () => {
    // A right-to-left override (U+202E) opened and never closed in every kind of user text the page shows, after a
    // stray POP DIRECTIONAL ISOLATE (U+2069) and paragraph separators (U+2029, U+001E, CR LF, a lone CR), each of
    // which would close the isolate around it first (some only where white space is preserved).
    const RLO = "\u2069\u2029\u001e\r\n\r\u202e";
    const fp = openForkpoint({ path: db, tools: [writeFile] });
    let ids: { session: string; first: string; second: string; branch: string; root: string };
    try {
      const s = await fp.createSession({ userId: "demo", title: `${RLO}reversed title` });
      await s.append({ role: "user", content: `${RLO}reversed question` });
      await s.setState({ [`${RLO}key`]: `${RLO}value` });
      await s.recordToolCall({ tool: `${RLO}tool`, args: { [`${RLO}arg`]: `${RLO}text` }, result: `${RLO}result` });
      const first = await s.checkpoint({ name: `${RLO}first mark` });
      await s.append({ role: `${RLO}assistant evil`, content: `${RLO}reversed answer` });
      await s.setState({ [`${RLO}key`]: `${RLO}other`, [`${RLO}new`]: 1 });
      const second = await s.checkpoint({ name: `${RLO}second mark` });
      await s.rollback(first.id);
      const branch = (await s.info()).currentBranchId;
      await s.nameBranch(branch, `${RLO}named branch`);
      const root = (await s.branches()).find((b) => b.parentId === null)!.id;
      ids = { session: s.id, first: first.id, second: second.id, branch, root };
    } finally {
      await fp.close();
    }
    await page.goto(url);
    await page.getByRole("button", { name: "demo", exact: true }).click();
    await page.getByTestId(`session-${ids.session}`).click();
    await expect.poll(() => page.getByTestId("session-title").textContent()).toBe("\n\u241e\n\n\u202ereversed title");

    // The page's own text (every text without a bidi control of its own) runs left to right: within a text, two
    // adjacent Latin letters on one line; between two texts one after the other on a line of the same block, the
    // second starts right of where the first ends. An override leaking out of user text reverses both. Checked on
    // each view, as each tab shows other user text.
    const reversed: string[] = [];
    const check = async (view: string) => {
      const found = (await page.evaluate(String.raw`(() => {
      const out = [];
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      const range = document.createRange();
      const box = (node, i) => {
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        return range.getBoundingClientRect();
      };
      const blockOf = (node) => {
        let e = node.parentElement;
        while (e && getComputedStyle(e).display === "inline") e = e.parentElement;
        return e;
      };
      let previous;
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/.test(node.data)) continue;
        const first = node.data.search(/\S/);
        if (first < 0) continue;
        const last = node.data.length - 1 - [...node.data].reverse().join("").search(/\S/);
        const [start, end] = [box(node, first), box(node, last)];
        if (start.width === 0 || end.width === 0) continue;
        const block = blockOf(node);
        if (previous && previous.block === block && Math.abs(previous.last.top - start.top) < 1 && start.left < previous.last.left)
          out.push(previous.text + " | " + node.data);
        previous = { text: node.data, last: end, block };
        const at = /[A-Za-z]{2}/.exec(node.data)?.index;
        if (at === undefined) continue;
        const [a, b] = [box(node, at), box(node, at + 1)];
        if (Math.abs(a.top - b.top) < 1 && b.left < a.left) out.push(node.data);
      }
      return out;
    })()`)) as string[];
      reversed.push(...found.map((t) => `${view}: ${t}`));
    };
    await expect.poll(() => page.getByTestId("branch-history").textContent()).toContain("reversed question");
    await check("the session's history");
    await page.getByTestId(`checkpoint-${ids.second}`).click();
    const panel = page.getByTestId("checkpoint-panel");
    await expect.poll(() => panel.getByTestId("checkpoint-history").textContent()).toContain("reversed answer");
    await expect.poll(() => panel.getByTestId("checkpoint-tools").textContent()).toContain("tool");
    await check("a checkpoint");
    // A role is data, never markup: no class of the page comes from it.
    await expect.poll(() => panel.getByTestId("checkpoint-history").textContent()).toContain("assistant evil");
    expect(await page.locator(".evil").count()).toBe(0);
    // A JSON string's quotes stay outside its isolate, so an override in it cannot reverse them.
    const quoted = await panel
      .locator("bdi")
      .evaluateAll((all) => all.filter((b) => /^"|"$/.test((b as unknown as { textContent: string }).textContent)).length);
    expect(quoted).toBe(0);
    await panel.getByTestId("checkpoint-history").locator("li").first().getByRole("button", { name: "versions" }).click();
    await expect.poll(() => page.getByTestId("versions-content").textContent()).toContain("reversed question");
    await check("a message's versions");
    await page.getByRole("tab", { name: "Diff" }).click();
    const diff = page.getByTestId("diff-panel");
    await diff.getByTestId("diff-a").selectOption(ids.first);
    await diff.getByTestId("diff-b").selectOption(ids.second);
    await diff.getByTestId("diff-run").click();
    await expect.poll(() => diff.getByTestId("diff-result").textContent()).toContain("reversed answer");
    await check("a diff");
    await page.getByRole("tab", { name: "Checkpoints" }).click();
    await expect.poll(() => page.getByTestId("checkpoint-list").textContent()).toContain("second mark");
    await check("the checkpoint list");
    await page.getByRole("tab", { name: "World" }).click();
    await check("the world");
    await page.getByTestId(`branch-${ids.branch}`).locator(".node-title button").click();
    await expect.poll(() => page.getByTestId("history-title").textContent()).toContain("named branch");
    await page.getByTestId(`branch-${ids.root}`).locator(".node-title button").click();
    await page.getByTestId("plan-switch").click();
    await expect.poll(() => page.getByTestId("plan-panel").locator("h2").textContent()).toContain("Plan: switch to");
    await check("a plan");
    await page.getByTestId(`branch-${ids.branch}`).locator(".node-title button").click();
    await expect.poll(() => page.getByTestId("history-title").textContent()).toContain("named branch");
    await check("a named branch's history");
    expect(reversed).toEqual([]);
    // And user text is what was stored, the override included (a paragraph separator shown as a line break, or as
    // the control picture of an information separator).
    expect(await page.getByTestId("session-title").textContent()).toBe("\n\u241e\n\n\u202ereversed title");
  });

  it("plans a rollback (what it would undo), performs it, and the session moved", async () => {
    await page.getByTestId(`session-${demo.agent.sessionId}`).click();
    await page.getByTestId(`checkpoint-${demo.agent.startCheckpointId}`).click();
    await page.getByTestId("plan-rollback").click();
    const plan = page.getByTestId("plan-panel");
    await expect.poll(() => plan.getByTestId("plan-undone").locator("li").count()).toBe(applied);
    expect(await plan.getByTestId("plan-undone").textContent()).toContain("write_file");
    expect(readdirSync(demo.workspace)).not.toEqual([]);
    await plan.getByTestId("perform-move").click();
    await expect.poll(() => plan.getByTestId("move-done").textContent()).toContain(`${applied} undone`);
    // The page redraws the tree: the world is on the new branch, with nothing applied.
    await expect.poll(() => page.locator(".node.current").textContent()).toContain("world · 0 applied");

    const fp = openForkpoint({ path: db, readonly: true });
    try {
      const agent = await fp.getSession(demo.agent.sessionId, { userId: "demo" });
      const info = await agent.info();
      expect(info.currentBranchId).not.toBe(demo.agent.filesBranchId);
      expect((await agent.toolTrack()).filter((t) => t.applied)).toEqual([]);
      const current = (await agent.branches()).find((b) => b.current)!;
      expect(current.forkCheckpointId).toBe(demo.agent.startCheckpointId);
    } finally {
      await fp.close();
    }
    expect(readdirSync(demo.workspace)).toEqual([]);
  });

  it("plans a switch from another branch's history: what it would replay", async () => {
    await page.getByTestId(`branch-${demo.agent.filesBranchId}`).locator(".node-title button").click();
    await page.getByTestId("plan-switch").click();
    const plan = page.getByTestId("plan-panel");
    await expect.poll(() => plan.locator("h2").textContent()).toMatch(/^Plan: switch to/);
    await expect.poll(() => plan.getByTestId("plan-replayed").locator("li").count()).toBe(applied);
    expect(await plan.getByTestId("perform-move").isEnabled()).toBe(true);
  });

  it("clicking the selected session again reloads its tree, with what another server wrote meanwhile", async () => {
    await page.getByTestId(`session-${demo.chat.sessionId}`).click();
    await expect.poll(() => page.getByTestId("session-title").textContent()).toMatch(/^Trip planning/);
    const other = openForkpoint({ path: db });
    try {
      await (await other.getSession(demo.chat.sessionId, { userId: "demo" })).checkpoint({ name: "written elsewhere" });
    } finally {
      await other.close();
    }
    await page.getByTestId(`session-${demo.chat.sessionId}`).click();
    await expect.poll(() => page.getByTestId("checkpoint-list").textContent(), { timeout: 10_000 }).toContain("written elsewhere");
    expect(await page.getByTestId("session-title").textContent()).toMatch(/^Trip planning/);
  });

  it("a view started without the tools names the calls it cannot undo in a plan", async () => {
    const fp = openForkpoint({ path: db, tools: [writeFile] });
    const agent = await fp.getSession(demo.agent.sessionId, { userId: "demo" });
    await agent.switchBranch(demo.agent.filesBranchId);
    const calls = (await agent.toolTrack()).filter((t) => t.applied).length;
    await fp.close();
    expect(calls).toBeGreaterThan(0);
    const bare = await startUiProcess(["--db", db], []);
    const other = await browser.newPage({ viewport: { width: 1400, height: 860 } });
    try {
      await other.goto(bare.url);
      await other.getByRole("button", { name: "demo", exact: true }).click();
      await other.getByTestId(`session-${demo.agent.sessionId}`).click();
      await other.getByTestId(`checkpoint-${demo.agent.startCheckpointId}`).click();
      await other.getByTestId("plan-rollback").click();
      const plan = other.getByTestId("plan-panel");
      await expect.poll(() => plan.getByTestId("plan-unregistered").locator("li").count()).toBe(calls);
      expect(await plan.getByTestId("plan-unregistered").textContent()).toContain("write_file");
    } finally {
      await other.close();
      await bare.stop();
    }
  });

  it("searches sessions by title", async () => {
    await page.getByTestId("session-search").fill("agent");
    await expect.poll(() => page.getByTestId("sessions").locator("li").count()).toBe(1);
    expect(await page.getByTestId("sessions").textContent()).toContain("Agent run");
    await page.getByTestId("session-search").fill("no such title");
    await expect.poll(() => page.getByTestId("sessions").textContent()).toBe("no sessions");
  });
});
