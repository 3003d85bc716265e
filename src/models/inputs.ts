// Runtime checks of what callers pass to the public API, compiled once; types are inferred from them.
import { z } from "zod";
import { ValidationError } from "./errors.js";
import { DEFAULT_LIMITS } from "./limits.js";
import { parseDuration } from "./duration.js";
import { readingInput, type JsonObjectInput } from "./json.js";
import { MALFORMED_TEXT_MESSAGE, NUL_TEXT_MESSAGE, escapeLoneSurrogates, hasNoNul, isBlank, isWellFormed } from "./strings.js";

const MAX = DEFAULT_LIMITS.maxStringField;
/** The issue param that makes `parseInput` throw code `MALFORMED_TEXT` instead of `VALIDATION_ERROR`. */
const MALFORMED = "MALFORMED_TEXT";
/** What a check adds for malformed text, so that `parseInput` reports it with its own code. */
export const malformedIssue = { message: MALFORMED_TEXT_MESSAGE, params: { code: MALFORMED } } as const;
const nulIssue = { message: NUL_TEXT_MESSAGE, params: { code: MALFORMED } } as const;
/** Any string the API takes: well-formed Unicode without NUL (see strings.ts), checked before anything else about it. */
const text = () => z.string().refine(isWellFormed, malformedIssue).refine(hasNoNul, nulIssue);
/** A string schema that takes well-formed text only (what every text field of the API and of an export uses). */
export const wellFormedText = text;
const name = () => text().trim().min(1, "must not be empty").max(MAX, `must be at most ${MAX} characters`);
/**
 * An id the caller's own system chose (a chat UI's message id, a framework's tool call id): taken exactly as given, never
 * trimmed, so that it reads back as that system knows it; not empty nor only white space.
 */
const callerId = (max = MAX) =>
  text()
    .min(1, "must not be empty")
    .max(max, `must be at most ${max} characters`)
    .refine((id) => id.length === 0 || !isBlank(id), "must not be blank (only white space)");
/** JSON payloads are checked in depth by `toJsonText`; here only their outer shape. */
const jsonObject = z.custom<JsonObjectInput>((v) => typeof v === "object" && v !== null && !Array.isArray(v), "must be a JSON object");
const anything = z.custom<unknown>(() => true);
// A custom check rather than z.date(): an invalid Date gets the same message as an unparsable string.
const date = z
  .custom<Date | string | number>((v) => v instanceof Date || typeof v === "string" || typeof v === "number", "must be a date")
  .transform((v, ctx) => {
    const d = v instanceof Date ? v : new Date(v);
    if (Number.isNaN(d.getTime())) {
      ctx.addIssue({ code: "custom", message: "must be a valid date" });
      return z.NEVER;
    }
    return d;
  });
// Any value reaches parseDuration, so NaN, "" and wrong types get its message, not zod's generic one; the declared
// input type stays what the API takes.
/** A duration (ms, or "30s", "15m", "2h", "7d"), as `expiresIn` and retention's `keepFor` take it. */
export const duration = z
  .custom<number | string>(() => true)
  .transform((v, ctx) => {
    try {
      return parseDuration(v);
    } catch (e) {
      ctx.addIssue({ code: "custom", message: (e as Error).message });
      return z.NEVER;
    }
  });

/** A listing's `cursor`: well-formed text here; the listing's decoder checks the rest. */
export const cursor = text();
export const idSchema = name();
/** A directory path: taken exactly as given (a name may begin or end with a space), as long as Linux's PATH_MAX. */
export const directoryPath = text().min(1, "must not be empty").max(4096, "must be at most 4096 characters");
export const userScope = z.strictObject({ userId: name() });
// null is none, as reads give it back (a title or metadata read, written again).
export const createSessionInput = z.strictObject({
  userId: name(),
  title: name().nullable().optional(),
  metadata: jsonObject.nullable().optional(),
});
export const listSessionsInput = z.strictObject({
  userId: name(),
  limit: z.number().int().min(1).max(1000).optional(),
  cursor: cursor.nullable().optional(),
});
/** A value `listCheckpoints({ metadata })` matches: as JSON text, where a NUL is an escape, so only well-formedness applies. */
export const metadataFilterValue = z.union([z.string().refine(isWellFormed, malformedIssue), z.number().finite(), z.boolean(), z.null()], {
  message: "must be a string, a finite number, a boolean or null",
});
export const listCheckpointsInput = z.strictObject({
  userId: name(),
  sessionId: name().optional(),
  name: name().optional(),
  since: date.optional(),
  until: date.optional(),
  auto: z.boolean().optional(),
  /**
   * Equality on top-level metadata keys (all must hold), each value a string, number, boolean or null. zod passes an
   * own `__proto__` key by (neither checked nor kept): `listCheckpoints` checks and keeps it with `metadataFilterValue`.
   */
  // Keys match exactly as stored: not trimmed (" k" and "k" are two keys); one holding a NUL is refused (not indexed).
  metadata: z.record(text().max(256, "must be at most 256 characters"), metadataFilterValue).optional(),
  limit: z.number().int().min(1).max(1000).optional(),
  cursor: cursor.nullable().optional(),
});
export const messageInput = z.strictObject({
  role: name(),
  content: anything,
  clientId: callerId().nullable().optional(),
  metadata: jsonObject.nullable().optional(),
});
export const checkpointInput = z.strictObject({
  name: name().nullable().optional(),
  metadata: jsonObject.nullable().optional(),
  expiresIn: duration.optional(),
});
/** The most messages one history page returns. */
export const MAX_HISTORY_PAGE = 1000;
const positiveInt = (max: number) =>
  z
    .number("must be a positive integer")
    .int("must be a positive integer")
    .min(1, "must be a positive integer")
    .max(max, `must be at most ${max}`);
export const historyInput = z.strictObject({
  branchId: name().optional(),
  limit: positiveInt(MAX_HISTORY_PAGE).optional(),
  before: positiveInt(Number.MAX_SAFE_INTEGER).optional(),
  withVersions: z.boolean().optional(),
});
/** An edit's new message: as `messageInput`, but the role may be left out (the original's is kept). */
export const editMessageInput = messageInput.extend({ role: name().optional() });
/** A regenerated answer: the role is the original's (an assistant's). */
export const regenerateInput = messageInput.omit({ role: true });
export const updateSessionInput = z.strictObject({ title: name().nullable().optional(), metadata: jsonObject.nullable().optional() });
export const branchName = name().nullable();
/** The most characters a `requestId` has. */
export const MAX_REQUEST_ID = 200;
/**
 * A write's `requestId`: text of 1 to 200 characters, not all white space (a blank id is an unset header or field, not
 * a request's name), taken exactly as given (never trimmed).
 */
export const requestId = callerId(MAX_REQUEST_ID);
/** A write's precondition: the session's current branch (and its head position) as the caller last saw them. */
export const ifAt = z.strictObject({
  branchId: name(),
  head: z
    .number("must be a non-negative integer")
    .int("must be a non-negative integer")
    .min(0, "must be a non-negative integer")
    .optional(),
});
/** What every write and move takes besides its own options: applied once per request id, and only where the caller saw the session. */
const writeFields = { requestId: requestId.optional(), ifAt: ifAt.optional() };
/** A move's own options (what `atomic` passes to its rollback). */
export const baseMoveOptions = z.strictObject({
  onUndoError: z.enum(["stop", "continue"]).optional(),
  refuseIrreversible: z.boolean().optional(),
  scope: z.enum(["conversation", "files", "both"]).optional(),
  /** Calls to undo or replay whose tool is not registered here: refuse the move (default) or leave them as they are. */
  unregistered: z.enum(["refuse", "leave"]).optional(),
  /**
   * With a workspace: files changed outside forkpoint that the move overwrites (any, with scope "files" or "both"; those
   * its undos and replays write, with "conversation") are saved in a checkpoint, then overwritten.
   */
  force: z.boolean().optional(),
});
/** `rollback`, `switchBranch`, `undo`, `redo` options: the move's own, a `requestId` and an `ifAt`. */
export const moveOptions = baseMoveOptions.extend(writeFields);
/** The last argument of the writes that take no options object of their own (`setState`, `invoke`, `update`, ...). */
export const writeOptions = z.strictObject(writeFields);
/** `append` and `turn`'s last argument: a write's, and `after` (the message the new ones follow, on its own lineage). */
export const appendOptions = writeOptions.extend({ after: name().optional() });
/** `invoke` and `recordToolCall`'s last argument: a write's, and `after` (the message the call follows, on its own lineage). */
export const toolCallOptions = writeOptions.extend({ after: name().optional() });
/**
 * `invoke`'s last argument: a tool call's, and `callId` (the framework's id of the call, as `recordToolCall` takes it:
 * a message naming it as caused, as a LangGraph input does, forks before it when edited).
 */
export const invokeOptions = toolCallOptions.extend({ callId: callerId().optional() });
/** `checkpoint()`'s options: the checkpoint's fields, a `requestId` and an `ifAt`. */
export const checkpointOptions = checkpointInput.extend(writeFields);
/** `edit` / `regenerate` options: the move's, plus a checkpoint written with the new message. */
export const editOptions = moveOptions.extend({ checkpoint: checkpointInput.optional() });
export const diffFilesOptions = z.strictObject({ patch: z.boolean().optional(), maxPatchChars: z.number().int().min(0).optional() });
export const attachWorkspaceInput = z.strictObject({
  exclude: z.array(name()).max(1000).optional(),
  /** Whether the directory's own .gitignore files are honoured (default true). */
  gitignore: z.boolean().optional(),
});
export const recordToolCallInput = z
  .strictObject({
    tool: name(),
    args: anything,
    result: anything.optional(),
    // null is none, as toolTrack() gives them back (a call read, recorded again).
    error: z
      .union([text(), z.strictObject({ message: text(), name: text().optional() })])
      .nullable()
      .optional()
      .transform((e) => e ?? undefined),
    callId: callerId()
      .nullable()
      .optional()
      .transform((id) => id ?? undefined),
  })
  // A call either returned or failed: both would drop one of them silently. A failed call's result may be given as
  // null, as toolTrack() reports one.
  .refine((c) => c.result === undefined || c.result === null || c.error === undefined, {
    message: "has both a result and an error: give one (a failed call's result is null)",
    path: ["error"],
  });
/** What became of a call a crash left `running` (`resolveToolCall`): it succeeded, with its result, or it failed. */
export const resolveToolCallInput = z.discriminatedUnion(
  "status",
  [
    z.strictObject({ status: z.literal("succeeded"), result: anything }),
    z.strictObject({
      status: z.literal("failed"),
      error: z.union([text(), z.strictObject({ message: text(), name: text().optional() })], {
        error: "must be a message (a string) or { message, name? }",
      }),
    }),
  ],
  { error: 'must be { status: "succeeded", result } or { status: "failed", error }' },
);
export const planInput = z.union(
  [z.strictObject({ checkpointId: name() }), z.strictObject({ branchId: name() }), z.strictObject({ messageId: name() })],
  { error: "must be one of { checkpointId }, { branchId } or { messageId }" },
);
/** A plan's scope: what the planned move would move, as a move's `scope` option says it (named and checked alike). */
const planScope = baseMoveOptions.pick({ scope: true });

/**
 * `plan`'s argument: its target (one of `planInput`'s) and the scope of the move it plans ("conversation" when left
 * out), each refused by a `ValidationError` as the move would refuse it (`target`, then `scope`).
 */
export function parsePlanTarget(value: unknown): { target: z.output<typeof planInput>; scope: "conversation" | "files" | "both" } {
  // Read as the caller wrote it: a getter or proxy trap that throws is a ValidationError, as in the parse.
  const split = readingInput(() => {
    if (value === null || typeof value !== "object" || Array.isArray(value) || !("scope" in value)) return undefined;
    const { scope, ...target } = value as Record<string, unknown>;
    return { scope, target };
  }, "target");
  if (split === undefined) return { target: parseOptions(planInput, value, "target"), scope: "conversation" };
  const { scope, target } = split;
  const parsed = parseOptions(planInput, target, "target");
  return { target: parsed, scope: parseOptions(planScope, { scope }, "options").scope ?? "conversation" };
}
/** `new ForkpointSaver(fp, options)`: a misspelt key would put a run's threads under the default user, so it is refused. */
export const langGraphSaverOptions = z.strictObject({
  userId: name().optional(),
  messagesChannel: text().min(1, "must not be empty").optional(),
  serde: anything.optional(),
});
export const autoCheckpointPolicy = z.strictObject({
  everyMessages: z.number().int().min(1).optional(),
  afterToolCalls: z.boolean().optional(),
});

export type CreateSessionInput = z.input<typeof createSessionInput>;
export type ListSessionsInput = z.input<typeof listSessionsInput>;
export type ListCheckpointsInput = z.input<typeof listCheckpointsInput>;
export type CheckpointInput = z.input<typeof checkpointInput>;
export type MoveOptions = z.input<typeof moveOptions>;
export type WriteOptions = z.input<typeof writeOptions>;
export type AppendOptions = z.input<typeof appendOptions>;
export type ToolCallOptions = z.input<typeof toolCallOptions>;
export type InvokeOptions = z.input<typeof invokeOptions>;
export type CheckpointOptions = z.input<typeof checkpointOptions>;
export type IfAt = z.input<typeof ifAt>;
export type EditOptions = z.input<typeof editOptions>;
export type HistoryOptions = z.input<typeof historyInput>;
export type UpdateSessionInput = z.input<typeof updateSessionInput>;
export type RecordToolCallInput = z.input<typeof recordToolCallInput>;
/** What `plan` takes: the move's target, and its scope (see `parsePlanTarget`). */
export type PlanTarget = z.input<typeof planInput> & { scope?: z.input<typeof planScope>["scope"] };
export type ResolveToolCallInput = z.input<typeof resolveToolCallInput>;
export type AutoCheckpointPolicy = z.input<typeof autoCheckpointPolicy>;

/**
 * Parses an object of named options or fields (`{ limit, before }`, `{ userId, title }`): a `ValidationError`'s field
 * is the path inside it as the caller wrote it (`limit`, `checkpoint.name`, `metadata.x`), with no method or
 * parameter name in front; `param` names the whole argument when it is itself wrong (missing, not an object).
 * This and `parseInput` are the one naming rule of `field` (docs/validation.md).
 */
export function parseOptions<S extends z.ZodType>(schema: S, value: unknown, param: string): z.output<S> {
  return parseInput(schema, value, param, true);
}

/**
 * Parses a value argument (an id, a message, a document, tool args) with `schema`, or throws a `ValidationError`
 * naming the first offending field: the parameter's name `where`, then the path inside it (`message.content.x`).
 * With `bare`, the path inside is the field by itself (see `parseOptions`).
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: string, bare = false): z.output<S> {
  const parsed = readingInput(() => schema.safeParse(value), where);
  if (parsed.success) return parsed.data;
  // Malformed text is reported as such even from inside a union (whose own issue would only say "none matched").
  const malformed = findMalformed(parsed.error.issues, []);
  if (malformed) throw new ValidationError(pathOf(where, malformed.path, bare), malformed.message, MALFORMED);
  const issue = parsed.error.issues[0];
  const path = issue ? pathOf(where, issue.path, bare) : where;
  let message = issue?.message ?? "is invalid";
  if (issue?.code === "unrecognized_keys") message = `unknown option(s): ${issue.keys.map(escapeLoneSurrogates).join(", ")}`;
  if (issue?.code === "invalid_type" && valueAt(value, issue.path) === undefined) message = "is required";
  throw new ValidationError(path, message);
}

function pathOf(where: string, path: readonly PropertyKey[], bare: boolean): string {
  if (path.length === 0) return where;
  const keys = path.map((key) => escapeLoneSurrogates(String(key))).join(".");
  return bare ? keys : `${where}.${keys}`;
}

/** The first malformed-text issue among `issues` and the branches of their unions, with its full path. */
function findMalformed(
  issues: readonly z.core.$ZodIssue[],
  prefix: readonly PropertyKey[],
): { path: PropertyKey[]; message: string } | undefined {
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === "custom" && issue.params?.code === MALFORMED) return { path, message: issue.message };
    // A record's key: its own checks' issues, at the key's path.
    if (issue.code === "invalid_key") {
      const found = findMalformed(issue.issues, path);
      if (found) return found;
    }
    if (issue.code === "invalid_union") {
      for (const branch of issue.errors) {
        const found = findMalformed(branch, path);
        if (found) return found;
      }
    }
  }
  return undefined;
}

/** The part of `value` at `path` (undefined where the path leads nowhere). */
function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let v = value;
  for (const key of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}
