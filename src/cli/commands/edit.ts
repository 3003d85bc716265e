// `forkpoint edit <session> <message> <content>`: a new version of a message (a branch forked just before it).
import type { Command } from "commander";
import type { JsonValue } from "../../index.js";
import type { Cli } from "../cli.js";
import { guardedMove, moveOptions, moveResultLines, withMoveOptions, type MoveFlags } from "../moves.js";
import { withForkpoint } from "../open.js";
import { inline } from "../output.js";
import { examples, withUser } from "../options.js";

export function editCommand(program: Command, cli: Cli): void {
  const command = program
    .command("edit")
    .description("write a new version of a message: a branch forked just before it becomes current")
    .argument("<session>", "session id")
    .argument("<message>", "message id")
    .argument("<content>", "the new content (text, or JSON with --json-content)")
    .option("--role <role>", "the new message's role (default: the edited message's)")
    .option("--json-content", "parse <content> as JSON");
  withUser(command);
  withMoveOptions(command);
  examples(command, [
    "forkpoint edit s_abc m_xyz 'Three days, luxury please.' -u alice",
    `forkpoint edit s_abc m_xyz '{"parts":["hi"]}' --json-content -u alice`,
  ]);
  command.action(
    (sessionId: string, messageId: string, text: string, o: { user: string; role?: string; jsonContent?: boolean } & MoveFlags) => {
      const options = moveOptions(cli, o);
      let content: JsonValue = text;
      if (o.jsonContent) {
        try {
          content = JSON.parse(text) as JsonValue;
        } catch (error) {
          cli.usage(`--json-content: <content> is not JSON: ${(error as Error).message}`);
        }
      }
      return withForkpoint(cli, "write", async (fp) => {
        const s = await fp.getSession(sessionId, { userId: o.user });
        const versions = await s.versions(messageId);
        const role = o.role ?? versions.versions[versions.index]!.message.role;
        const r = await guardedMove(cli, s, "edit", { messageId }, o, () => s.edit(messageId, { role, content }, options));
        cli.out.print(r, () => [
          `new message ${inline(r.message.id)} at position ${r.message.position}: ${inline(r.message.role)}: ${inline(r.message.content, 100)}`,
          ...moveResultLines(cli.out, r),
        ]);
      });
    },
  );
}
