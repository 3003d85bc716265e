// What the page shows of one chat: its messages as useChat takes them, each message's versions, checkpoints, to-dos.
import type { Checkpoint, MessageVersions, SessionHandle } from "forkpoint";
import { loadChat } from "forkpoint/ai";
import type { UIMessage } from "ai";
import type { Todo, TodoList } from "./todos.js";

export interface ChatView {
  id: string;
  /** The branch shown: the page sends it with its next question (`at`), so a tab another tab moved away from is refused. */
  branchId: string;
  title: string | null;
  messages: UIMessage[];
  /** The `< 2/3 >` picker of each message, by its UIMessage id: `branchIds[i]` is where version i lives. */
  versions: Record<string, MessageVersions>;
  checkpoints: Pick<Checkpoint, "id" | "name" | "position">[];
  todos: Todo[];
}

export async function chatView(s: SessionHandle, todos: TodoList): Promise<ChatView> {
  const [info, messages, history, checkpoints] = await Promise.all([
    s.info(),
    loadChat(s),
    s.history({ withVersions: true }),
    s.listCheckpoints({ limit: 20 }),
  ]);
  // loadChat names a message by the id the client gave it (stored as clientId), else by forkpoint's id; a message
  // stored in several entries (an answer continued after a client-side tool) takes the versions of its first.
  const versions: Record<string, MessageVersions> = {};
  for (const m of history) versions[m.clientId ?? m.id] ??= m.versions;
  return {
    id: s.id,
    branchId: info.currentBranchId,
    title: info.title,
    messages,
    versions,
    checkpoints: checkpoints.items.map(({ id, name, position }) => ({ id, name, position })),
    todos: todos.read(s.id),
  };
}
