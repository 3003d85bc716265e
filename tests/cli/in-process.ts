// The forkpoint command run inside the test process: the bin's `main(argv, io)` with pipes that are not a terminal, for
// tests that read only a command's status, stdout and stderr (a spawned process costs ~0.5 s, mostly module loading).
// What only a process shows (signals, a closed pipe, a terminal, the working directory, module loading) is spawned.
import { Readable, Writable } from "node:stream";
import { main } from "../../src/cli/main.js";

export interface Ran {
  status: number;
  stdout: string;
  stderr: string;
}

let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs `forkpoint <args>` as the binary would with `input` on stdin and only PATH, HOME and `env` in its environment.
 * Runs one at a time: the exit code is the process's, and writes commander makes to process.stdout (help, version)
 * are taken for the run's own while it lasts.
 */
export function runInProcess(args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Ran> {
  const ran = queue.then(() => runNow(args, options));
  queue = ran.catch(() => undefined);
  return ran;
}

async function runNow(args: string[], { input = "", env = {} }: { input?: string; env?: NodeJS.ProcessEnv }): Promise<Ran> {
  let stdout = "";
  let stderr = "";
  const stderrStream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      stderr += chunk.toString();
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  const writeStdout = process.stdout.write;
  const exitCode = process.exitCode;
  process.exitCode = undefined;
  process.stdout.write = ((chunk: Buffer | string) => {
    stdout += chunk.toString();
    return true;
  }) as typeof process.stdout.write;
  try {
    await main(["node", "forkpoint", ...args], {
      out: (line) => (stdout += `${line}\n`),
      stdoutIsTTY: false,
      stderr: stderrStream,
      stdin: Readable.from([Buffer.from(input)]),
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    });
    return { status: Number(process.exitCode ?? 0), stdout, stderr };
  } finally {
    process.stdout.write = writeStdout;
    process.exitCode = exitCode;
  }
}
