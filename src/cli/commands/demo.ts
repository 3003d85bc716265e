// `forkpoint demo`: writes the demo (a chat, an agent loop with tools) to a database, so every command can be tried.
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
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
  if (cli.options.postgres !== undefined)
    return [
      self,
      "--postgres",
      shellArg(cli.options.postgres),
      ...(cli.options.preparedStatements === false ? ["--no-prepared-statements"] : []),
    ].join(" ");
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
        // Relative to where the user is when that is shorter (a clone's root: src/cli/demo/tools.ts).
        const fromHere = relative(process.cwd(), toolsPath);
        const tools = shellArg(fromHere.startsWith("..") || isAbsolute(fromHere) ? toolsPath : fromHere);
        const database = cli.postgresUrl === undefined ? resolve(cli.dbPath) : redacted(cli.postgresUrl);
        // Each command with what it shows or does, in an order where each does it: the agent ends rolled back, so the
        // switch comes first (it replays the writes) and the rollback after it (it undoes them again).
        const tried: [string, string][] = [
          [`sessions -u demo`, "the demo's sessions, newest first"],
          [`tree ${chat} -u demo`, "the chat's branches: the root, a rollback and an edit"],
          [`history ${chat} -u demo`, "the messages of the chat's current branch"],
          [`versions ${chat} ${editedMessageId} -u demo`, "the edited question's two versions"],
          [`diff ${chat} ${cpA} ${cpB} -u demo`, "what the second checkpoint adds to the first"],
          [`show ${cpB} -u demo`, "a checkpoint's state, history and tool calls"],
          [`timeline ${agent} -u demo`, "the agent's messages, tool calls, checkpoints and moves"],
          [`plan ${agent} --branch ${filesBranchId} -u demo --tools ${tools}`, "what the switch below would replay"],
          [`switch ${agent} ${filesBranchId} -u demo --tools ${tools}`, "replays the agent's writes: its files are on disk again"],
          [`rollback ${agent} ${startCheckpointId} -u demo --tools ${tools}`, "then undoes them: a new branch, no files"],
          [`users`, "every user, with their session counts"],
          [`verify`, "checks every checksum of the database"],
          [`ui --allow-writes --tools ${tools}`, "the web view of all this; open the URL it prints"],
        ];
        out.print({ database, workspace, tools: toolsPath, ...ids }, () => [
          `forkpoint demo — database ${database}`,
          "",
          ...narrative,
          "",
          "Now try:",
          ...tried.flatMap(([args, what]) => [`  # ${what}`, `  ${fp_} ${args}`]),
          "",
          "Done. Run it again to add more sessions to the same database.",
        ]);
      },
      [writeFile],
    );
  });
}
