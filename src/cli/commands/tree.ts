// `forkpoint tree <session>`: the session's branches drawn as a tree, the current one and fork checkpoints marked.
import type { Command } from "commander";
import type { BranchTreeNode } from "../../index.js";
import type { Cli } from "../cli.js";
import { withForkpoint } from "../open.js";
import { escapeText } from "../output.js";
import { examples, withUser } from "../options.js";

export function treeCommand(program: Command, cli: Cli): void {
  const command = program
    .command("tree")
    .alias("branches")
    .description("draw a session's branches as a tree (the current one marked, and the checkpoints they fork from)")
    .argument("<session>", "session id");
  withUser(command);
  examples(command, ["forkpoint tree s_abc -u alice", "forkpoint --json tree s_abc -u alice"]);
  command.action((sessionId: string, o: { user: string }) =>
    withForkpoint(cli, "read", async (fp) => {
      const { branchTree } = await import("../../index.js");
      const tree = branchTree(await (await fp.getSession(sessionId, { userId: o.user })).branches());
      const { c } = cli.out;
      const describe = (n: BranchTreeNode) => {
        const origin =
          n.reason === "root"
            ? "root"
            : `${n.reason} at ${n.forkPosition}${n.forkCheckpointId ? ` from checkpoint ${c.cyan(escapeText(n.forkCheckpointId))}` : ""}`;
        const name = n.name ? ` "${escapeText(n.name)}"` : "";
        const id = escapeText(n.id);
        return `${n.current ? c.green(c.bold(id)) : id}${name}  ${origin}, head ${n.head}${n.current ? c.green("  * current") : ""}`;
      };
      const lines: string[] = [];
      const walk = (nodes: BranchTreeNode[], prefix: string, top: boolean) => {
        nodes.forEach((n, i) => {
          const last = i === nodes.length - 1;
          lines.push(top ? describe(n) : `${prefix}${last ? "└── " : "├── "}${describe(n)}`);
          walk(n.children, top ? prefix : `${prefix}${last ? "    " : "│   "}`, false);
        });
      };
      walk(tree, "", true);
      cli.out.print(tree, () => lines);
    }),
  );
}
