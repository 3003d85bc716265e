// The engine's clock: strictly increasing within the process, so events of one millisecond keep their order.

/**
 * Milliseconds since the epoch with microsecond resolution, strictly increasing within the process, so
 * that events of one millisecond keep their order in the timeline. It drifts from the wall clock by at most
 * 1 µs per call made within the same microsecond.
 */
export function monotonicClock(): () => number {
  let last = 0;
  return () => {
    const now = Math.round((performance.timeOrigin + performance.now()) * 1000) / 1000;
    last = now > last ? now : Math.round((last + 0.001) * 1000) / 1000;
    return last;
  };
}
