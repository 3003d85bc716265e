// When a message of the app's list is a stored message: role and content (and metadata, for a whole form), ids aside.
import { isDeepStrictEqual } from "node:util";
import type { JsonObject } from "../models/json.js";
import type { Message, MessageInput } from "../models/types.js";
import { CONTINUES_KEY } from "../sessions/entry-refs.js";

/** How contents compare: the form a framework's several ways of writing one content share (see `SyncOptions.sameAs`). */
export interface Comparing {
  sameAs?: ((content: unknown) => unknown) | undefined;
}

/** A message's own metadata, without the continuation mark. */
function ownMetadata(metadata: unknown): JsonObject | null {
  if (typeof metadata !== "object" || metadata === null) return null;
  const { [CONTINUES_KEY]: _mark, ...rest } = metadata as JsonObject;
  return Object.keys(rest).length > 0 ? rest : null;
}

/**
 * Role, content and metadata: what makes a message the same. Ids are left out: a client names the answers it
 * receives itself unless the server sends ids (`generateMessageId`), and a list whose ids changed is the same chat;
 * treating it as edited would fork and undo every tool call after the first renamed message.
 */
export const comparable = (m: { role: string; content: unknown; metadata?: unknown }, options: Comparing) => ({
  role: m.role,
  content: options.sameAs ? options.sameAs(m.content) : m.content,
  metadata: ownMetadata(m.metadata),
});

/**
 * Whether stored message `m` is the list's `input` as it is: role and content. Metadata is not compared: a client that
 * changes an earlier message's metadata only (a thumbs-up) has not edited it, and an edit would fork before it and undo
 * every later tool call. Entries are never rewritten, so such a change is not stored (the last answer's, with more
 * parts or new metadata, is: see `continues` and `restates`).
 */
export function keeps(m: Message, input: MessageInput, options: Comparing): boolean {
  const { role, content } = comparable(m, options);
  const next = comparable(input, options);
  return role === next.role && isDeepStrictEqual(content, next.content);
}

export const same = (m: Message, input: MessageInput, options: Comparing): boolean =>
  isDeepStrictEqual(comparable(m, options), comparable(input, options));

/**
 * Whether the list's last message `input` is stored answer `m` with new metadata of its own, its content the same: an
 * answer's metadata sent with its end (its usage, when it finished) is the answer's, stored as its later form as more
 * parts are (see `continues`). A list without metadata there keeps what is stored.
 */
export const restates = (m: Message, input: MessageInput, options: Comparing): boolean =>
  m.role === "assistant" &&
  input.role === "assistant" &&
  input.metadata !== undefined &&
  keeps(m, input, options) &&
  !same(m, input, options);
