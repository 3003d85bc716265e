// What the page shows of one chat: its messages as useChat takes them, each message's versions, checkpoints, to-dos.
import type { Checkpoint, MessageVersions, SessionHandle } from "forkpoint";
import { loadChat } from "forkpoint/ai";
import type { UIMessage } from "ai";
import { versionsByMessage } from "./message-versions.js";
import type { Todo, TodoList } from "./todos.js";

export interface ChatView {
  id: string;
  /** The branch shown: the page sends it with its next question and move (`at`), so a stale tab is refused. */
  branchId: string;
  /**
   * The branch's head position when the chat was read (sent with `branchId`): a tab that missed another tab's question
   * on the same branch is refused too, instead of forking over that turn and undoing its tool calls.
   */
  head: number;
  title: string | null;
  messages: UIMessage[];
  /** The `< 2/3 >` picker of each message, by its UIMessage id: `branchIds[i]` is where version i lives. */
  versions: Record<string, MessageVersions>;
  checkpoints: Pick<Checkpoint, "id" | "name" | "position">[];
  todos: Todo[];
}

export async function chatView(s: SessionHandle, todos: TodoList): Promise<ChatView> {
  // Where the chat is, read before its messages: a write between the two only makes the page's `at` older than what it
  // shows (its next request refused, the chat read again), never newer.
  const summary = await s.summary();
  const [messages, history, checkpoints] = await Promise.all([
    loadChat(s),
    s.history({ withVersions: true }),
    s.listCheckpoints({ limit: 20 }),
  ]);
  const versions = versionsByMessage(history);
  return {
    id: s.id,
    branchId: summary.currentBranchId,
    head: summary.position,
    title: summary.title,
    messages,
    versions,
    checkpoints: checkpoints.items.map(({ id, name, position }) => ({ id, name, position })),
    todos: todos.read(s.id),
  };
}
