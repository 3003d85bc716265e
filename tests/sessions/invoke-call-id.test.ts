// invoke with `callId`: the framework's id of the call (a LangGraph tool's `config.toolCall.id`) is recorded on the
// call, as recordToolCall records one, beside the write options; a malformed one is refused before the tool runs.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/index.js";
import { dumpOf } from "../fixtures/backend.js";
import { appendLineTool, readOrNull, tempDir } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

describe("invoke with a callId", () => {
  it("records the call under it, with a request id and after a message as without one", async () => {
    const { fp } = dbs.open({ tools: [appendLineTool()] });
    const file = path.join(tempDir(), "log");
    const s = await fp.createSession({ userId: "alice" });
    const [question] = await s.append({ role: "user", content: "note" });
    await s.invoke("append_line", { path: file, line: "one" }, { callId: "call_1" });
    const retried = { callId: "call_2", requestId: "r2", after: question!.id };
    await s.invoke("append_line", { path: file, line: "two" }, retried);
    // A retry returns the recorded result: the tool runs once.
    await s.invoke("append_line", { path: file, line: "two" }, retried);
    await s.invoke("append_line", { path: file, line: "three" });
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["call_1", "call_2", null]);
    expect(readOrNull(file)).toBe("one\ntwo\nthree\n");
  });

  it("refuses a malformed callId (ValidationError) before anything runs or is written", async () => {
    const { fp, path: db } = dbs.open({ tools: [appendLineTool()] });
    const file = path.join(tempDir(), "log");
    const s = await fp.createSession({ userId: "alice" });
    const before = await dumpOf(db);
    for (const callId of ["", "   ", "\ud800", 42, null]) {
      const error = await rejectionOf(s.invoke("append_line", { path: file, line: "x" }, { callId } as never));
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).message).toMatch(/callId/);
    }
    expect(readOrNull(file)).toBeNull();
    expect(await dumpOf(db)).toEqual(before);
  });
});
