// examples/chat-app in Debian's Chromium: started by its npm script (offline, the mock model), driven as a user would.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repo } from "../ui/page.js";

const CHROMIUM = "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
if (!available && process.env.CI) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does)`);
if (!available) console.warn(`SKIPPED: the chat-app test needs ${CHROMIUM} (apt-get install -y chromium)`);

let data: string;
let server: ChildProcess | undefined;
let output = "";
let browser: Browser;
let page: Page;

/** `npm run example:chat` (it builds the page, then serves it) in a process group of its own, resolved with its URL. */
function start(): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: "0", CHAT_DATA_DIR: data, CHAT_MOCK_DELAY_MS: "30" };
  // Offline, and built as `npm run` builds it outside the test runner (which sets NODE_ENV=test: React's dev build).
  delete env.OPENAI_API_KEY;
  delete env.NODE_ENV;
  const child = spawn("npm", ["run", "--silent", "example:chat"], { cwd: repo, env, detached: true });
  server = child;
  return new Promise((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /http:\/\/127\.0\.0\.1:\d+\//.exec(output);
      if (url) resolve(url[0]);
    };
    child.stdout!.on("data", read);
    child.stderr!.on("data", read);
    child.on("exit", (code) => reject(new Error(`npm run example:chat exited with ${code}: ${output}`)));
  });
}

/** expect.poll with room for a streamed answer (vitest's default gives up after a second). */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 20_000 });
const chat = () => page.locator(".chat");
const answers = () => page.locator('[data-role="assistant"]');
const questions = () => page.locator('[data-role="user"]');
const texts = (list: ReturnType<typeof answers>) => list.locator("p:not(.tool)").allTextContents();
const todos = () => page.locator(".todos li").allTextContents();
/** Resolves once the page is idle: no answer streaming, the chat read again after the last one, and the sidebar too. */
const idle = async () => {
  await poll(() => chat().getAttribute("data-status")).toBe("ready");
  await poll(() => page.locator(".message:not([data-versions])").count()).toBe(0);
  await poll(() => page.locator("nav.sidebar").getAttribute("aria-busy")).toBe("false");
};

/** What `shown` reads of a message element in the page (the project compiles without the DOM lib). */
interface ShownItem {
  getAttribute(name: string): string | null;
  querySelector(selector: string): { textContent: string | null } | null;
}

/** The whole conversation as shown: each message's text, tool calls and version label, then the to-do list. */
async function shown(): Promise<string[]> {
  await idle();
  const rows = await page
    .locator(".message")
    .evaluateAll((items) =>
      (items as unknown as ShownItem[]).map(
        (li) =>
          `${li.getAttribute("data-role")}: ${li.querySelector(".body")?.textContent} ${li.querySelector(".versions")?.textContent ?? ""}`,
      ),
    );
  return [...rows, `todos: ${(await todos()).join(", ")}`];
}

async function send(text: string) {
  await page.getByLabel("Message").fill(text);
  await page.getByRole("button", { name: "Send", exact: true }).click();
}

describe.skipIf(!available)("examples/chat-app in Chromium", () => {
  beforeAll(async () => {
    data = mkdtempSync(join(tmpdir(), "forkpoint-chat-app-"));
    const url = await start();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(url);
  });
  afterAll(async () => {
    await browser?.close();
    if (server?.pid && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once("exit", resolve));
      process.kill(-server.pid, "SIGTERM");
      await exited;
    }
    if (data) rmSync(data, { recursive: true, force: true });
  });

  it("streams an answer into the page as it comes", async () => {
    await page.getByRole("button", { name: "New chat", exact: true }).click();
    await poll(() => page.locator(".sidebar li").count()).toBe(1);
    // Every text the answer shows on its way, recorded by the page itself.
    // (Scripts as strings: the tests compile without the DOM's types.)
    await page.evaluate(`(() => {
      const seen = (window.seen = []);
      new MutationObserver(() => {
        const text = [...document.querySelectorAll('[data-role="assistant"] .body')].at(-1)?.textContent ?? "";
        if (text && seen.at(-1) !== text) seen.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    })()`);
    await send("hello there");
    await poll(() => texts(answers())).toEqual([expect.stringMatching(/^You asked: “hello there”\. Here is one way.*next\.$/)]);
    const seen = (await page.evaluate("window.seen")) as string[];
    const final = seen.at(-1)!;
    expect(seen.length).toBeGreaterThan(3);
    for (const text of seen) expect(final.startsWith(text)).toBe(true);
    // The sidebar's row: the first question as title, the answer as its preview.
    await poll(() => page.locator(".sidebar li").textContent()).toMatch(/^hello there 2You asked: “hello there”/);
  });

  it("regenerates an answer and picks among its versions", async () => {
    await idle();
    await answers().getByRole("button", { name: "Regenerate", exact: true }).click();
    await poll(() => texts(answers())).toEqual([expect.stringMatching(/Another take/)]);
    await poll(() => answers().locator(".versions").textContent()).toBe("‹2/2›");
    await answers().getByRole("button", { name: "Previous version" }).click();
    await poll(() => answers().locator(".versions").textContent()).toBe("‹1/2›");
    expect(await texts(answers())).toEqual([expect.stringMatching(/Here is one way/)]);
  });

  it("edits a question: a new version of it, answered anew", async () => {
    await idle();
    await questions().getByRole("button", { name: "Edit", exact: true }).click();
    await page.getByLabel("Edit message").fill("hello again");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await poll(() => texts(answers())).toEqual([expect.stringMatching(/^You asked: “hello again”/)]);
    await poll(() => questions().locator(".versions").textContent()).toBe("‹2/2›");
    await questions().getByRole("button", { name: "Previous version" }).click();
    await poll(() => texts(questions())).toEqual(["hello there"]);
    await poll(() => answers().locator(".versions").textContent()).toBe("‹1/2›");
    await questions().getByRole("button", { name: "Next version" }).click();
    await poll(() => texts(questions())).toEqual(["hello again"]);
  });

  it("an agent's answer with a tool call has versions too; moves take the call back and replay it", async () => {
    await idle();
    await send("add buy milk");
    await poll(() => answers().nth(1).locator(".tool").textContent()).toBe('add_todo({"text":"buy milk"}) ✓');
    await poll(todos).toEqual(["buy milk"]);
    await idle();
    await answers().nth(1).getByRole("button", { name: "Regenerate", exact: true }).click();
    await poll(() => answers().nth(1).locator(".versions").textContent()).toBe("‹2/2›");
    // The first answer's call was undone when the regenerate forked, the second's made: one item, not two.
    expect(await todos()).toEqual(["buy milk"]);
    const second = await page.locator(".todos li").getAttribute("data-id");
    await answers().nth(1).getByRole("button", { name: "Previous version" }).click();
    await poll(() => answers().nth(1).locator(".versions").textContent()).toBe("‹1/2›");
    await poll(() => page.locator(".todos li").getAttribute("data-id")).not.toBe(second);
    expect(await todos()).toEqual(["buy milk"]);
  });

  it("undoes and redoes moves, and rolls back to a checkpoint", async () => {
    await idle();
    const before = await shown();
    await page.getByRole("button", { name: "Undo", exact: true }).click();
    await poll(() => answers().nth(1).locator(".versions").textContent()).toBe("‹2/2›");
    await page.getByRole("button", { name: "Redo", exact: true }).click();
    await poll(() => answers().nth(1).locator(".versions").textContent()).toBe("‹1/2›");
    expect(await shown()).toEqual(before);

    await page.getByRole("button", { name: "Checkpoint", exact: true }).click();
    await poll(() => page.locator(".checkpoints li").count()).toBe(1);
    await send("add call mum");
    await poll(todos).toEqual(["buy milk", "call mum"]);
    await idle();
    await page.locator(".checkpoints li").getByRole("button", { name: "Roll back", exact: true }).click();
    await poll(todos).toEqual(["buy milk"]);
    expect(await shown()).toEqual(before);
    // The rollback is a move too: undo brings the later messages and their call back.
    await page.getByRole("button", { name: "Undo", exact: true }).click();
    await poll(todos).toEqual(["buy milk", "call mum"]);
  });

  it("an answer still streaming when another tab rolls back lands after its own question", async () => {
    await idle();
    // The same chat open in a second tab, ready before the question is sent.
    const other = await browser.newPage();
    try {
      await other.goto(page.url());
      const rollBack = other.locator(".checkpoints li").getByRole("button", { name: "Roll back", exact: true });
      await rollBack.waitFor();
      await send("tell me a story");
      await poll(() => texts(answers().nth(3))).toEqual([expect.stringMatching(/^Once upon a time/)]);
      await rollBack.click();
      await poll(() => other.locator('[data-role="assistant"]').count()).toBe(2);
    } finally {
      await other.close();
    }
    // The chat moved while this tab's answer was still coming.
    expect(await chat().getAttribute("data-status")).toBe("streaming");
    await idle();
    // This tab now shows where the other put the chat; undo goes back to the question, answered in full there.
    expect(await answers().count()).toBe(2);
    await page.getByRole("button", { name: "Undo", exact: true }).click();
    await poll(() => texts(answers().nth(3))).toEqual([expect.stringMatching(/^Once upon a time.*The end\.$/)]);
    expect(await texts(questions())).toEqual(["hello again", "add buy milk", "add call mum", "tell me a story"]);
    expect(await todos()).toEqual(["buy milk", "call mum"]);
  });

  it("a question entered while an answer streams is not sent: the answer is never cut short", async () => {
    await idle();
    const asked = await questions().count();
    await send("tell me a story");
    await poll(() => chat().getAttribute("data-status")).toBe("streaming");
    await page.getByLabel("Message").fill("interrupting");
    await page.getByLabel("Message").press("Enter");
    await idle();
    expect(await questions().count()).toBe(asked + 1);
    expect(await texts(answers().last())).toEqual([expect.stringMatching(/^Once upon a time.*The end\.$/)]);
    expect(await answers().last().locator(".versions").count()).toBe(0);
  });

  it("a question from a tab another tab moved away from is refused; the tab then shows the chat as it is", async () => {
    const before = await shown();
    const other = await browser.newPage();
    try {
      await other.goto(page.url());
      const rollBack = other.locator(".checkpoints li").getByRole("button", { name: "Roll back", exact: true });
      await rollBack.waitFor();
      await rollBack.click();
      await poll(() => other.locator('[data-role="assistant"]').count()).toBe(2);
    } finally {
      await other.close();
    }
    // This tab still shows the whole chat, and asks on from it: nothing is saved, and it shows where the chat is now.
    await send("a stale question");
    await poll(() => page.locator("main > .error").textContent()).toContain("changed in another tab");
    await poll(() => answers().count()).toBe(2);
    await idle();
    expect(await texts(questions())).not.toContain("a stale question");
    await page.getByRole("button", { name: "Undo", exact: true }).click();
    await poll(shown).toEqual(before);
  });

  it("an undo from a tab that missed a question asked in another is refused; that tab then shows the chat as it is", async () => {
    await idle();
    const other = await browser.newPage();
    try {
      await other.goto(page.url());
      await poll(() => other.locator('[data-role="assistant"]').count()).toBe(await answers().count());
      // This tab asks on; the other still shows the chat without that turn, and clicks Undo: refused (its head is
      // older), so the turn is not taken back, and it reads the chat again.
      await send("one more");
      await idle();
      const asked = await texts(questions());
      await other.getByRole("button", { name: "Undo", exact: true }).click();
      await poll(() => other.locator("main > .error").textContent()).toContain("changed in another tab");
      await poll(() => other.locator('[data-role="user"] p:not(.tool)').allTextContents()).toEqual(asked);
    } finally {
      await other.close();
    }
  });

  it("shows the same chat, versions and sidebar after a reload", async () => {
    const before = await shown();
    await idle();
    const sidebar = await page.locator(".sidebar li").allTextContents();
    expect(before).toHaveLength(13);
    await page.reload();
    await poll(shown).toEqual(before);
    await poll(() => page.locator(".sidebar li").allTextContents()).toEqual(sidebar);
    // A second chat, then back to the first from the sidebar.
    await page.getByRole("button", { name: "New chat", exact: true }).click();
    await poll(() => page.locator(".sidebar li").allTextContents()).toEqual(["New chat 0No messages yet", ...sidebar]);
    expect(await answers().count()).toBe(0);
    await page.locator(".sidebar li").nth(1).getByRole("button").click();
    await poll(shown).toEqual(before);
    // Nothing failed on the server (a failure is logged with its stack).
    expect(output).not.toMatch(/Error\b/);
  });
});
