// The public API of forkpoint, and nothing else.
export { Forkpoint } from "./sessions/forkpoint.js";
export { openForkpoint } from "./open-forkpoint.js";
export type { ForkpointEvent, ForkpointEvents, ForkpointListener } from "./sessions/forkpoint-events.js";
export type { ForkpointLogger } from "./models/logger.js";
export { SessionHandle } from "./sessions/session-handle.js";
export type { Tracked, TrackOptions } from "./sessions/track.js";
export type { AtomicOptions } from "./sessions/atomic.js";
export type { WithCheckpointsOptions } from "./sessions/with-checkpoints.js";
export type { StateMigration } from "./sessions/core/state-schema.js";
export { branchTree } from "./sessions/branch-tree.js";
export { checkpointTools, type AgentTool } from "./sessions/checkpoint-tools.js";
export type { RecoveryReport } from "./sessions/moves/recovery.js";
export type { VerifyReport } from "./sessions/verify.js";
export type { PruneReport } from "./sessions/prune.js";
export type { RetentionPolicy } from "./sessions/set-retention.js";
export { defineTool, type ToolDefinition, type ToolContext } from "./tools/define-tool.js";
export {
  ForkpointError,
  NotFoundError,
  ValidationError,
  PayloadTooLargeError,
  IntegrityError,
  StateVersionError,
  AtomicRollbackError,
  ConflictError,
  DatabaseError,
  ToolUndoError,
  ToolReplayError,
  ToolTimeoutError,
  AbortedError,
} from "./models/errors.js";
export { DEFAULT_LIMITS, type Limits } from "./models/limits.js";
export type { JsonValue, JsonObject, JsonInput, JsonObjectInput } from "./models/json.js";
export type {
  CheckpointInput,
  CreateSessionInput,
  EditOptions,
  HistoryOptions,
  UpdateSessionInput,
  ListCheckpointsInput,
  ListSessionsInput,
  MoveOptions,
  PlanTarget,
  WriteOptions,
  AppendOptions,
  ToolCallOptions,
  InvokeOptions,
  CheckpointOptions,
  IfAt,
  RecordToolCallInput,
  ResolveToolCallInput,
  AutoCheckpointPolicy,
} from "./models/inputs.js";
export type * from "./models/types.js";
export type {
  SessionExport,
  ExportedBranch,
  ExportedEntry,
  ExportedCompletion,
  ExportedState,
  ExportedCheckpoint,
  ExportedEvent,
  ExportedLangGraph,
  ExportedLgCheckpoint,
  ExportedLgValue,
  ExportedLgWrite,
} from "./models/session-export.js";
export type { LongCallOptions, Progress } from "./models/progress.js";
export type { VerifyOptions } from "./sessions/verify.js";
export type { PruneOptions } from "./sessions/prune.js";
export type { ExportOptions } from "./sessions/export-session.js";
export type { ImportOptions } from "./sessions/import-session.js";
export type { DeleteUserOptions, DeleteUserReport } from "./sessions/delete-user.js";
export type { ListAllSessionsInput } from "./sessions/list-sessions.js";
export type { ListUsersInput, UserInfo } from "./sessions/list-users.js";
export type { VerifyProblem } from "./sessions/maintenance/session-check.js";
export type { StateUpdate } from "./sessions/set-state.js";
export type { ForkpointOptions } from "./open-forkpoint.js";
export type { SessionStateOptions } from "./sessions/core/session-state.js";
