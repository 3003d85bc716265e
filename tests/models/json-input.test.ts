// Compile-time check (npm run lint type-checks tests): the public inputs take a framework's own interfaces, which have
// no index signature, and readonly arrays, without a cast; reads still return JsonValue. Run-time checks are unchanged.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { defineTool, openForkpoint, type Forkpoint, type JsonValue, type SessionHandle } from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";

/** Shaped like an AI SDK UIMessage part: an interface, so no index signature. */
interface TextPart {
  type: "text";
  text: string;
  state?: "streaming" | "done";
}
interface ToolPart {
  readonly type: `tool-${string}`;
  readonly toolCallId: string;
  readonly input: unknown;
}
type Part = TextPart | ToolPart;
/** Shaped like a LangChain message's fields. */
interface ChatMessageFields {
  content: string | readonly Part[];
  additional_kwargs: { [key: string]: unknown };
  response_metadata: Record<string, unknown>;
  id?: string;
}
interface AgentState {
  readonly plan: readonly string[];
  step: number;
  notes?: { author: string };
}
interface SearchArgs {
  query: string;
  filters: readonly { field: string; value: unknown }[];
}

const parts: readonly Part[] = [
  { type: "text", text: "hello", state: "done" },
  { type: "tool-search", toolCallId: "call-1", input: { query: "lisbon" } },
];
const fields: ChatMessageFields = { content: parts, additional_kwargs: { lang: "en" }, response_metadata: {}, id: "lc-1" };
const state: AgentState = { plan: ["search", "book"], step: 1, notes: { author: "planner" } };
const args: SearchArgs = { query: "lisbon", filters: [{ field: "stars", value: 4 }] };

let dir: string;
let fp: Forkpoint;
let s: SessionHandle;

beforeAll(async () => {
  dir = makeTempDir("forkpoint-json-input-");
  fp = openForkpoint({ path: path.join(dir, "input.db"), tools: [defineTool({ name: "search", run: (a) => ({ found: a }) })] });
  s = await fp.createSession({ userId: "alice", metadata: fields.additional_kwargs });
});
afterAll(async () => {
  await fp.close();
  removeDir(dir);
});

describe("framework interfaces go in without a cast", () => {
  it("message content and metadata, state, updater results, tool args and results, checkpoint metadata", async () => {
    const [m] = await s.append({ role: "assistant", content: parts, metadata: fields });
    await s.turn([{ role: "user", content: fields }], { name: "turn", metadata: state });
    await s.setState(state);
    await s.setState((previous) => ({ ...state, step: typeof previous === "object" ? 2 : 0 }) satisfies AgentState);
    await s.invoke("search", args);
    await s.recordToolCall({ tool: "search", args, result: parts });
    const cp = await s.checkpoint({ metadata: args });
    const { message } = await s.edit(m!.id, { role: "assistant", content: [parts[0]!] });

    // Reads return JsonValue, whatever went in.
    const history = await s.history();
    expectTypeOf(history[0]!.content).toEqualTypeOf<JsonValue>();
    expectTypeOf(await s.getState()).toEqualTypeOf<JsonValue>();
    expect(message.content).toEqual([parts[0]]);
    const restored = await s.restore(cp.id);
    expect(restored.state).toEqual({ ...state, step: 2 });
    expect(restored.toolTrack.map((t) => t.args)).toEqual([args, args]);
    expect(restored.history.map((h) => h.content)).toEqual([parts, fields]);
  });

  it("what is not JSON is still refused at run time, and the compiler refuses what it can see", async () => {
    class Point {
      x = 1;
    }
    const e = await rejectionOf(() => s.append({ role: "user", content: { at: new Point() } }));
    expect(e).toMatchObject({ code: "VALIDATION_ERROR", field: "message.content.at" });
    // @ts-expect-error undefined is no JSON value
    await rejectionOf(() => s.append({ role: "user", content: undefined }));
    // @ts-expect-error a BigInt is no JSON value
    await rejectionOf(() => s.setState(10n));
    // @ts-expect-error a symbol is no JSON value
    await rejectionOf(() => s.invoke("search", Symbol("x")));
  });
});
