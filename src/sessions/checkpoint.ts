// checkpoint: a named, immutable point at the current branch's head (with the workspace's files when one is attached).
import { checkpointOptions, parseOptions, type CheckpointOptions } from "../models/inputs.js";
import type { Checkpoint } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { checkpointAfter } from "./writes/checkpoint-after.js";

/**
 * `checkpoint()`: with `requestId`, applied once per session; with `ifAt`, only while the session is there. With
 * `retain: false` the session's retention policy is not weighed (a clone's mark must not push out what it copies);
 * with `hold` (ms) the checkpoint is held against retention and prune from the transaction that writes it.
 */
export async function createCheckpoint(
  ctx: EngineContext,
  ref: SessionRef,
  input: CheckpointOptions = {},
  how: { retain?: boolean; hold?: number } = {},
): Promise<Checkpoint> {
  const { requestId, ifAt, ...fields } = parseOptions(checkpointOptions, input, "checkpoint");
  const request = requestId === undefined ? {} : { request: { id: requestId, verb: "checkpoint" } };
  return (await checkpointAfter(ctx, ref, [], fields, { ...how, ...request, ifAt })).checkpoint;
}
