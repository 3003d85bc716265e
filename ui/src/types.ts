// The shapes the UI server's JSON endpoints return: the public API's types, with dates as ISO strings.
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
export interface UserInfo {
  userId: string;
  sessions: number;
  updatedAt: string;
}
export interface SessionInfo {
  id: string;
  userId: string;
  title: string | null;
  currentBranchId: string;
  createdAt: string;
  updatedAt: string;
}
export interface Branch {
  id: string;
  parentId: string | null;
  forkCheckpointId: string | null;
  forkPosition: number;
  name: string | null;
  reason: string;
  head: number;
  current: boolean;
  createdAt: string;
}
export interface Message {
  id: string;
  branchId: string;
  position: number;
  role: string;
  content: Json;
  createdAt: string;
}
export interface ToolInvocation {
  id: string;
  branchId: string;
  position: number;
  tool: string;
  args: Json;
  status: string;
  result: Json;
  applied: boolean;
}
export interface Checkpoint {
  id: string;
  branchId: string;
  position: number;
  name: string | null;
  auto: boolean;
  createdAt: string;
}
export interface SessionTree {
  info: SessionInfo;
  branches: Branch[];
  /** The current lineage's tool calls. */
  toolTrack: ToolInvocation[];
  /** The calls applied in the world, oldest application first (those applied off the current lineage too). */
  world: ToolInvocation[];
  /** Each branch's newest checkpoints (a few of each); every one is in the paged list. */
  checkpoints: Checkpoint[];
  /** Branches with more checkpoints than `checkpoints` holds. */
  moreCheckpoints: string[];
  checkpointCount: number;
}
export interface VersionedMessage extends Message {
  versions: { index: number; count: number; branchIds: string[] };
}
/** A page of a branch's history, oldest first; `earlier`: the position to read the page before it from, if any. */
export interface HistoryPage {
  items: VersionedMessage[];
  earlier: number | null;
}
export interface Restored {
  checkpoint: Checkpoint;
  state: Json;
  history: Message[];
  toolTrack: ToolInvocation[];
}
export interface Versions {
  index: number;
  count: number;
  versions: { branchId: string; message: Message }[];
}
export interface CheckpointDiff {
  state: {
    added: { path: string[]; value: Json }[];
    removed: { path: string[]; value: Json }[];
    changed: { path: string[]; from: Json; to: Json }[];
  };
  messages: { common: number; onlyA: Message[]; onlyB: Message[] };
  tools: { common: number; onlyA: ToolInvocation[]; onlyB: ToolInvocation[] };
  files: { added: string[]; modified: string[]; deleted: string[] } | null;
}
export interface MovePlan {
  branch: { id: string | null; parentId: string | null; forkPosition: number; position: number };
  undone: ToolInvocation[];
  replayed: ToolInvocation[];
  skipped: ToolInvocation[];
  unknown: ToolInvocation[];
  unregistered?: ToolInvocation[];
  leftBehind?: { position: number; kind?: string }[];
}
/** `/api/plan`'s answer: the plan, where the session was when it was made (the move's `ifAt`), and its workspace's directory. */
export interface PlanAt extends MovePlan {
  at: { branchId: string; head: number };
  workspace: string | null;
}
export interface MoveResult extends Omit<MovePlan, "branch"> {
  branch: Branch;
}
