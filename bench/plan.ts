// What each mode runs: chat sizes and repeat counts per system, and the other scenarios' sizes.
/**
 * "saver": forkpoint's LangGraph checkpointer (`forkpoint/langgraph`) doing the peer's puts. "sql": forkpoint's schema
 * and statements through raw better-sqlite3, with no engine JavaScript (bench/sql-floor.ts).
 */
export type SqliteSystem = "peer" | "saver" | "forkpoint" | "sql" | "floor";
/** "pg": forkpoint on PostgreSQL (`openForkpoint({ postgres })`); "pgpeer": LangGraph's PostgresSaver (bench/postgres.ts). */
export type PgSystem = "pg" | "pgpeer";
/** "workspace": forkpoint's workspaces beside a shadow git repository (bench/workspace.ts, issue 33). */
export type System = SqliteSystem | PgSystem | "workspace" | "requests";

export interface Plan {
  mode: "quick" | "full";
  chat: { system: SqliteSystem; n: number; runs: number }[];
  history: { n: number; runs: number; reps: number };
  pages: { users: number; total: number; samples: number };
  tools: { n: number; runs: number };
  /** Turns of each kind (without and with a request id, alternating) per run, and runs (issue 31). */
  requests: { n: number; runs: number };
  /** A real LangGraph graph (LangChain messages) on SqliteSaver and on ForkpointSaver: invokes per thread, and runs. */
  graph: { n: number; runs: number }[];
  /** Chat sizes (and runs) for forkpoint with its opt-in `walWorker`, beside its default run at the same size. */
  walWorker: { n: number; runs: number }[];
  peerSkipped: number[]; // chat sizes where the peer is not run (quadratic cost)
  /** Workspace trees: tracked files, ignored files (node_modules), rounds of `changed` edited files, runs. */
  workspace: { files: number; ignored: number; rounds: number; changed: number; runs: number }[];
  /** The PostgreSQL part (one server for the run, a fresh database per job): chat sizes per system, and many writers. */
  postgres: {
    chat: { system: PgSystem; n: number; runs: number }[];
    /** Sizes where only forkpoint runs: PostgresSaver's put rewrites the whole list (about 2 minutes for 5,000 turns). */
    peerSkipped: number[];
    /** `processes` writer processes at once, each running `turns` turns on each of its `sessions` conversations. */
    writers: { processes: number; sessions: number; turns: number; runs: number };
    /** Database size only, at this many turns, with messages of distinct words (util.ts `wordsContent`): one run each. */
    wordsSize: number;
  };
}

export function makePlan(quick: boolean): Plan {
  const sizes = quick
    ? {
        peer: [
          [100, 2],
          [1000, 2],
        ],
        engine: [
          [100, 2],
          [1000, 2],
          [3000, 1],
          [10_000, 1],
        ],
      }
    : {
        peer: [
          [100, 3],
          [1000, 3],
          [3000, 2],
        ],
        engine: [
          [100, 3],
          [1000, 3],
          [3000, 3],
          [10_000, 3],
          [100_000, 1],
        ],
      };
  // PostgreSQL chat: [N, forkpoint runs, PostgresSaver runs], interleaved at each size as the SQLite chats are.
  const pgSizes: [number, number, number][] = quick
    ? [
        [100, 2, 2],
        [1000, 1, 1],
      ]
    : [
        [100, 3, 3],
        [1000, 3, 3],
        [5000, 1, 0],
      ];
  const pgChat = pgSizes.flatMap(([n, pg, peer]) => [
    ...(peer ? [{ system: "pgpeer" as const, n, runs: peer }] : []),
    { system: "pg" as const, n, runs: pg },
  ]);
  const chat: Plan["chat"] = [];
  const all = [...new Set([...sizes.peer, ...sizes.engine].map(([n]) => n!))].sort((a, b) => a - b);
  for (const n of all) {
    const peer = sizes.peer.find(([m]) => m === n);
    const engine = sizes.engine.find(([m]) => m === n);
    // Interleave the systems at each size so machine drift hits them alike.
    if (peer) chat.push({ system: "peer", n, runs: peer[1]! }, { system: "saver", n, runs: peer[1]! });
    if (engine) chat.push({ system: "forkpoint", n, runs: engine[1]! }, { system: "floor", n, runs: engine[1]! });
    // forkpoint's SQL alone: a bound for the peer ratios (its 100,000 turns would add 15 s and tell nothing new).
    if (engine && n <= 10_000) chat.push({ system: "sql", n, runs: engine[1]! });
  }
  return {
    mode: quick ? "quick" : "full",
    chat,
    history: { n: 20_000, runs: quick ? 1 : 5, reps: quick ? 10 : 20 },
    pages: quick ? { users: 1_000, total: 100_000, samples: 200 } : { users: 10_000, total: 1_000_000, samples: 500 },
    tools: { n: 1_000, runs: quick ? 2 : 3 },
    requests: { n: quick ? 2_000 : 5_000, runs: quick ? 3 : 5 },
    walWorker: quick
      ? [{ n: 10_000, runs: 1 }]
      : [
          { n: 10_000, runs: 3 },
          { n: 100_000, runs: 1 },
        ],
    graph: quick
      ? [{ n: 100, runs: 1 }]
      : [
          { n: 100, runs: 2 },
          { n: 500, runs: 1 },
        ],
    workspace: [
      { files: 30_000, ignored: 10_000, rounds: 20, changed: 5, runs: quick ? 1 : 2 },
      ...(quick ? [] : [{ files: 100_000, ignored: 10_000, rounds: 20, changed: 5, runs: 1 }]),
    ],
    peerSkipped: all.filter((n) => !sizes.peer.some(([m]) => m === n)),
    postgres: {
      chat: pgChat,
      peerSkipped: pgSizes.filter(([, , peer]) => !peer).map(([n]) => n),
      writers: { processes: 8, sessions: 25, turns: 20, runs: quick ? 2 : 4 },
      wordsSize: 1000,
    },
  };
}
