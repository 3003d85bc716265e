// `forkpoint history <session>`: the messages of the current branch (or another), the latest page first.
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { decodeHistoryCursor, historyPage } from "../history-page.js";
import { printPage } from "../listing.js";
import { withForkpoint } from "../open.js";
import { inline, Raw } from "../output.js";
import { examples, withPaging, withUser, type PagingOptions } from "../options.js";

export function historyCommand(program: Command, cli: Cli): void {
  const command = program
    .command("history")
    .description("the messages of a session's current branch (or --branch), oldest first; -n shows the latest n")
    .argument("<session>", "session id")
    .option("-b, --branch <branchId>", "another branch of the session");
  withUser(command);
  withPaging(command);
  examples(command, [
    "forkpoint history s_abc -u alice",
    "forkpoint history s_abc -u alice -n 5 --cursor <cursor>",
    "forkpoint --json history s_abc -u alice --branch br_xyz",
  ]);
  command.action((sessionId: string, o: { user: string; branch?: string } & PagingOptions) =>
    withForkpoint(cli, "read", async (fp) => {
      const before = o.cursor === undefined ? undefined : decodeHistoryCursor(o.cursor);
      const s = await fp.getSession(sessionId, { userId: o.user });
      const page = historyPage(await s.history(o.branch ? { branchId: o.branch } : {}), o.limit, before);
      printPage(cli, page, "messages", ["POS", "ROLE", "CONTENT", "ID"], (m) => [
        m.position,
        m.role,
        new Raw(inline(m.content, 100)),
        m.id,
      ]);
    }),
  );
}
