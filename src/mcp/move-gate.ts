// The tools of one server's session, in order around its moves: a rollback, undo, redo or switch rewrites the files
// and moves the session, so a tool that reads the files (plan_rollback, diff, checkpoint) waits for a move asked for
// before it, and a move waits for the reads already under way. Each read sees the workspace before a move or after
// it, never a half-rewound tree against the checkpoint the move left. Reads run at once with each other.
import type { SessionHandle } from "../index.js";
import type { ToolName } from "./schemas.js";

/** The tools that move the session and rewrite its files. */
const MOVES: ReadonlySet<ToolName> = new Set(["rollback", "undo", "redo", "switch_branch"]);
/** The tools that read the workspace's files. */
const FILE_READS: ReadonlySet<ToolName> = new Set(["plan_rollback", "diff", "checkpoint"]);

interface Gate {
  /** Settles once the last move asked for has ended. */
  moves: Promise<void>;
  /** The reads under way. */
  reads: Set<Promise<void>>;
}

/** By session handle: a server over HTTP makes an MCP server per request, all over the one handle. */
const gates = new WeakMap<SessionHandle, Gate>();

const ended = (p: Promise<unknown>): Promise<void> =>
  p.then(
    () => undefined,
    () => undefined,
  );

/** Runs tool `name`'s `body` in its place among the session's moves (tools that do neither run at once). */
export function inTurn<T>(session: SessionHandle, name: ToolName, body: () => Promise<T>): Promise<T> {
  if (!MOVES.has(name) && !FILE_READS.has(name)) return body();
  let gate = gates.get(session);
  if (!gate) gates.set(session, (gate = { moves: Promise.resolve(), reads: new Set() }));
  const g = gate;
  if (MOVES.has(name)) {
    const before = Promise.all([g.moves, ...g.reads]);
    const run = before.then(body);
    g.moves = ended(run);
    return run;
  }
  const run = g.moves.then(body);
  const read = ended(run);
  g.reads.add(read);
  void read.then(() => g.reads.delete(read));
  return run;
}

/** Settles once no move of `session` is under way or asked for in this server (a server stopping answers them first). */
export async function movesSettled(session: SessionHandle): Promise<void> {
  const g = gates.get(session);
  if (!g) return;
  for (let last = g.moves; ; last = g.moves) {
    await last;
    if (last === g.moves) return;
  }
}
