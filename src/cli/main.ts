#!/usr/bin/env node
// The `forkpoint` command: inspect and maintain a database from the shell (sessions, history, branches, checkpoints,
// rollback, export/import, verify, prune).
import { Command, InvalidArgumentError } from "commander";
import { fileURLToPath } from "node:url";
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { relativeTime } from "./output.js";
import { ForkpointError, ValidationError, branchTree, openForkpoint, type BranchTreeNode, type Forkpoint, type SessionExport } from "../index.js";

const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("must be a positive integer");
  return n;
};
const ago = (d: Date) => relativeTime(d);

/** Builds the program; `out` receives each printed line (tests capture it). */
export function buildProgram(out: (line: string) => void = console.log): Command {
  const program = new Command("forkpoint")
    .description("A git-like tree of chat and agent sessions, on SQLite")
    .option("-d, --db <path>", "database file", "./forkpoint.db")
    .option("--json", "print JSON instead of text");

  const withDb = async <T>(fn: (fp: Forkpoint, json: boolean) => Promise<T>): Promise<T> => {
    const { db, json } = program.opts<{ db: string; json?: boolean }>();
    const fp = openForkpoint({ path: db });
    try {
      return await fn(fp, Boolean(json));
    } finally {
      await fp.close();
    }
  };
  /** A status line shows the start of a message, on one line. */
  const oneLine = (text: string) => {
    const flat = text.replace(/\s+/g, " ");
    return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat;
  };
  const print = (json: boolean, value: unknown, text: () => string[]) => {
    if (json) out(JSON.stringify(value, null, 2));
    else for (const line of text()) out(line);
  };

  program.command("sessions").description("list a user's sessions, newest first")
    .requiredOption("-u, --user <userId>", "owner").option("-n, --limit <n>", "how many", positiveInt, 20)
    .action((o: { user: string; limit: number }) => withDb(async (fp, json) => {
      const page = await fp.listSessions({ userId: o.user, limit: o.limit });
      print(json, page, () => page.items.map((s) => `${s.id}  ${s.title ?? "(untitled)"}  updated ${ago(s.updatedAt)}`));
    }));

  program.command("summary").description("a session at a glance: branches, head, last message, checkpoints, tool calls")
    .argument("<sessionId>").requiredOption("-u, --user <userId>", "owner")
    .action((sessionId: string, o: { user: string }) => withDb(async (fp, json) => {
      const sum = await (await fp.getSession(sessionId, { userId: o.user })).summary();
      const t = sum.toolCalls;
      print(json, sum, () => [
        `${sum.id}  ${sum.title ?? "(untitled)"}  updated ${ago(sum.updatedAt)}`,
        `branches     ${sum.branches}; current ${sum.currentBranchId} at position ${sum.position}, ${sum.messages} messages`,
        `last message ${sum.lastMessage ? `${sum.lastMessage.role}: ${oneLine(typeof sum.lastMessage.content === "string" ? sum.lastMessage.content : JSON.stringify(sum.lastMessage.content))}` : "(none)"}`,
        `checkpoints  ${sum.checkpoints}${sum.latestCheckpoint ? `; latest ${sum.latestCheckpoint.id} ${sum.latestCheckpoint.name ?? "(unnamed)"} ${ago(sum.latestCheckpoint.createdAt)}` : ""}`,
        `tool calls   ${t.total} (${t.succeeded} succeeded, ${t.failed} failed, ${t.running} running; ${t.applied} applied)`,
      ]);
    }));

  program.command("history").description("messages of a session's current branch (or --branch)")
    .argument("<sessionId>").requiredOption("-u, --user <userId>", "owner").option("-b, --branch <branchId>", "another branch")
    .action((sessionId: string, o: { user: string; branch?: string }) => withDb(async (fp, json) => {
      const s = await fp.getSession(sessionId, { userId: o.user });
      const messages = await s.history(o.branch ? { branchId: o.branch } : {});
      print(json, messages, () => messages.map((m) => `${String(m.position).padStart(4)}  ${m.role.padEnd(10)} ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`));
    }));

  program.command("branches").description("a session's branches as a tree")
    .argument("<sessionId>").requiredOption("-u, --user <userId>", "owner")
    .action((sessionId: string, o: { user: string }) => withDb(async (fp, json) => {
      const tree = branchTree(await (await fp.getSession(sessionId, { userId: o.user })).branches());
      const lines: string[] = [];
      const walk = (nodes: BranchTreeNode[], indent: string) => {
        for (const n of nodes) {
          lines.push(`${indent}${n.id}  ${n.reason} at ${n.forkPosition}, head ${n.head}${n.current ? "  *current" : ""}`);
          walk(n.children, indent + "  ");
        }
      };
      walk(tree, "");
      print(json, tree, () => lines);
    }));

  program.command("checkpoints").description("a user's checkpoints, newest first")
    .requiredOption("-u, --user <userId>", "owner").option("-s, --session <sessionId>", "one session only")
    .option("--name <name>", "with this name").option("-n, --limit <n>", "how many", positiveInt, 20)
    .action((o: { user: string; session?: string; name?: string; limit: number }) => withDb(async (fp, json) => {
      const page = await fp.listCheckpoints({ userId: o.user, limit: o.limit, ...(o.session ? { sessionId: o.session } : {}), ...(o.name ? { name: o.name } : {}) });
      print(json, page, () => page.items.map((c) => `${c.id}  ${c.name ?? (c.auto ? "(auto)" : "(unnamed)")}  position ${c.position}  ${ago(c.createdAt)}`));
    }));

  program.command("rollback").description("roll a session back to a checkpoint (a new branch; nothing is lost)")
    .argument("<sessionId>").argument("<checkpointId>").requiredOption("-u, --user <userId>", "owner")
    .action((sessionId: string, checkpointId: string, o: { user: string }) => withDb(async (fp, json) => {
      const r = await (await fp.getSession(sessionId, { userId: o.user })).rollback(checkpointId);
      print(json, r, () => [`now on branch ${r.branch.id} at position ${r.branch.forkPosition}`, `undone ${r.undone.length}, skipped ${r.skipped.length}, unknown ${r.unknown.length}`]);
    }));

  program.command("export").description("write a session as one JSON document (to --out, or standard output)")
    .argument("<sessionId>").requiredOption("-u, --user <userId>", "owner").option("-o, --out <file>", "file to write")
    .action((sessionId: string, o: { user: string; out?: string }) => withDb(async (fp) => {
      const text = JSON.stringify(await fp.exportSession(sessionId, { userId: o.user }));
      if (!o.out) return out(text);
      try {
        writeFileSync(o.out, text);
      } catch (cause) {
        throw new ValidationError("out", `cannot write ${o.out}: ${(cause as Error).message}`);
      }
    }));

  program.command("import").description("write an exported session into this database, owned by --user")
    .argument("<file>").requiredOption("-u, --user <userId>", "new owner")
    .action((file: string, o: { user: string }) => withDb(async (fp, json) => {
      let doc: unknown;
      try {
        doc = JSON.parse(readFileSync(file, "utf8"));
      } catch (cause) {
        throw new ValidationError("file", `cannot read a JSON document from ${file}: ${(cause as Error).message}`);
      }
      const s = await fp.importSession(doc as SessionExport, { userId: o.user });
      print(json, { sessionId: s.id, userId: s.userId }, () => [`imported session ${s.id} for ${s.userId}`]);
    }));

  program.command("verify").description("recompute every hash of the database (or one session), like git fsck")
    .option("-s, --session <sessionId>", "one session only")
    .action((o: { session?: string }) => withDb(async (fp, json) => {
      const report = await fp.verify(o.session ? { sessionId: o.session } : {});
      print(json, report, () => [
        report.ok ? `ok: ${report.sessions} session(s) verified` : `${report.problems.length} problem(s) in ${report.sessions} session(s)`,
        ...report.problems.map((p) => `  ${p.kind} ${p.id}: ${p.detail}`),
      ]);
      if (!report.ok) process.exitCode = 1;
    }));

  program.command("prune").description("delete expired checkpoints and unreferenced data, then vacuum")
    .option("-s, --session <sessionId>", "one session's checkpoints and journals only").option("--no-vacuum", "do not rebuild the file")
    .action((o: { session?: string; vacuum: boolean }) => withDb(async (fp, json) => {
      const r = await fp.prune({ ...(o.session ? { sessionId: o.session } : {}), vacuum: o.vacuum });
      print(json, r, () => [
        `deleted ${r.checkpoints} expired checkpoint(s), ${r.snapshots} unreferenced state(s), ${r.moves} finished move journal(s)`,
        `size ${(r.bytesBefore / 1024).toFixed(0)} KiB -> ${(r.bytesAfter / 1024).toFixed(0)} KiB`,
      ]);
    }));

  return program;
}

/** Runs the CLI; errors print one line (typed ones with their code) and exit 1; FORKPOINT_DEBUG=1 adds the stack. */
export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof ForkpointError) console.error(`error ${error.code}: ${error.message}`);
    else console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    if (process.env.FORKPOINT_DEBUG && error instanceof Error) console.error(error.stack);
    process.exitCode = 1;
  }
}

/** Whether this file is the program being run: npm installs the command as a symlink to it, so paths are compared real. */
function isMain(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isMain()) await main();
