// The sidebar: a user's chats, newest first, each with its last message as a one-line preview.
import type { Forkpoint } from "forkpoint";

export interface SidebarRow {
  id: string;
  title: string | null;
  preview: string;
  messageCount: number;
}

export async function sidebar(fp: Forkpoint, userId: string): Promise<SidebarRow[]> {
  // One read: each item carries its current branch's last message (a preview of its text parts) and message count.
  const { items } = await fp.listSessions({ userId, limit: 50 });
  return items.map(({ id, title, lastMessage, messageCount }) => ({ id, title, preview: lastMessage?.preview ?? "", messageCount }));
}
