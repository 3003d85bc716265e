// What the moving commands (rollback, switch, edit, undo, redo) share: their options, the tools check, and how results print.
import type { Command } from "commander";
import type { MoveOptions, MovePlan, MoveResult, PlanTarget, SessionHandle, ToolInvocation } from "../index.js";
import { ConflictError, type ToolMoveError } from "../models/errors.js";
import { CliError, type Cli } from "./cli.js";
import { escapeText, inline, type Output } from "./output.js";

export interface MoveFlags {
  continueOnError?: boolean;
  refuseIrreversible?: boolean;
  leaveUnregistered?: boolean;
  scope?: "conversation" | "files" | "both";
  force?: boolean;
}

export const withMoveOptions = (command: Command) =>
  command
    .option("--continue-on-error", "keep going when an undo or replay throws, and report every failure")
    .option("--refuse-irreversible", "refuse the move if it passes tool calls that cannot be undone")
    .option("--leave-unregistered", "move the conversation anyway, leaving calls whose tools are not loaded as they are")
    .option("--scope <scope>", "conversation, files or both (with an attached workspace)")
    .option("--force", "with --scope files|both: save files changed outside forkpoint in a checkpoint, then overwrite them");

export function moveOptions(cli: Cli, o: MoveFlags): MoveOptions {
  checkScope(cli, o.scope);
  return {
    ...(o.continueOnError ? { onUndoError: "continue" as const } : {}),
    ...(o.refuseIrreversible ? { refuseIrreversible: true } : {}),
    ...(o.leaveUnregistered ? { unregistered: "leave" as const } : {}),
    ...(o.scope ? { scope: o.scope } : {}),
    ...(o.force ? { force: true } : {}),
  };
}

/** `--scope`: one of the move scopes, or a usage error. */
export function checkScope(cli: Cli, scope: string | undefined): void {
  if (scope !== undefined && !["conversation", "files", "both"].includes(scope))
    cli.usage(`--scope must be conversation, files or both, not ${JSON.stringify(scope)}`);
}

const calls = (list: readonly ToolInvocation[]) => list.map((t) => `${t.tool} ${t.id}`).join(", "); // escaped with the whole message

function toolsRefusal(cli: Cli, verb: string, unregistered: readonly ToolInvocation[]): CliError {
  return refusalText(cli, verb, unregistered.length, [...new Set(unregistered.map((t) => t.tool))], calls(unregistered));
}

/** The CLI's refusal of a move whose calls' tools it has not loaded: what to pass to this command, not to the API. */
function refusalText(cli: Cli, verb: string, count: number, tools: readonly string[], listed: string, cause?: unknown): CliError {
  const loaded = cli.options.tools;
  return new CliError(
    `this ${verb} must undo or replay ${count} reversible tool call(s) (${listed}) whose tool(s) ` +
      (loaded ? `${tools.join(", ")} --tools ${loaded} does not define with an undo` : `${tools.join(", ")} are not loaded`) +
      `: pass --tools ./my-tools.js (a module exporting their defineTool definitions), or --leave-unregistered to leave those calls as they are`,
    { code: "TOOL_NOT_REGISTERED", ...(cause !== undefined ? { cause } : {}) },
  );
}

/** The engine's refusal of a move for want of tools (src/sessions/moves/refusals.ts): its count, tools and calls. */
const ENGINE_REFUSAL =
  /^the move must undo or replay (\d+) call\(s\) of tool\(s\) not registered here with an undo: (.*) \((.*)\); register them in openForkpoint/s;

/** The tool names of the engine's refusal, JSON-quoted and comma-separated there; null when they do not read so. */
function quotedNames(text: string): string[] | null {
  try {
    const names: unknown = JSON.parse(`[${text}]`);
    return Array.isArray(names) && names.every((n) => typeof n === "string") ? names : null;
  } catch {
    return null;
  }
}

/**
 * Runs a move after checking its plan: a move that must undo or replay calls whose tools this command has not loaded
 * is refused here with a message naming --tools (the engine refuses it too, as TOOL_NOT_REGISTERED).
 */
export async function guardedMove<R>(
  cli: Cli,
  s: SessionHandle,
  verb: string,
  target: PlanTarget,
  flags: MoveFlags,
  move: () => Promise<R>,
): Promise<R> {
  if (!flags.leaveUnregistered) {
    const plan = await s.plan(target);
    if (plan.unregistered.length > 0) throw toolsRefusal(cli, verb, plan.unregistered);
  }
  return withToolsHint(cli, verb, move);
}

/**
 * Runs a move; the engine's refusal for want of tools (a move planned nowhere else: undo, redo) says what to pass to
 * the command, as the planned moves' refusal does, not the API's options.
 */
export async function withToolsHint<R>(cli: Cli, verb: string, move: () => Promise<R>): Promise<R> {
  try {
    return await move();
  } catch (error) {
    if (!(error instanceof ConflictError) || error.code !== "TOOL_NOT_REGISTERED") throw error;
    const parts = ENGINE_REFUSAL.exec(error.message);
    const tools = parts ? quotedNames(parts[2]!) : null;
    if (parts && tools) throw refusalText(cli, verb, Number(parts[1]), tools, parts[3]!, error);
    throw new CliError(`${error.message} (the CLI loads tools with --tools ./my-tools.js)`, { cause: error, code: error.code });
  }
}

const toolLine = (t: ToolInvocation) => `${inline(t.tool)} ${escapeText(t.id)} ${inline(t.args, 60)}`;

/**
 * The tool calls a move (or a plan) undid, replayed, skipped, left or failed, one line each; and, for a move, what it
 * did to the files (a plan's lines say what it would do, in their own words).
 */
function toolLines(out: Output, r: Omit<MoveResult, "branch">, planned: boolean): string[] {
  const group = (label: string, list: readonly ToolInvocation[]) =>
    list.length === 0 ? [] : [`${label.padEnd(14)}${list.length}`, ...list.map((t) => `  ${toolLine(t)}`)];
  return [
    ...group(planned ? "would undo" : "undone", r.undone),
    ...group(planned ? "would replay" : "replayed", r.replayed),
    // Skipped calls applied here stay applied; those that are not (a clone's or an import's, which never ran in this
    // database, or an irreversible call not applied) are left unapplied: not replayed, whatever their tool can undo.
    ...group(
      "irreversible",
      r.skipped.filter((t) => t.applied),
    ).map((l, i) => (i === 0 ? out.c.yellow(l) : l)),
    ...group(
      "not replayed",
      r.skipped.filter((t) => !t.applied),
    ).map((l, i) => (i === 0 ? out.c.yellow(l) : l)),
    ...group("unregistered", r.unregistered).map((l, i) => (i === 0 ? out.c.yellow(l) : l)),
    ...group("unknown", r.unknown).map((l, i) => (i === 0 ? out.c.yellow(l) : l)),
    ...(r.failed.length === 0
      ? []
      : [
          out.c.red(`failed        ${r.failed.length}`),
          ...r.failed.map((f) => `  ${f.step} ${toolLine(f.invocation)}: ${inline(f.error)}`),
        ]),
    ...(r.files && !planned ? [`files         ${r.files.written.length} written, ${r.files.deleted.length} deleted`] : []),
    ...(r.files?.kept && !planned ? [out.c.yellow(`kept as is    ${r.files.kept.length}: ${shownKept(r.files.kept)}`)] : []),
    ...(r.savedDrift ? [`saved drift   ${r.savedDrift.files.length} file(s) in checkpoint ${escapeText(r.savedDrift.checkpointId)}`] : []),
  ];
}

/**
 * What a move stopped by a failing undo or replay (`UNDO_FAILED`, `REPLAY_FAILED`: the `stop` policy) had done: the
 * calls it undid or replayed before it stopped (their effects are gone, or back), and the one that failed. The
 * session did not move; the same command again continues from there.
 */
export function stoppedMoveLines(out: Output, error: ToolMoveError): string[] {
  const done = {
    undone: error.undone as ToolInvocation[],
    replayed: error.replayed as ToolInvocation[],
    skipped: [],
    unregistered: [],
    unknown: [],
    failed: error.failed as MoveResult["failed"],
  };
  return [
    out.c.red(
      `stopped: ${error.failed.length > 0 ? "a tool call's handler failed" : "the move failed"}; the session did not move (run the command again to continue)`,
    ),
    ...toolLines(out, done, false),
  ];
}

/** A move's result; `from`, the branch current before it, tells a move that stayed where it was (nothing written). */
export function moveResultLines(out: Output, r: MoveResult, from?: string): string[] {
  const stayed = r.branch.id === from && r.undone.length + r.replayed.length === 0;
  // A files-only move stays on the branch, yet writes and deletes files: that is a move.
  const nothing = (r.files?.written.length ?? 0) + (r.files?.deleted.length ?? 0) === 0;
  return [
    stayed && nothing
      ? `already there: still on branch ${escapeText(r.branch.id)} at position ${r.branch.head}; nothing moved, no branch was made`
      : stayed
        ? `still on branch ${escapeText(r.branch.id)} at position ${r.branch.head} (no branch was made)`
        : `now on branch ${escapeText(r.branch.id)} at position ${r.branch.head}`,
    ...toolLines(out, r, false),
  ];
}

/**
 * A plan's lines; `current`, the session's current branch, tells a move that would stay where it is. Calls whose tools
 * are not loaded refuse the move (TOOL_NOT_REGISTERED) unless it leaves them (`leaveUnregistered`): the plan says so.
 */
export function planLines(out: Output, plan: MovePlan, current?: string, leaveUnregistered = false): string[] {
  const b = plan.branch;
  const counts = { message: 0, tool: 0, state: 0 };
  for (const e of plan.leftBehind) counts[e.kind]++;
  const stays = b.id !== null && b.id === current;
  // A files-only move stays on the branch, yet writes and deletes files: that is a move.
  const filesMove = (plan.files?.written.length ?? 0) + (plan.files?.deleted.length ?? 0) > 0;
  const nothing = plan.undone.length + plan.replayed.length + plan.leftBehind.length === 0 && !filesMove;
  return [
    stays && nothing
      ? `already there: branch ${escapeText(b.id!)} at position ${b.position}; nothing would move, no branch is made`
      : stays
        ? `would stay on branch ${escapeText(b.id!)} at position ${b.position} (no branch is made)`
        : b.id
          ? `would switch to branch ${escapeText(b.id)} at position ${b.position}`
          : `would create a branch from ${escapeText(String(b.parentId))} at position ${b.forkPosition}`,
    `left behind   ${plan.leftBehind.length} entries (${counts.message} messages, ${counts.tool} tool calls, ${counts.state} state changes)`,
    ...toolLines(out, plan, true),
    ...(plan.unregistered.length > 0 && !leaveUnregistered
      ? [
          out.c.red(
            "refused       TOOL_NOT_REGISTERED: the move must undo or replay those calls; pass --tools ./my-tools.js (their " +
              "defineTool definitions), or --leave-unregistered to leave them as they are",
          ),
        ]
      : []),
    ...(plan.files ? [`files         ${plan.files.written.length} to write, ${plan.files.deleted.length} to delete`] : []),
    ...(plan.files?.kept ? [out.c.yellow(`kept as is    ${plan.files.kept.length}: ${shownKept(plan.files.kept)}`)] : []),
    ...(plan.files?.mayKeep ? [out.c.yellow(`may keep      ${plan.files.mayKeep.length}: ${shownKept(plan.files.mayKeep)}`)] : []),
    // What the move refuses: drift unless --force (which saves it first), a blocked path whatever --force says.
    ...(plan.drift?.length ? [out.c.yellow(`drift         ${plan.drift.length}: ${shownKept(plan.drift)} (refused without --force)`)] : []),
    ...(plan.blocked ? [out.c.red(`blocked       ${escapeText(plan.blocked)}`)] : []),
    // Where it may stop partway, forced or not: what a recorded call's undo puts back is told only as it runs.
    ...(plan.mayStop ? [out.c.yellow(`may stop      ${escapeText(plan.mayStop)}`)] : []),
  ];
}

/**
 * A note for a move (or plan) of the conversation alone on a session with an attached workspace: its files stay as they
 * are (an MCP session's rewind is `--scope both`). Nothing when the move had a files scope or the session has no workspace.
 */
export async function workspaceLeftLines(out: Output, s: SessionHandle, r: { files?: unknown }): Promise<string[]> {
  if (r.files) return [];
  const { attachedWorkspace } = await import("../mcp/workspace-session.js");
  const ws = await attachedWorkspace(s);
  return ws ? [out.c.yellow(`workspace     ${escapeText(ws.dir)} left as it is: --scope both moves its files with the conversation`)] : [];
}

/** The first five paths a move left as they are (a later move refuses to overwrite them unsaved), and how many more. */
const shownKept = (paths: readonly string[]) =>
  paths.slice(0, 5).map(escapeText).join(", ") + (paths.length > 5 ? `, and ${paths.length - 5} more` : "");
