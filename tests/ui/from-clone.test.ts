// `forkpoint ui` from a clone after `npm ci` alone: no dist/, yet the page is served (built on the fly, once).
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { repo } from "./page.js";
import { startCli, type UiProcess } from "./serve.js";

const clone = mkdtempSync(join(tmpdir(), "forkpoint-clone-"));
let ui: UiProcess | undefined;
afterAll(async () => {
  // Once it exited: it closes its database in the clone on SIGTERM, which would race the removal.
  await ui?.stop();
  rmSync(clone, { recursive: true, force: true });
});

describe("forkpoint ui from a clone", () => {
  it("serves the page after npm ci alone: it builds it into dist/web the first time", async () => {
    // What a clone holds after `npm ci`: the sources and node_modules, no dist/.
    for (const entry of ["src", "ui", "package.json", "tsconfig.json"]) cpSync(join(repo, entry), join(clone, entry), { recursive: true });
    symlinkSync(join(repo, "node_modules"), join(clone, "node_modules"));
    const db = join(clone, "forkpoint.db");
    const fp = openForkpoint({ path: db });
    await fp.createSession({ userId: "ann", title: "From a clone" });
    await fp.close();

    let stderr = "";
    ui = await startCli(["--db", db, "ui"], process.env, join(clone, "src/cli/main.ts"), (chunk) => (stderr += chunk));
    expect(stderr).toContain("building the page");
    expect(existsSync(join(clone, "dist", "web", "index.html"))).toBe(true);
    const page = await fetch(ui.url);
    const html = await page.text();
    expect([page.status, html]).toEqual([200, expect.stringContaining('<div id="root">')]);
    // The script the page loads is served too, with the cookie the first load set.
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)![1]!;
    const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
    const js = await fetch(`http://127.0.0.1:${ui.port}/${script}`, { headers: { cookie } });
    expect([js.status, js.headers.get("content-type")]).toEqual([200, "text/javascript; charset=utf-8"]);
    const users = await fetch(`http://127.0.0.1:${ui.port}/api/users`, { headers: { "x-forkpoint-token": ui.token } });
    expect(((await users.json()) as { items: { userId: string }[] }).items.map((u) => u.userId)).toEqual(["ann"]);
  });
});
