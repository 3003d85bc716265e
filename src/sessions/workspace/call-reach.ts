// Where a tool call's effect lies, by the workspace paths its run recorded: what the moves that restore files (scope
// "both" and scope "files") take as a call whose effect comes back with a snapshot's files.
import type { CallPlace, Step, Tx } from "../../store/port/index.js";
import type { ToolRegistry } from "../../tools/registry.js";

/**
 * The session's calls whose run changed workspace files (at least one recorded path), where they sit, oldest first:
 * files restored from a snapshot that holds one of them bring its effect back, and files from one that does not take
 * it away. A call recorded as changing no path is `outsideCalls`'; a call with no record at all (run before paths were
 * kept, or in a workspace on another host) is neither, and each kind of move says what it does with it.
 */
export function* fileCalls(tx: Tx, sessionId: string): Step<CallPlace[]> {
  return yield* tx.pathChangingCalls(sessionId);
}

/**
 * The session's calls whose run changed no workspace file: whatever they did lies outside what a snapshot captures
 * (another directory, a path the workspace excludes, an email), so restored files neither bring it back nor take it
 * away, and a move undoes and replays such a call through its tool as a move without files does. A call of a tool
 * registered here as acting only in the workspace (`effects: "workspace"`) did nothing at all: not among them.
 */
export function* outsideCalls(tx: Tx, sessionId: string, tools: ToolRegistry): Step<ReadonlySet<string>> {
  return (yield* pathlessReach(tx, sessionId, tools)).outside;
}

/**
 * The session's calls whose run changed no workspace file, by where their tool says its effects lie: `outside` (see
 * `outsideCalls`), and `idle`, those of a tool acting only in the workspace (`effects: "workspace"`): they did nothing,
 * so a move with files neither runs them again nor undoes them through their tool (any restored files hold them).
 */
export function* pathlessReach(
  tx: Tx,
  sessionId: string,
  tools: ToolRegistry,
): Step<{ outside: ReadonlySet<string>; idle: ReadonlySet<string> }> {
  const outside = new Set<string>();
  const idle = new Set<string>();
  for (const c of yield* tx.pathlessCalls(sessionId)) (c.tool !== null && tools.actsInWorkspaceOnly(c.tool) ? idle : outside).add(c.id);
  return { outside, idle };
}
