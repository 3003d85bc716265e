// The web view's first paint of a large session: from the click on it to its graph, history and checkpoint list drawn,
// in Debian's Chromium. npx tsx bench/ui-first-paint.ts [CHECKPOINTS=50000] [RUNS=5]   (not a test: it reports)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { pageFolder } from "../src/cli/ui-page.js";
import { openForkpoint } from "../src/index.js";
import { startUiServer } from "../src/ui/server.js";

const checkpoints = Number(process.argv[2] ?? 50_000);
const runs = Number(process.argv[3] ?? 5);
const dir = mkdtempSync(join(tmpdir(), "forkpoint-first-paint-"));
try {
  const fp = openForkpoint({ path: join(dir, "large.db") });
  // An agent run: a message every 10 checkpoints, and a rollback every 2,500 (20 branches).
  const s = await fp.createSession({ userId: "big", title: "A long agent run" });
  let made = performance.now();
  let fork = "";
  for (let i = 0; i < checkpoints; i++) {
    if (i % 10 === 0) await s.append({ role: i % 20 === 0 ? "user" : "assistant", content: `step ${i}` });
    const cp = await s.checkpoint({ name: `step ${i}` });
    if (i % 2500 === 1000) fork = cp.id;
    if (i % 2500 === 2000) await s.rollback(fork);
  }
  made = performance.now() - made;
  const ui = await startUiServer({ fp, assetsDir: await pageFolder((line) => console.error(line)) });
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-sync"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const times: number[] = [];
    for (let run = 0; run < runs; run++) {
      await page.goto(ui.url);
      await page.getByRole("button", { name: "big", exact: true }).click();
      const session = page.getByTestId(`session-${s.id}`);
      await session.waitFor();
      // From the click to the frame after the graph's nodes, the history and the list are in the document.
      const start = (await page.evaluate("performance.now()")) as number;
      await session.click();
      await page.locator(".react-flow__node").first().waitFor();
      await page.getByTestId("branch-history").locator("li").first().waitFor();
      await page.getByTestId("checkpoint-list").locator("li").first().waitFor();
      const painted = (await page.evaluate("new Promise((r) => requestAnimationFrame(() => r(performance.now())))")) as number;
      times.push(painted - start);
    }
    const elements = (await page.evaluate('document.getElementsByTagName("*").length')) as number;
    times.sort((a, b) => a - b);
    console.log(
      `${checkpoints} checkpoints (written in ${(made / 1000).toFixed(1)} s): first paint ${times.map((t) => t.toFixed(0)).join(", ")} ms ` +
        `(median ${times[Math.floor(times.length / 2)]!.toFixed(0)} ms); ${elements} elements in the page`,
    );
  } finally {
    await browser.close();
    await ui.close();
    await fp.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
