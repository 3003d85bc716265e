// `forkpoint sessions`: a user's sessions (or, with --all, everyone's), newest first.
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { printPage } from "../listing.js";
import { withForkpoint } from "../open.js";
import { examples, withPaging, type PagingOptions } from "../options.js";

export function sessionsCommand(program: Command, cli: Cli): void {
  const command = program
    .command("sessions")
    .description("list a user's sessions (or every user's with --all), newest first")
    .option("-u, --user <userId>", "the owner")
    .option("-a, --all", "every user's sessions (an operator listing)");
  withPaging(command);
  examples(command, [
    "forkpoint sessions -u alice",
    "forkpoint sessions --all -n 50",
    "forkpoint --json sessions -u alice --cursor <cursor>",
  ]);
  command.action((o: { user?: string; all?: boolean } & PagingOptions) => {
    if (Boolean(o.user) === Boolean(o.all)) cli.usage("give -u <userId> or --all (not both)");
    return withForkpoint(cli, "read", async (fp) => {
      const paging = { limit: o.limit, cursor: o.cursor ?? null };
      const page = o.all ? await fp.listSessions({ all: true, ...paging }) : await fp.listSessions({ userId: o.user!, ...paging });
      const { out } = cli;
      printPage(cli, page, "sessions", ["ID", ...(o.all ? ["USER"] : []), "TITLE", "UPDATED"], (s) => [
        s.id,
        ...(o.all ? [s.userId] : []),
        s.title ?? "(untitled)",
        out.time(s.updatedAt),
      ]);
    });
  });
}
