// Printing one page of a listing: a table, then how to get the next page.
import type { Page } from "../index.js";
import type { Cli } from "./cli.js";
import type { Cell } from "./output.js";

export function printPage<T>(cli: Cli, page: Page<T>, what: string, head: string[], row: (item: T) => Cell[]): void {
  const { out } = cli;
  out.print(page, () => [
    ...(page.items.length === 0 ? [`no ${what}`] : out.table(head, page.items.map(row))),
    ...(page.nextCursor ? [out.c.dim(`next page: --cursor ${page.nextCursor}`)] : []),
  ]);
}
