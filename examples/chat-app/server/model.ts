// The chat's model: OpenAI when OPENAI_API_KEY is set (with @ai-sdk/openai installed), else the offline mock model.
import type { LanguageModel } from "ai";
import { mockModel } from "./mock-model.js";

export interface ChatModel {
  model: LanguageModel;
  /** What the server prints at start. */
  label: string;
}

/** The provider package is optional: the example installs nothing to run offline. */
const OPENAI = "@ai-sdk/openai";

export async function chatModel(env: NodeJS.ProcessEnv = process.env): Promise<ChatModel> {
  if (!env.OPENAI_API_KEY) {
    const delayMs = Number(env.CHAT_MOCK_DELAY_MS ?? 40);
    return { model: mockModel(delayMs), label: "the offline mock model (set OPENAI_API_KEY for a real one)" };
  }
  // A variable specifier: TypeScript does not look the package up, so the example compiles without it.
  const provider = (await import(OPENAI).catch((error: { code?: string }) => {
    if (error.code !== "ERR_MODULE_NOT_FOUND") throw error;
    throw new Error(`OPENAI_API_KEY is set but ${OPENAI} is not installed: run \`npm install ${OPENAI}\`, or unset the key to run offline`);
  })) as { openai: (modelId: string) => LanguageModel };
  const modelId = env.OPENAI_MODEL ?? "gpt-4.1-mini";
  return { model: provider.openai(modelId), label: `OpenAI's ${modelId}` };
}
