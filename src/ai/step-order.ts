// The model's order among one step's tool calls around its own rollback: the AI SDK starts them all at once.
import type { ToolExecutionOptions } from "ai";

/** One step's calls: those started since its last move (of the loop's own model), and that move's end. */
interface Step {
  started: Promise<unknown>[];
  lastMove: Promise<unknown> | null;
}

/**
 * Steps by the messages array the AI SDK hands every call of a step (the same object for all of them, another for
 * each step and loop); weakly held, so a finished loop takes its steps with it.
 */
const steps = new WeakMap<object, Step>();

const stepOf = (options: Partial<ToolExecutionOptions<unknown>> | undefined): Step | undefined => {
  const messages = options?.messages;
  if (!Array.isArray(messages)) return undefined;
  let step = steps.get(messages);
  if (!step) steps.set(messages, (step = { started: [], lastMove: null }));
  return step;
};

const settled = (p: Promise<unknown>): Promise<void> =>
  p.then(
    () => undefined,
    () => undefined,
  );

/**
 * Runs a journaled call of the step `options` tells after the move its model listed before it in the step, if any (the
 * AI SDK starts a step's calls in the order the model listed them): it then reads the branch that move left it on.
 */
export function callInStep<T>(options: Partial<ToolExecutionOptions<unknown>> | undefined, run: () => Promise<T>): Promise<T> {
  const step = stepOf(options);
  if (!step) return run();
  const move = step.lastMove;
  const running = move ? settled(move).then(run) : run();
  step.started.push(running);
  return running;
}

/**
 * Runs the loop's own move (a rollback through aiCheckpointTools) once the calls its model listed before it in the
 * step have ended, so that it undoes those it finds applied; the calls listed after it wait for it (`callInStep`).
 */
export function moveInStep<T>(options: Partial<ToolExecutionOptions<unknown>> | undefined, move: () => Promise<T>): Promise<T> {
  const step = stepOf(options);
  if (!step) return move();
  const before = [...step.started, ...(step.lastMove ? [step.lastMove] : [])].map(settled);
  const running = Promise.all(before).then(move);
  step.started = [];
  step.lastMove = running;
  return running;
}
