// The offline model: the AI SDK's own mock model, streaming canned answers word by word and calling add_todo when asked.
import { simulateReadableStream } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { randomUUID } from "node:crypto";

type CallOptions = Parameters<MockLanguageModelV4["doStream"]>[0];
type StreamPart = Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer P> ? P : never;

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A regenerated answer differs from the one before: the answers take turns. */
const CANNED = [
  "Here is one way to look at it. Start small, write down what you know, and check each step before the next.",
  "Another take: split the problem in two, solve the easier half first, and let that answer guide the rest.",
  "A third angle: ask what would make this easy, then look for the smallest change that gets you there.",
];

/** A long answer, to watch it stream (or to edit and undo in another tab meanwhile). */
const STORY =
  "Once upon a time a small robot kept a notebook of everything it tried. Each evening it marked the page it liked best, " +
  "and each morning it could go back to any mark and try again, without losing a single page in between. One day it " +
  "took a wrong turn, wrote three pages of nonsense, and laughed: it simply turned back to the last good mark and went " +
  "another way. The old pages stayed in the notebook, and years later they were the ones it liked to read the most. " +
  "The end.";

/** The text of the prompt's last message (a user's question, or the output of a tool the model called). */
function lastText(prompt: CallOptions["prompt"]): { role: string; text: string } {
  const last = prompt.at(-1);
  if (!last) return { role: "user", text: "" };
  if (typeof last.content === "string") return { role: last.role, text: last.content };
  const text = last.content.map((p) => (p.type === "text" ? p.text : p.type === "tool-result" ? JSON.stringify(p.output) : "")).join(" ");
  return { role: last.role, text };
}

/** Text stream parts, one word per delta, so the page shows the answer growing. */
function words(text: string): StreamPart[] {
  const id = randomUUID();
  return [
    { type: "text-start", id },
    ...text.split(/(?<= )/).map((delta): StreamPart => ({ type: "text-delta", id, delta })),
    { type: "text-end", id },
  ];
}

/**
 * "add …" or "remember …" makes the model call add_todo, then confirm; a "story" is long; anything else gets the next
 * canned answer.
 * `delayMs` spaces the chunks out, as a real model's tokens are.
 */
export function mockModel(delayMs: number): MockLanguageModelV4 {
  let answers = 0;
  return new MockLanguageModelV4({
    doStream: async ({ prompt }) => {
      const { role, text } = lastText(prompt);
      const todo = /^\s*(?:add|remember)\s+(.+)$/i.exec(text);
      let chunks: StreamPart[];
      let finish: "stop" | "tool-calls" = "stop";
      if (role === "tool") chunks = words("Done: it is on your to-do list. Undo, edit or regenerate and it comes off again.");
      else if (todo) {
        chunks = [
          { type: "tool-call", toolCallId: `call-${randomUUID()}`, toolName: "add_todo", input: JSON.stringify({ text: todo[1] }) },
        ];
        finish = "tool-calls";
      } else if (/\bstory\b/i.test(text)) chunks = words(STORY);
      else chunks = words(`You asked: “${text.trim()}”. ${CANNED[answers++ % CANNED.length]}`);
      const end: StreamPart = { type: "finish", finishReason: { unified: finish, raw: undefined }, usage };
      return { stream: simulateReadableStream({ chunks: [...chunks, end], chunkDelayInMs: delayMs }) };
    },
  });
}
