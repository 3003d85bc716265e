// Progress of long calls (verify, export, import, prune) on standard error: a bar on a terminal, nothing otherwise.
import { createRequire } from "node:module";
import type { SingleBar } from "cli-progress";
import type { Progress } from "../index.js";

export interface ProgressReporter {
  /** Pass as the call's `onProgress`; undefined when standard error is not a terminal (nothing is drawn then). */
  onProgress: ((progress: Progress) => void) | undefined;
  /** Clears the bar (call when the work ends, however it ends). */
  stop(): void;
}

export function progressReporter(label: string, stream: NodeJS.WriteStream): ProgressReporter {
  if (!stream.isTTY) return { onProgress: undefined, stop: () => {} };
  let bar: SingleBar | undefined;
  return {
    onProgress: ({ done, total }) => {
      if (!bar) {
        // Required on a terminal only, when the first progress comes: piped runs and --help never load it.
        const { SingleBar: Bar } = createRequire(import.meta.url)("cli-progress") as typeof import("cli-progress");
        bar = new Bar({ stream, format: `${label} [{bar}] {percentage}% {value}/{total}`, clearOnComplete: true, hideCursor: true });
        bar.start(total, done);
      } else bar.update(done);
    },
    stop: () => bar?.stop(),
  };
}
