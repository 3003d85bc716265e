// A scripted AI SDK model (ai/test's MockLanguageModelV4, ai@7's model spec): each step answers with the next scripted content.
import { simulateReadableStream } from "ai";
import { MockLanguageModelV4 } from "ai/test";

type LanguageModelV4Content = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>["content"][number];
type StreamPart = Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer P> ? P : never;

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A tool call the model makes: `input` is JSON-encoded as models send it. */
export const call = (toolCallId: string, toolName: string, input: unknown): LanguageModelV4Content => ({
  type: "tool-call",
  toolCallId,
  toolName,
  input: JSON.stringify(input),
});
export const text = (t: string): LanguageModelV4Content => ({ type: "text", text: t });

/** Answers step i with `steps[i]` (tool calls finish the step with "tool-calls", so the loop runs them and goes on). */
export function scriptedModel(steps: LanguageModelV4Content[][]): MockLanguageModelV4 {
  let i = 0;
  return new MockLanguageModelV4({
    doGenerate: async () => {
      const content = steps[i++] ?? [text("(no more steps)")];
      const calls = content.some((c) => c.type === "tool-call");
      return { content, finishReason: { unified: calls ? "tool-calls" : "stop", raw: undefined }, usage, warnings: [] };
    },
  });
}

/** The streaming twin of `scriptedModel`: each stream step sends the next scripted content as stream parts. */
export function scriptedStreamModel(steps: LanguageModelV4Content[][], beforeStep?: (step: number) => Promise<void>): MockLanguageModelV4 {
  let i = 0;
  return new MockLanguageModelV4({
    doStream: async () => {
      const step = i++;
      await beforeStep?.(step);
      const content = steps[step] ?? [text("(no more steps)")];
      const calls = content.some((c) => c.type === "tool-call");
      const chunks = content.flatMap((c, n): StreamPart[] =>
        c.type === "text"
          ? [
              { type: "text-start" as const, id: `t${n}` },
              { type: "text-delta" as const, id: `t${n}`, delta: c.text },
              { type: "text-end" as const, id: `t${n}` },
            ]
          : [c as StreamPart],
      );
      return {
        stream: simulateReadableStream<StreamPart>({
          chunks: [
            ...chunks,
            {
              type: "finish" as const,
              finishReason: { unified: calls ? ("tool-calls" as const) : ("stop" as const), raw: undefined },
              usage,
            },
          ],
        }),
      };
    },
  });
}
