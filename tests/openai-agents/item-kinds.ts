// What the resumed-run tests read off a session's items and a run's errors.
import type { AgentInputItem } from "@openai/agents";

/** Each item's role, or its type for an item without one (a function call, its result). */
export const kinds = (items: AgentInputItem[]) =>
  items.map((item) => (item as { role?: string; type?: string }).role ?? (item as { type: string }).type);

/** The error's code, or the code of the error it wraps (the Runner's ToolCallError holds what a tool threw). */
export const codeOf = (e: unknown): string | undefined => {
  const o = e as { code?: unknown; error?: unknown; cause?: unknown } | null | undefined;
  if (typeof o?.code === "string") return o.code;
  return o?.error || o?.cause ? codeOf(o.error ?? o.cause) : undefined;
};
