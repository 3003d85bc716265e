// The write_file tool both as a handler and as a module the MCP server loads with --tools, and the stores a plan test
// runs on (SQLite, and PostgreSQL when a server is available).
import fs from "node:fs";
import type { ForkpointOptions, ToolDefinition } from "../../src/index.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";

/** write_file: writes a file, and its undo puts back what was there. */
export const writeFile: ToolDefinition<{ path: string; text: string }, { previous: string | null }> = {
  name: "write_file",
  run: ({ path: file, text }) => {
    const previous = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
    fs.writeFileSync(file, text);
    return { previous };
  },
  undo: ({ args, result }) => {
    if (result.previous === null) fs.rmSync(args.path, { force: true });
    else fs.writeFileSync(args.path, result.previous);
  },
};

/** The same tool as a module the server loads with --tools. */
export const TOOLS_MODULE = `import fs from "node:fs";
export const writeFile = {
  name: "write_file",
  run: ({ path, text }) => { const previous = fs.existsSync(path) ? fs.readFileSync(path, "utf8") : null; fs.writeFileSync(path, text); return { previous }; },
  undo: ({ args, result }) => { if (result.previous === null) fs.rmSync(args.path, { force: true }); else fs.writeFileSync(args.path, result.previous); },
};
`;

/** The stores to run on: SQLite at the test's `db()` path, and a fresh PostgreSQL database when a server is up. */
export async function planStores(db: () => string): Promise<[string, () => Promise<{ args: string[]; open: ForkpointOptions }>][]> {
  const pg = await pgServer();
  const stores: [string, () => Promise<{ args: string[]; open: ForkpointOptions }>][] = [
    ["sqlite", async () => ({ args: ["--db", db()], open: { path: db() } })],
  ];
  if (pg)
    stores.push(["postgres", async () => ((url) => ({ args: ["--postgres", url], open: { postgres: url } }))(await freshPgDatabase())]);
  return stores;
}
