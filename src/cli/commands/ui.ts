// `forkpoint ui`: the web viewer, which a later release brings; named now so that it says so instead of "unknown command".
import type { Command } from "commander";
import { CliError, type Cli } from "../cli.js";

export function uiCommand(program: Command, _cli: Cli): void {
  program
    .command("ui")
    .description("a web viewer of the session trees (not yet available)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("ui is not yet available in this version of forkpoint");
    });
}
