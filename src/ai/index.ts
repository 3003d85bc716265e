// forkpoint/ai: the Vercel AI SDK's tools and messages on a forkpoint session.
export {
  undoableTools,
  aiToolDefinitions,
  type AiReplayCall,
  type AiToolsContext,
  type AiToolUndo,
  type AiToolUndos,
  type UndoableToolsOptions,
} from "./undoable-tools.js";
export { saveChat, loadChat, saveModelMessages, loadModelMessages } from "./chat.js";
export type { SaveResult } from "./sync-history.js";
export type { SaveChatOptions } from "./chat.js";
export { aiCheckpointTools } from "./checkpoint-tools.js";
