// One measured job in its own process, so peak RSS is per system and per N; prints one JSON line.

export interface Job {
  kind:
    | "chat"
    | "history"
    | "pages"
    | "tools"
    | "requests"
    | "graph"
    | "baseline"
    | "pgchat"
    | "pgprepare"
    | "pgwriter"
    | "pgverify"
    | "workspace";
  system: "peer" | "saver" | "forkpoint" | "sql" | "floor" | "pg" | "pgpeer" | "workspace";
  n?: number; // chat turns, history messages, tool invocations
  /** pgchat: the message text (bench/util.ts `contentOf`). */
  content?: "filler" | "words";
  users?: number;
  total?: number;
  samples?: number;
  reps?: number; // repetitions of each single operation inside the run
  walWorker?: boolean; // forkpoint's opt-in WAL checkpoint worker
  // PostgreSQL jobs (pg-chat.ts, pg-writers.ts): the job's own database, and the writers' shape.
  url?: string;
  writer?: number;
  sessions?: number;
  turns?: number;
  barrier?: boolean; // say "ready" on stdout and wait for a line on stdin before the timed part
  conversations?: { id: string; userId: string }[];
  /** The workspace bench (workspace.ts): the generated tree and its rounds of edits. */
  workspace?: { files: number; ignored: number; rounds: number; changed: number; seed: number };
}

async function run(job: Job): Promise<unknown> {
  const reps = job.reps ?? 5;
  const key = `${job.kind}:${job.system}`;
  if (job.kind === "workspace") return (await import("./workspace.js")).runWorkspaceBench(job.workspace!);
  if (job.kind === "graph") return (await import("./graph-langgraph.js")).runGraphChat(job.n!, job.system as "peer" | "saver");
  if (job.system === "pg" || job.system === "pgpeer") return runPg(job, job.system, reps);
  // Load only the system under test, so another system's modules don't count in this process's RSS.
  const { runPeerChat } = job.system === "peer" ? await import("./peer-langgraph.js") : ({} as never);
  const { runForkpointSaverChat } = job.system === "saver" ? await import("./saver-forkpoint.js") : ({} as never);
  const { runSqlFloorChat } = job.system === "sql" ? await import("./sql-floor.js") : ({} as never);
  const { runFloorChat, runFloorHistory, runFloorPages, runFloorRequests } =
    job.system === "floor" ? await import("./floor.js") : ({} as never);
  const { runForkpointChat, runForkpointHistory, runForkpointPages, runForkpointTools, runForkpointRequests } =
    job.system === "forkpoint" ? await import("./forkpoint.js") : ({} as never);
  if (job.kind === "baseline") return {};
  switch (key) {
    case "chat:peer":
      return runPeerChat(job.n!, reps);
    case "chat:saver":
      return runForkpointSaverChat(job.n!, reps);
    case "chat:floor":
      return runFloorChat(job.n!, reps);
    case "chat:sql":
      return runSqlFloorChat(job.n!);
    case "chat:forkpoint":
      return runForkpointChat(job.n!, reps, job.walWorker ?? false);
    case "history:floor":
      return runFloorHistory(job.n!, reps);
    case "history:forkpoint":
      return runForkpointHistory(job.n!, reps);
    case "pages:floor":
      return runFloorPages(job.users!, job.total!, job.samples!);
    case "pages:forkpoint":
      return runForkpointPages(job.users!, job.total!, job.samples!);
    case "tools:forkpoint":
      return runForkpointTools(job.n!);
    case "requests:forkpoint":
      return runForkpointRequests(job.n!);
    case "requests:floor":
      return runFloorRequests(job.n!);
    default:
      throw new Error(`no such job: ${key}`);
  }
}

/** The PostgreSQL jobs: only the system under test and pg are loaded (pg-systems.ts imports the one it opens). */
async function runPg(job: Job, system: "pg" | "pgpeer", reps: number): Promise<unknown> {
  const url = job.url!;
  switch (job.kind) {
    case "baseline":
      return {};
    case "pgchat":
      return (await import("./pg-chat.js")).runPgChat(system, url, job.n!, reps, job.content);
    case "pgprepare":
      return (await import("./pg-writers.js")).runPgPrepare(system, url);
    case "pgwriter":
      return (await import("./pg-writers.js")).runPgWriter(system, url, job.writer!, job.sessions!, job.turns!, job.barrier ?? false);
    case "pgverify":
      return (await import("./pg-writers.js")).runPgVerify(system, url, job.conversations!, job.turns!);
    default:
      throw new Error(`no such job: ${job.kind}:${system}`);
  }
}

const job = JSON.parse(process.argv[2] ?? "{}") as Job;
try {
  const result = await run(job);
  const maxRssMB = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(JSON.stringify({ ok: true, result, maxRssMB }) + "\n");
} catch (e) {
  process.stdout.write(JSON.stringify({ ok: false, error: String((e as Error)?.stack ?? e) }) + "\n");
  process.exitCode = 1;
}
