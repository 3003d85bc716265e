// Asking the person at a terminal before a command destroys something: `--yes` skips the question, and without a
// terminal on standard input (a script, a pipe) nothing is asked.
import { createInterface } from "node:readline";
import type { Cli } from "./cli.js";

/** Whether standard input is a terminal: someone is there to answer. */
export function onTerminal(cli: Cli): boolean {
  return Boolean((cli.io.stdin as { isTTY?: boolean }).isTTY);
}

/** Asks `question` on standard error and reads one line: true for "y" or "yes" (any case), false otherwise or at EOF. */
export function confirmed(cli: Cli, question: string): Promise<boolean> {
  const lines = createInterface({ input: cli.io.stdin, output: cli.io.stderr, terminal: false });
  return new Promise<boolean>((resolve) => {
    lines.once("close", () => resolve(false));
    cli.io.stderr.write(`${question} [y/N] `);
    lines.once("line", (answer) => {
      resolve(/^\s*y(es)?\s*$/i.test(answer));
      lines.close();
    });
  });
}
