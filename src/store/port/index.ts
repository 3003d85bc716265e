// The store port: what the engine needs of a database, with no database's wording in it. Published as
// `forkpoint/store` for authors of stores (`openForkpoint({ store })`); the main entry declares the API only.
export type * from "./calls.js";
export type * from "./checkpoints.js";
export type * from "./entries.js";
export type * from "./langgraph.js";
export type * from "./moves.js";
export type * from "./requests.js";
export type * from "./sessions.js";
export type * from "./workspaces.js";
export type * from "./unit.js";
export type { MoveStack } from "./move-stack.js";
export { runAsync, runSync } from "./unit.js";
export { sameStack } from "./move-stack.js";
export { RequestTakenError } from "./requests.js";
export { messageFromTuple } from "./entries.js";
export { listedSessionFrom } from "./sessions.js";
export { MAX_INDEXED_METADATA, indexedMetadata } from "./checkpoints.js";
