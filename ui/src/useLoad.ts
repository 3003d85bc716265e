// Loading what a panel shows: the answer to the latest request only; an earlier one still under way is aborted.
import { useEffect, useRef, useState } from "react";
import { isAbort } from "./api";

export interface Loaded<T> {
  data: T | null;
  error: unknown;
}

/**
 * Runs `load` whenever `deps` change (not at all while it is null), aborting the request it made for the previous
 * deps: a click on A then B shows B, whichever answer arrives last. `data` is null until the answer for these deps,
 * unless `keep` is the same as for the previous ones (the same thing read again: what was shown stays meanwhile).
 */
export function useLoad<T>(load: ((signal: AbortSignal) => Promise<T>) | null, deps: readonly unknown[], keep?: unknown): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({ data: null, error: null });
  const kept = useRef<unknown>(undefined);
  useEffect(() => {
    const same = keep !== undefined && kept.current === keep;
    kept.current = keep;
    if (!same) setState({ data: null, error: null });
    if (!load) return;
    const controller = new AbortController();
    load(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ data, error: null });
      },
      (error: unknown) => {
        if (!controller.signal.aborted && !isAbort(error)) setState({ data: null, error });
      },
    );
    return () => controller.abort();
    // The caller names what the request depends on, as it would for useEffect.
  }, deps);
  return state;
}
