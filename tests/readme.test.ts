// The README's `ts` examples, run in order as one program against the real package source.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { onPostgres } from "./fixtures/backend.js";
import { freshPgDatabase, pgServer } from "./fixtures/postgres-database.js";

const root = resolve(import.meta.dirname, "..");
// Inside the project (ignored by git) so that `--import tsx` resolves from node_modules.
mkdirSync(join(root, ".tmp"), { recursive: true });
const dir = mkdtempSync(join(root, ".tmp", "readme-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("README examples", () => {
  it("run as written and print what the comments say", async () => {
    // The PostgreSQL example runs on the test server; without one (and without CI) it is skipped, loudly.
    const databaseUrl = (await pgServer()) ? await freshPgDatabase() : undefined;
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const program = blocks
      .join("\n")
      // On the store under test: in the postgres project, each `path` the examples open is a database of the server's.
      .replaceAll(
        `from "forkpoint"`,
        `from ${JSON.stringify(join(root, onPostgres ? "tests/fixtures/forkpoint-under-test.ts" : "src/index.ts"))}`,
      )
      .replaceAll(`from "forkpoint/langgraph"`, `from ${JSON.stringify(join(root, "src/langgraph/index.ts"))}`)
      .replaceAll(`from "forkpoint/ai"`, `from ${JSON.stringify(join(root, "src/ai/index.ts"))}`)
      .replaceAll(`from "forkpoint/openai-agents"`, `from ${JSON.stringify(join(root, "src/openai-agents/index.ts"))}`);
    const file = join(dir, "readme-example.ts");
    writeFileSync(file, program);
    const out = execFileSync(process.execPath, ["--import", "tsx", file], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, DATABASE_URL: databaseUrl ?? "" },
    });
    expect(out).toContain("{ city: 'Lisbon', month: 'May' }");
    expect(out).toContain("{ draft: 3, plan: 1, review: 1 } true");
    expect(out).toContain("[ 'plan' ]\n4\n");
    expect(out).toContain("< 2/2 >");
    expect(out.split("\n")).toEqual(expect.arrayContaining(["true 2", "SESSION_MOVED", "false late answer < 2/2 >"]));
    expect(out).toContain("[ 'write_file' ] false");
    expect(out).toContain("ok: true");
    expect(out.split("\n")).toContain("true");
    expect(out).toContain("[ 'plan.md' ]");
    expect(out).toContain("true TOOL_TIMEOUT");
    expect(out.split("\n")).toContain("TOOL_NOT_REGISTERED");
    expect(out).toContain("[ 'write_file', 'write_file' ]");
    expect(readFileSync(join(dir, "project", "plan.md"), "utf8")).toBe("draft 1\n");
    expect(out.split("\n")).toContain("3");
    expect(out.split("\n")).toContain("3 4 Booked a hotel!");
    expect(out.split("\n")).toContain("Name a city < 1/2 > | Porto < 2/2 >");
    expect(out.split("\n")).toContain("Lisbon 2");
    expect(out.split("\n")).toContain("user: hi | assistant: echo: hi | user: book Lisbon | assistant: echo: book Lisbon");
    expect(out.split("\n")).toContain("remember to buy milk | Saved todo.md.");
    expect(out).toContain("todo.md after rollback: false");
    expect(out).toContain("todo.md after switch: buy milk");
    expect(out.split("\n")).toEqual(
      expect.arrayContaining(["twice: true", "undo: [ 'write_file' ] buy milk", "redo: true false", "NOTHING_TO_REDO"]),
    );
    expect(out).toContain("Planned day 1. day 1: Alfama");
    expect(out).toContain("user, function_call, function_call_result, assistant");
    expect(out).toContain("plan.txt after clear: false");
    expect(out.split("\n")).toContain("and day 3?"); // applyHistoryTransaction's replace_suffix
    expect(out.split("\n").filter((l) => l === "{ todos: [ 'buy milk' ] }")).toHaveLength(2); // migrated, then rolled back
    expect(out.split("\n")).toContain("per session: { todos: [ 'buy milk' ], done: [] }");
    expect(out.split("\n")).toContain("atomic: changed my mind");
    expect(out.split("\n")).toContain("[ 'hello' ] 1");
    expect(out.split("\n")).toContain("true true");
    if (databaseUrl) expect(out.split("\n")).toEqual(expect.arrayContaining(["positions 1,2", "moved 2"]));
  });
});
