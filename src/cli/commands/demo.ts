// `forkpoint demo`: writes the demo (a chat, an agent loop with tools) to a database, so every command can be tried.
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { runDemo } from "../demo/scenario.js";
import { redacted, withForkpoint } from "../open.js";
import { examples } from "../options.js";

/** `arg` as a POSIX shell reads it back: as it is when plain, else in single quotes (a path with a space, a quote). */
const shellArg = (arg: string) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`);

/** How the user runs this program: `forkpoint` once installed, or through tsx from a clone (`npm start`). */
function invocation(cli: Cli): string {
  const script = process.argv[1] ?? "";
  const self = script.endsWith(".ts") ? `npx tsx ${shellArg(relative(process.cwd(), script) || script)}` : "forkpoint";
  // A database named on the command line is named again; one from the environment is found there again.
  if (cli.options.postgres !== undefined) return `${self} --postgres ${shellArg(cli.options.postgres)}`;
  if (cli.postgresUrl !== undefined) return self;
  return cli.options.db || cli.io.env.FORKPOINT_DB ? `${self} --db ${shellArg(cli.dbPath)}` : self;
}

export function demoCommand(program: Command, cli: Cli): void {
  const command = program
    .command("demo")
    .description("write a demo (a chat with edits and rollbacks, an agent loop with tools) to the database, creating it")
    .option("--files <dir>", "where the demo's tool writes files (default: forkpoint-demo-files beside the database)");
  examples(command, ["forkpoint demo", "forkpoint --db /tmp/demo.db demo"]);
  command.action(async (o: { files?: string }) => {
    // The demo's tool is a defineTool result: loading it loads the engine, which --help does not need.
    const { writeFile } = await import("../demo/tools.js");
    const workspace = resolve(o.files ?? join(dirname(resolve(cli.dbPath)), "forkpoint-demo-files"));
    return withForkpoint(
      cli,
      "create",
      async (fp) => {
        const { out } = cli;
        const narrative: string[] = [];
        const ids = await runDemo(fp, workspace, (l) => narrative.push(l));
        const fp_ = invocation(cli);
        const toolsPath = fileURLToPath(new URL(`../demo/tools${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url));
        const {
          sessionId: chat,
          checkpointIds: [cpA, cpB],
          editedMessageId,
        } = ids.chat;
        const { sessionId: agent, startCheckpointId, filesBranchId } = ids.agent;
        const tools = shellArg(toolsPath);
        const database = cli.postgresUrl === undefined ? resolve(cli.dbPath) : redacted(cli.postgresUrl);
        out.print({ database, workspace, tools: toolsPath, ...ids }, () => [
          `forkpoint demo — database ${database}`,
          "",
          ...narrative,
          "",
          "Now try:",
          `  ${fp_} sessions -u demo`,
          `  ${fp_} tree ${chat} -u demo`,
          `  ${fp_} history ${chat} -u demo`,
          `  ${fp_} versions ${chat} ${editedMessageId} -u demo`,
          `  ${fp_} diff ${chat} ${cpA} ${cpB} -u demo`,
          `  ${fp_} show ${cpB} -u demo`,
          `  ${fp_} timeline ${agent} -u demo`,
          `  ${fp_} plan ${agent} --branch ${filesBranchId} -u demo`,
          `  ${fp_} switch ${agent} ${filesBranchId} -u demo --tools ${tools}`,
          `  ${fp_} rollback ${agent} ${startCheckpointId} -u demo --tools ${tools}`,
          `  ${fp_} users`,
          `  ${fp_} verify`,
          "",
          "Done. Run it again to add more sessions to the same database.",
        ]);
      },
      [writeFile],
    );
  });
}
