// `forkpoint versions <session> <message>`: the `< 2/3 >` versions of a message across branches.
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { withForkpoint } from "../open.js";
import { inline, Raw } from "../output.js";
import { examples, withUser } from "../options.js";

export function versionsCommand(program: Command, cli: Cli): void {
  const command = program
    .command("versions")
    .description("the versions of a message across branches (the chat < 2/3 > picker)")
    .argument("<session>", "session id")
    .argument("<message>", "message id");
  withUser(command);
  examples(command, ["forkpoint versions s_abc m_xyz -u alice"]);
  command.action((sessionId: string, messageId: string, o: { user: string }) =>
    withForkpoint(cli, "read", async (fp) => {
      const v = await (await fp.getSession(sessionId, { userId: o.user })).versions(messageId);
      const { out } = cli;
      out.print(v, () => [
        `< ${v.index + 1}/${v.count} >`,
        ...out.table(
          ["#", "BRANCH", "MESSAGE", "ROLE", "CONTENT"],
          v.versions.map((x, i) => [
            new Raw(i === v.index ? out.c.green(`*${i + 1}`) : ` ${i + 1}`),
            x.branchId,
            x.message.id,
            x.message.role,
            new Raw(inline(x.message.content, 80)),
          ]),
        ),
      ]);
    }),
  );
}
