// Items JSON cannot hold (a lone surrogate, NaN, a BigInt, a cycle), given to the Agents session or to saveChat: a
// ValidationError naming the path as the caller wrote it, before anything is compared, recorded or stored.
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/index.js";
import { saveChat } from "../../src/ai/index.js";
import { ForkpointSession } from "../../src/openai-agents/index.js";
import { dumpOf } from "../fixtures/backend.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

function cyclic(): Record<string, unknown> {
  const o: Record<string, unknown> = { role: "user", content: "loop" };
  o.self = o;
  return o;
}

const HOSTILE: { what: string; item: () => Record<string, unknown>; path: string; code: string }[] = [
  { what: "a lone surrogate", item: () => ({ role: "user", content: "x\ud800" }), path: ".content", code: "MALFORMED_TEXT" },
  { what: "NaN", item: () => ({ role: "user", content: "x", score: NaN }), path: ".score", code: "VALIDATION_ERROR" },
  { what: "a BigInt", item: () => ({ role: "user", content: "x", n: 1n }), path: ".n", code: "VALIDATION_ERROR" },
  { what: "a cycle", item: cyclic, path: ".self", code: "VALIDATION_ERROR" },
];

describe("hostile items", () => {
  for (const h of HOSTILE) {
    it(`${h.what}: addItems and each part of applyHistoryTransaction refuse it by path, nothing written, the id kept free`, async () => {
      const { fp, path } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const memory = new ForkpointSession(s);
      await memory.addItems([{ role: "user", content: "hi" }]);
      const before = await dumpOf(path);
      const calls: [string, () => Promise<unknown>][] = [
        ["items[0]", () => memory.addItems([h.item() as never])],
        [
          "transaction.items[0]",
          () => memory.applyHistoryTransaction({ operationId: "op", transaction: { type: "append_items", items: [h.item() as never] } }),
        ],
        [
          "transaction.expectedSuffix[0]",
          () =>
            memory.applyHistoryTransaction({
              operationId: "op",
              transaction: { type: "replace_suffix", expectedSuffix: [h.item() as never], replacement: [] },
            }),
        ],
        [
          "transaction.replacement[0]",
          () =>
            memory.applyHistoryTransaction({
              operationId: "op",
              transaction: { type: "replace_suffix", expectedSuffix: [], replacement: [h.item() as never] },
            }),
        ],
      ];
      for (const [field, call] of calls) {
        const error = await rejectionOf(call());
        expect(error, field).toBeInstanceOf(ValidationError);
        expect(error, field).toMatchObject({ code: h.code, field: `${field}${h.path}` });
      }
      expect(await dumpOf(path)).toEqual(before);
      // The operation id was not used up: a valid transaction with it applies.
      await memory.applyHistoryTransaction({
        operationId: "op",
        transaction: { type: "append_items", items: [{ role: "user", content: "ok" }] },
      });
      expect((await s.history()).map((m) => m.role)).toEqual(["user", "user"]);
    });
  }

  it("a cyclic UIMessage part given to saveChat is a ValidationError, not a stack overflow", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const part: Record<string, unknown> = { type: "text", text: "hi" };
    part.again = part;
    const before = await dumpOf(path);
    const error = await rejectionOf(saveChat(s, [{ id: "m1", role: "user", parts: [part] } as never]));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ field: "messages[0].parts[0].again" });
    expect(await dumpOf(path)).toEqual(before);
  });
});
