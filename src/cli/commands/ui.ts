// `forkpoint ui`: serves the web view of the session trees on 127.0.0.1 until interrupted; read-only unless --allow-writes.
import type { Command } from "commander";
import type { Forkpoint } from "../../index.js";
import type { Cli } from "../cli.js";
import { withForkpoint } from "../open.js";
import { examples, listening, port } from "../options.js";

interface UiOptions {
  port?: number;
  allowWrites?: boolean;
}

/** Serves `fp` and resolves once the process is told to stop (Ctrl-C, SIGTERM), with the server closed. */
async function serve(cli: Cli, fp: Forkpoint, o: UiOptions): Promise<void> {
  const { startUiServer } = await import("../../ui/server.js");
  const { pageFolder } = await import("../ui-page.js");
  const assetsDir = await pageFolder((line) => cli.io.stderr.write(`${line}\n`));
  const ui = await listening(o.port, () => startUiServer({ fp, port: o.port ?? 0, allowWrites: Boolean(o.allowWrites), assetsDir }));
  cli.out.print({ url: ui.url, port: ui.port, allowWrites: Boolean(o.allowWrites) }, () => [
    `forkpoint ui: ${ui.url}`,
    o.allowWrites ? "writes allowed: rollback and switch move sessions" : "read-only (start with --allow-writes to roll back and switch)",
    "Ctrl-C stops it.",
  ]);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await ui.close();
}

export function uiCommand(program: Command, cli: Cli): void {
  const command = program
    .command("ui")
    .description("serve a web view of the users, sessions and session trees on 127.0.0.1 (read-only unless --allow-writes)")
    .option("--port <n>", "the port (default: a free one)", port)
    .option("--allow-writes", "allow rollback and switch from the page (plans are always shown)");
  examples(command, [
    "forkpoint ui",
    "forkpoint --db /tmp/demo.db ui --allow-writes --tools ./tools.js",
    "forkpoint ui --postgres postgres://localhost/app",
  ]);
  command.action((o: UiOptions) => withForkpoint(cli, o.allowWrites ? "write" : "read", (fp) => serve(cli, fp, o)));
}
