// A child process for the ForkpointSession tests: a ForkpointSession on a session of a database it opens, driven by
// JSON commands on stdin, one per line, each answered by one JSON line on stdout.
// Usage: node session-worker.js <dbpath> <sessionId> <userId>. Prints "ready" once open. Commands:
//   { "op": "add", "items": [...] }                 -> { "ok": true }
//   { "op": "pop" }                                 -> { "ok": true, "item": <the item or null> }
//   { "op": "apply", "args": { operationId, transaction } } -> { "ok": true } or { "ok": false, "code": "..." }
//   { "op": "race", "tag": "w1", "adds": 40, "popEvery": 3 } -> { "ok": true, "added": [...], "popped": [...] }
//     (adds items { role: "user", content: "<tag>-<i>" } one call each, and pops after every popEvery-th add)
import { createInterface } from "node:readline";
import { ForkpointSession } from "../../src/openai-agents/index.js";
import { openForkpoint } from "../fixtures/backend.js";

const [dbPath, sessionId, userId] = process.argv.slice(2);
if (!dbPath || !sessionId || !userId) {
  process.stderr.write("usage: session-worker <dbpath> <sessionId> <userId>\n");
  process.exit(2);
}
const fp = openForkpoint({ path: dbPath });
const memory = new ForkpointSession(await fp.getSession(sessionId, { userId }));
process.stdout.write("ready\n");

const answer = (value: unknown) => process.stdout.write(JSON.stringify(value) + "\n");
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const command = JSON.parse(line) as { op: string; [key: string]: any };
  try {
    if (command.op === "add") {
      await memory.addItems(command.items);
      answer({ ok: true });
    } else if (command.op === "pop") {
      answer({ ok: true, item: (await memory.popItem()) ?? null });
    } else if (command.op === "apply") {
      await memory.applyHistoryTransaction(command.args);
      answer({ ok: true });
    } else if (command.op === "race") {
      const added: string[] = [];
      const popped: unknown[] = [];
      for (let i = 0; i < command.adds; i++) {
        const content = `${command.tag}-${i}`;
        await memory.addItems([{ role: "user", content }]);
        added.push(content);
        if ((i + 1) % command.popEvery === 0) {
          const item = await memory.popItem();
          if (item) popped.push(item);
        }
      }
      answer({ ok: true, added, popped });
    } else answer({ ok: false, code: "UNKNOWN_OP" });
  } catch (error) {
    answer({ ok: false, code: (error as { code?: string }).code ?? "ERROR", message: (error as Error).message });
  }
}
await fp.close();
