// forkpoint/openai-agents: OpenAI Agents JS's session memory and function tools on a forkpoint session.
export { ForkpointSession } from "./forkpoint-session.js";
export { agentToolDefinitions, undoableAgentTools, type AgentToolUndo, type UndoableAgentToolsOptions } from "./undoable-agent-tools.js";
