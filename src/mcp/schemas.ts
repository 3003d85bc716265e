// The MCP tools' input and output schemas (zod): what a client sees in tools/list and what each result's JSON holds.
import { z } from "zod";

/** A checkpoint as the tools name it: its id, or its name (the newest checkpoint of that name). */
const checkpointRef = (what: string) => z.string().min(1).max(200).describe(`${what}: a checkpoint id (cp_…) or name`);

export const inputs = {
  checkpoint: z.strictObject({ name: z.string().min(1).max(200).optional().describe("a name to find it by later") }),
  list_checkpoints: z.strictObject({
    limit: z.number().int().min(1).max(100).optional().describe("how many (default 20), newest first"),
    cursor: z.string().min(1).max(500).optional().describe("the nextCursor of the previous page"),
  }),
  diff: z.strictObject({
    from: checkpointRef("the older side"),
    to: checkpointRef("the newer side (default: the files on disk now)").optional(),
  }),
  plan_rollback: z.strictObject({
    checkpoint: checkpointRef("where to go back to"),
    scope: z
      .enum(["conversation", "files", "both"])
      .optional()
      .describe(
        'the move planned, as the library\'s plan takes it (default "conversation"): which tool calls it undoes and replays; "both" is the move rollback makes, "files" runs none',
      ),
  }),
  rollback: z.strictObject({
    checkpoint: checkpointRef("where to go back to"),
    force: z
      .boolean()
      .optional()
      .describe("when files changed since the last checkpoint: save them in a checkpoint of their own first, then roll back"),
  }),
  undo: z.strictObject({}),
  redo: z.strictObject({}),
  branches: z.strictObject({}),
  switch_branch: z.strictObject({ branch: z.string().min(1).max(200).describe("a branch id (br_…) from branches") }),
  history: z.strictObject({ limit: z.number().int().min(1).max(100).optional().describe("how many events (default 20), newest first") }),
};

export const checkpointOut = z.object({
  id: z.string(),
  name: z.string().nullable(),
  branchId: z.string(),
  position: z.number().int(),
  createdAt: z.string(),
});

const branchOut = z.object({
  id: z.string(),
  parentId: z.string().nullable(),
  forkCheckpointId: z.string().nullable(),
  forkPosition: z.number().int(),
  name: z.string().nullable(),
  reason: z.string(),
  head: z.number().int(),
  current: z.boolean(),
  createdAt: z.string(),
});

/** Paths in the workspace forkpoint cannot store, left out (never written nor deleted by a rewind), with why. */
const skippedOut = z
  .array(z.object({ path: z.string(), reason: z.string() }))
  .describe("paths left out because forkpoint cannot store them (unreadable, over the size limit, a FIFO, a socket, a link), with why");

/** What a move (rollback, undo, redo, switch_branch) did: the branch it made current, the files, the tool calls. */
const moveShape = {
  branch: branchOut,
  files: z.object({
    written: z.array(z.string()),
    deleted: z.array(z.string()),
    kept: z
      .array(z.string())
      .describe("files changed (by someone else) while the rewind ran: left with their newer content, now uncheckpointed"),
  }),
  savedDrift: z
    .object({ checkpointId: z.string(), files: z.array(z.string()) })
    .nullable()
    .describe("with force: the checkpoint that keeps the files changed since the last checkpoint"),
  tools: z.object({ undone: z.array(z.string()), replayed: z.array(z.string()), skipped: z.array(z.string()) }),
};

export const outputs = {
  checkpoint: z.object({ checkpoint: checkpointOut, skipped: skippedOut }),
  list_checkpoints: z.object({ checkpoints: z.array(checkpointOut), nextCursor: z.string().nullable() }),
  diff: z.object({
    from: z.string(),
    to: z.string().describe('a checkpoint id, or "disk"'),
    added: z.array(z.string()),
    modified: z.array(z.string()),
    deleted: z.array(z.string()),
    patch: z.string(),
    patchTruncated: z.boolean(),
    skipped: skippedOut.describe("with the files on disk: the paths there forkpoint cannot store, left out of the lists"),
  }),
  plan_rollback: z.object({
    checkpoint: checkpointOut,
    restore: z.array(z.string()).describe("files the rollback writes back (changed or deleted since the checkpoint)"),
    remove: z.array(z.string()).describe("files the rollback deletes (new since the checkpoint)"),
    kept: z.array(z.string()).describe("files the rollback leaves as they are: irreversible calls' effects, hand edits its undos put back"),
    uncheckpointed: z.array(z.string()).describe("files changed since the last checkpoint on this branch"),
    lastCheckpointId: z.string().nullable(),
    tools: z.object({
      undo: z.array(z.string()),
      replay: z.array(z.string()),
      irreversible: z.array(z.string()),
      unregistered: z.array(z.string()).describe("calls to undo or replay whose tool this server has not loaded (--tools)"),
    }),
    refusal: z.string().nullable().describe("the code the rollback would be refused with first, if any"),
  }),
  rollback: z.object({ checkpoint: checkpointOut, ...moveShape }),
  undo: z.object(moveShape),
  redo: z.object(moveShape),
  branches: z.object({ branches: z.array(branchOut), currentBranchId: z.string() }),
  switch_branch: z.object(moveShape),
  history: z.object({
    events: z.array(z.object({ kind: z.string(), id: z.string(), branchId: z.string(), at: z.string(), summary: z.string() })),
    more: z.boolean(),
  }),
};

export type ToolName = keyof typeof inputs;
export type ToolInput<T extends ToolName> = z.output<(typeof inputs)[T]>;
export type ToolOutput<T extends ToolName> = z.output<(typeof outputs)[T]>;
export type CheckpointOut = z.output<typeof checkpointOut>;
export type MoveOut = z.output<typeof outputs.undo>;
