// Rewrites docs/ui.png: `forkpoint demo` on a fresh database, then `forkpoint ui` in Debian's Chromium, the agent
// session's rollback planned and performed from the page. Run `npx tsx scripts/ui-screenshot.ts` (needs /usr/bin/chromium).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";
import { build } from "vite";
import { writeFile } from "../src/cli/demo/tools.js";
import { openForkpoint } from "../src/index.js";

const root = resolve(import.meta.dirname, "..");
const out = join(root, "docs", "ui.png");
const dir = mkdtempSync(join(tmpdir(), "forkpoint-ui-screenshot-"));
const db = join(dir, "demo.db");
const cli = ["--import", "tsx", join(root, "src", "cli", "main.ts")];

interface DemoIds {
  agent: { sessionId: string; startCheckpointId: string; filesBranchId: string };
}

try {
  const made = spawnSync(process.execPath, [...cli, "--db", db, "--json", "demo", "--files", join(dir, "files")], { encoding: "utf8" });
  if (made.status !== 0) throw new Error(`forkpoint demo failed: ${made.stderr}`);
  const demo = JSON.parse(made.stdout) as DemoIds;
  // The demo ends with its agent's writes undone: back on the branch that made them, the rollback has effects to undo.
  const fp = openForkpoint({ path: db, tools: [writeFile] });
  await (await fp.getSession(demo.agent.sessionId, { userId: "demo" })).switchBranch(demo.agent.filesBranchId);
  await fp.close();

  await build({ configFile: join(root, "ui", "vite.config.ts"), logLevel: "error" });
  const tools = join(root, "src", "cli", "demo", "tools.ts");
  const server = spawn(process.execPath, [...cli, "--db", db, "--tools", tools, "ui", "--allow-writes"], { cwd: root });
  const url = await new Promise<string>((resolveUrl, reject) => {
    let printed = "";
    server.stdout.on("data", (chunk: Buffer) => {
      printed += chunk.toString();
      const found = /http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/.exec(printed);
      if (found) resolveUrl(found[0]);
    });
    server.on("exit", (code) => reject(new Error(`forkpoint ui exited with ${code}: ${printed}`)));
  });
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
    await page.goto(url);
    await page.getByRole("button", { name: "demo", exact: true }).click();
    await page.getByTestId(`session-${demo.agent.sessionId}`).click();
    await page.getByTestId(`checkpoint-${demo.agent.startCheckpointId}`).click();
    await page.getByTestId("plan-rollback").click();
    await page.getByTestId("perform-move").click();
    await page.locator(".node.current", { hasText: "world · 0 applied" }).waitFor();
    await page.screenshot({ path: out });
    console.log(`wrote ${out}`);
  } finally {
    await browser.close();
    server.kill("SIGTERM");
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
