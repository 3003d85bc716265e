// `forkpoint users`: the users that own sessions, with how many each has (an operator listing).
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { printPage } from "../listing.js";
import { withForkpoint } from "../open.js";
import { examples, withPaging, type PagingOptions } from "../options.js";

export function usersCommand(program: Command, cli: Cli): void {
  const command = program.command("users").description("list the users that own sessions, by id (an operator listing)");
  withPaging(command);
  examples(command, ["forkpoint users", "forkpoint --json users -n 100"]);
  command.action((o: PagingOptions) =>
    withForkpoint(cli, "read", async (fp) => {
      const page = await fp.listUsers({ limit: o.limit, cursor: o.cursor ?? null });
      printPage(cli, page, "users", ["USER", "SESSIONS", "UPDATED"], (u) => [u.userId, u.sessions, cli.out.time(u.updatedAt)]);
    }),
  );
}
