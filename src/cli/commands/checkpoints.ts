// `forkpoint checkpoints`: a user's checkpoints across sessions (or of one), newest first, with filters.
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { printPage } from "../listing.js";
import { withForkpoint } from "../open.js";
import { examples, isoTime, withPaging, withUser, type PagingOptions } from "../options.js";

interface Options extends PagingOptions {
  user: string;
  session?: string;
  name?: string;
  since?: Date;
  until?: Date;
  auto?: boolean;
}

export function checkpointsCommand(program: Command, cli: Cli): void {
  const command = program
    .command("checkpoints")
    .description("a user's checkpoints, newest first (filter by session, name, time, auto)")
    .option("-s, --session <sessionId>", "one session only")
    .option("--name <name>", "with this name")
    .option("--since <time>", "created at or after (ISO 8601)", isoTime)
    .option("--until <time>", "created at or before (ISO 8601)", isoTime)
    .option("--auto", "automatic ones only")
    .option("--no-auto", "manual ones only");
  withUser(command);
  withPaging(command);
  examples(command, [
    "forkpoint checkpoints -u alice",
    "forkpoint checkpoints -u alice -s s_abc --name 'before booking'",
    "forkpoint checkpoints -u alice --since 2025-05-01 --no-auto",
  ]);
  command.action((o: Options) =>
    withForkpoint(cli, "read", async (fp) => {
      const page = await fp.listCheckpoints({
        userId: o.user,
        limit: o.limit,
        cursor: o.cursor ?? null,
        ...(o.session ? { sessionId: o.session } : {}),
        ...(o.name ? { name: o.name } : {}),
        ...(o.since ? { since: o.since } : {}),
        ...(o.until ? { until: o.until } : {}),
        ...(o.auto !== undefined ? { auto: o.auto } : {}),
      });
      const { out } = cli;
      printPage(cli, page, "checkpoints", ["ID", "NAME", "SESSION", "BRANCH", "POS", "CREATED", "EXPIRES"], (cp) => [
        cp.id,
        cp.name ?? (cp.auto ? "(auto)" : "(unnamed)"),
        cp.sessionId,
        cp.branchId,
        cp.position,
        out.time(cp.createdAt),
        cp.expiresAt ? out.time(cp.expiresAt) : null,
      ]);
    }),
  );
}
