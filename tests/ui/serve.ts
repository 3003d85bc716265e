// `forkpoint ui` as a child process (through tsx, as in a clone): started, its printed URL read, and stopped.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { repo } from "./page.js";

export interface UiProcess {
  url: string;
  port: number;
  token: string;
  stop(): void;
}

/** Runs `forkpoint <globalArgs> ui <uiArgs>` and resolves once it prints the URL; rejects if it exits first. */
export function startUiProcess(globalArgs: string[], uiArgs: string[]): Promise<UiProcess> {
  return startCli([...globalArgs, "ui", ...uiArgs]);
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
      if (found) resolve({ url: found[0], port: Number(found[1]), token: found[2]!, stop: () => child.kill("SIGTERM") });
    });
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("exit", (code) => reject(new Error(`forkpoint ui exited with ${code}: ${out}`)));
  });
}
