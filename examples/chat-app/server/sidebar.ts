// The sidebar: a user's chats, newest first, each with its last message as a one-line preview.
import type { Forkpoint, JsonValue } from "forkpoint";

export interface SidebarRow {
  id: string;
  title: string | null;
  preview: string;
  messageCount: number;
  updatedAt: string;
}

/** A stored UIMessage's text: its parts' text, on one line. */
function previewOf(content: JsonValue | undefined): string {
  const parts = Array.isArray(content) ? content : [content];
  const text = parts.map((p) => (typeof p === "string" ? p : p && typeof p === "object" && "text" in p ? String(p.text) : "")).join(" ");
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

export async function sidebar(fp: Forkpoint, userId: string): Promise<SidebarRow[]> {
  const { items } = await fp.listSessions({ userId, limit: 50 });
  // One summary() per row gives its last message and count.
  return Promise.all(
    items.map(async ({ id, title, updatedAt }) => {
      const summary = await (await fp.getSession(id, { userId })).summary();
      return {
        id,
        title,
        preview: previewOf(summary.lastMessage?.content),
        messageCount: summary.messages,
        updatedAt: updatedAt.toISOString(),
      };
    }),
  );
}
