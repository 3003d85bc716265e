// A scripted Agents SDK model (its `Model` interface): each turn answers with the next scripted output items, streamed or not.
import { Usage, type Model, type ModelRequest, type ModelResponse, type StreamEvent } from "@openai/agents";

type Output = ModelResponse["output"];

export const functionCall = (callId: string, name: string, args: unknown): Output[number] => ({
  type: "function_call",
  callId,
  name,
  arguments: JSON.stringify(args),
  status: "completed",
});
export const reply = (text: string): Output[number] => ({
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text }],
});

export class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  #turn = 0;

  constructor(
    private readonly turns: Output[],
    private readonly beforeTurn?: (turn: number) => Promise<void>,
  ) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const turn = this.#turn++;
    await this.beforeTurn?.(turn);
    return { usage: new Usage(), output: this.turns[turn] ?? [reply("(no more turns)")] };
  }

  /** Streams each turn as one `response_done` event holding the scripted output. */
  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const { output } = await this.getResponse(request);
    yield {
      type: "response_done",
      response: { id: `resp_${this.#turn}`, usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, output: output as never },
    };
  }
}
