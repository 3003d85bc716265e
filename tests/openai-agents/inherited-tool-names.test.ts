// Function tools named like Object.prototype members are tools like any other: one given no undo is irreversible (a
// rollback skips it, a switch back does not run it again); one named `__proto__` is registered and undone by its undo.
import { appendFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { tool } from "@openai/agents";
import { expect, it } from "vitest";
import { z } from "zod";
import { agentToolDefinitions } from "../../src/openai-agents/index.js";
import { tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

for (const name of ["send_email", "toString", "valueOf", "constructor", "hasOwnProperty"])
  it(`a tool named ${name} without an undo is skipped by a rollback and not run again by a switch back`, async () => {
    const file = path.join(tempDir(), "sent.log");
    const t = tool({
      name,
      description: "send",
      parameters: z.object({ to: z.string() }),
      execute: async ({ to }) => {
        appendFileSync(file, `sent to ${to}\n`);
        return "sent";
      },
    });
    const { fp } = dbs.open({ tools: agentToolDefinitions([t], {}) });
    const s = await fp.createSession({ userId: "u" });
    const cp = await s.checkpoint({ name: "before" });
    await s.invoke(name, { to: "bob" });
    const head = (await s.info()).currentBranchId;
    const back = await s.rollback(cp.id);
    expect([back.undone.length, back.skipped.length]).toEqual([0, 1]);
    expect((await s.switchBranch(head)).replayed).toEqual([]);
    expect(readFileSync(file, "utf8")).toBe("sent to bob\n");
  });

it("a tool named __proto__ is registered, run and undone by its own undo", async () => {
  const log: string[] = [];
  const t = tool({
    name: "__proto__",
    description: "p",
    parameters: z.object({ x: z.string() }),
    execute: async ({ x }) => (log.push(`run ${x}`), "ok"),
  });
  const undos = {} as Record<string, unknown>;
  Object.defineProperty(undos, "__proto__", {
    value: async () => void log.push("undo"),
    enumerable: true,
    writable: true,
    configurable: true,
  });
  const definitions = agentToolDefinitions([t], undos as never);
  expect(definitions.map((d) => d.name)).toEqual(["__proto__"]);
  const { fp } = dbs.open({ tools: definitions });
  const s = await fp.createSession({ userId: "u" });
  const cp = await s.checkpoint({ name: "c" });
  await s.invoke("__proto__", { x: "a" });
  expect((await s.rollback(cp.id)).undone.map((c) => c.tool)).toEqual(["__proto__"]);
  expect(log).toEqual(["run a", "undo"]);
});
