// `forkpoint ui` as a child process (through tsx, as in a clone): started, its printed URL read, and stopped.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { repo } from "./page.js";

export interface UiProcess {
  url: string;
  port: number;
  token: string;
  /** Stops it (SIGTERM: it closes its database first); resolves once it exited. */
  stop(): Promise<void>;
}

/** Runs `forkpoint <globalArgs> ui <uiArgs>` and resolves once it prints the URL; rejects if it exits first. */
export function startUiProcess(globalArgs: string[], uiArgs: string[]): Promise<UiProcess> {
  return startCli([...globalArgs, "ui", ...uiArgs]);
}

/** Sends SIGTERM and waits for the exit: the CLI closes its database on the way out, writing beside it. */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  return exited;
}

/**
 * Runs `forkpoint <args>` (a `ui` command) from the source (`main`: the repository's, by default) through tsx, and
 * resolves once it prints the URL; `onStderr` sees what it writes there.
 */
export function startCli(
  cliArgs: string[],
  env: NodeJS.ProcessEnv = process.env,
  main = join(repo, "src/cli/main.ts"),
  onStderr: (chunk: string) => void = () => {},
): Promise<UiProcess> {
  const args = ["--import", "tsx", main, ...cliArgs];
  const child = spawn(process.execPath, args, { cwd: join(main, "../../.."), env });
  child.stderr.on("data", (chunk: Buffer) => onStderr(chunk.toString()));
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const found = /http:\/\/127\.0\.0\.1:(\d+)\/\?token=(\S+)/.exec(out);
      if (found) resolve({ url: found[0], port: Number(found[1]), token: found[2]!, stop: () => stop(child) });
    });
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("exit", (code) => reject(new Error(`forkpoint ui exited with ${code}: ${out}`)));
  });
}
