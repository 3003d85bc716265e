// The mark ForkpointSaver keeps on a task's resume values at a LangGraph checkpoint, which a rollback weighs too.

/**
 * The pending write channel of the mark (`src/langgraph/resumed-on.ts` writes it): the branch of the root graph's
 * session the resume values were stored on, and its newest checkpoint then. Never served as a write of its own.
 */
export const RESUMED_ON = "__forkpoint_resumed_on__";

export interface ResumeMark {
  branchId: string;
  /** The session's newest checkpoint when they were stored: absent on marks kept before it was, or with none. */
  after?: string;
  /**
   * That checkpoint's seq, kept so a move still orders the values once it is gone (deleted, or pruned once expired):
   * absent on marks kept before it was; left out of exports, and an import keeps the new seq (`mark-seq.ts`).
   */
  seq?: number;
}

/** A mark's value as stored (marks kept before `after` was are the branch id alone). */
export function parseResumeMark(value: Buffer): ResumeMark {
  const mark = JSON.parse(value.toString("utf8")) as string | ResumeMark;
  return typeof mark === "string" ? { branchId: mark } : mark;
}

/** A mark's value to store. */
export function resumeMarkValue(mark: ResumeMark): Buffer {
  return Buffer.from(JSON.stringify(mark));
}
