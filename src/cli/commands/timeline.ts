// `forkpoint timeline <session>`: everything that happened in a session, across branches, newest first.
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { printPage } from "../listing.js";
import { withForkpoint } from "../open.js";
import { examples, withPaging, withUser, type PagingOptions } from "../options.js";

export function timelineCommand(program: Command, cli: Cli): void {
  const command = program
    .command("timeline")
    .description("everything that happened in a session, across branches, newest first")
    .argument("<session>", "session id");
  withUser(command);
  withPaging(command);
  examples(command, ["forkpoint timeline s_abc -u alice", "forkpoint timeline s_abc -u alice -n 50 --cursor <cursor>"]);
  command.action((sessionId: string, o: { user: string } & PagingOptions) =>
    withForkpoint(cli, "read", async (fp) => {
      const page = await (await fp.getSession(sessionId, { userId: o.user })).timeline({ limit: o.limit, cursor: o.cursor ?? null });
      printPage(cli, page, "events", ["AT", "KIND", "BRANCH", "ID", "SUMMARY"], (e) => [
        cli.out.time(e.at),
        e.kind,
        e.branchId,
        e.id,
        e.summary,
      ]);
    }),
  );
}
