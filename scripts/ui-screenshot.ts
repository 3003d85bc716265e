// Takes docs/ui.png: a realistic session (a trip-planning chat with tools, edits, a regenerated answer and a rollback)
// written to a temp database, served by the web view, and shot in Debian's Chromium at a laptop's 1440×900.
// npx tsx scripts/ui-screenshot.ts [OUT.png]      (default docs/ui.png)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { pageFolder } from "../src/cli/ui-page.js";
import { defineTool, openForkpoint, type Forkpoint } from "../src/index.js";
import { startUiServer } from "../src/ui/server.js";

const repo = fileURLToPath(new URL("..", import.meta.url));
const out = resolve(process.argv[2] ?? join(repo, "docs", "ui.png"));
const CHROMIUM = "/usr/bin/chromium";

/** The assistant's tools, on an in-memory world: a search (nothing to undo), a hotel hold and a calendar entry. */
const holds = new Set<string>();
const calendar = new Set<string>();
const tools = [
  defineTool({
    name: "search_flights",
    run: async ({ from, to, date }: { from: string; to: string; date: string }) => ({
      flights: [`TP 1351 ${from}→${to} ${date} 07:05`, `FR 8342 ${from}→${to} ${date} 13:40`],
    }),
  }),
  defineTool({
    name: "hold_hotel",
    run: async ({ hotel, nights }: { hotel: string; nights: number }) => {
      holds.add(hotel);
      return { hotel, nights, hold: `H-${hotel.length}${nights}42` };
    },
    undo: async ({ args }) => void holds.delete(args.hotel),
  }),
  defineTool({
    name: "add_to_calendar",
    run: async ({ title, day }: { title: string; day: string }) => {
      calendar.add(`${day} ${title}`);
      return { added: `${day} ${title}` };
    },
    undo: async ({ args }) => void calendar.delete(`${args.day} ${args.title}`),
  }),
];

/** Maria's trip to Lisbon: the session the screenshot shows, with the others she has beside it in the list. */
async function writeSessions(fp: Forkpoint): Promise<string> {
  const userId = "maria";
  await fp.createSession({ userId, title: "Quarterly report outline" });
  await fp.createSession({ userId, title: "Birthday dinner ideas" });
  const s = await fp.createSession({ userId, title: "Lisbon in May" });
  const [ask] = await s.append({ role: "user", content: "I'd like to spend a week in Lisbon in May. Where do I start?" });
  await s.append({
    role: "assistant",
    content: "A week gives you the city and a day trip or two. Shall I look at flights from Berlin first?",
  });
  await s.setState({ city: "Lisbon", month: "May", nights: 7 });
  await s.checkpoint({ name: "trip outlined" });
  await s.append({ role: "user", content: "Yes, leaving on the 12th." });
  await s.invoke("search_flights", { from: "BER", to: "LIS", date: "2026-05-12" });
  await s.append({ role: "assistant", content: "Two direct flights on the 12th: TP 1351 at 07:05 and FR 8342 at 13:40." });
  const flights = await s.checkpoint({ name: "flights found" });
  await s.append({ role: "user", content: "The morning one. And a hotel in Alfama." });
  await s.invoke("hold_hotel", { hotel: "Memmo Alfama", nights: 7 });
  const [hotelAnswer] = await s.append({
    role: "assistant",
    content: "Memmo Alfama is held for 7 nights, from the 12th: a roof terrace over the river, and the tram 28 at the door.",
  });
  await s.setState((prev) => ({ ...(prev as object), flight: "TP 1351", hotel: "Memmo Alfama" }));
  await s.checkpoint({ name: "hotel held" });
  await s.append({ role: "user", content: "Put a day trip to Sintra in my calendar." });
  await s.invoke("add_to_calendar", { title: "Day trip to Sintra", day: "2026-05-14" });
  await s.append({ role: "assistant", content: "Added: Thursday the 14th, a day trip to Sintra (the 08:11 train from Rossio)." });
  await s.checkpoint({ name: "Sintra planned" });

  // Another answer to the hotel question, kept as a version beside the first.
  await s.regenerate(hotelAnswer!.id, {
    content: "Memmo Alfama is held: 7 nights from the 12th. Breakfast is on the terrace; ask for a river-view room.",
  });
  // Back to the flights: this time a shorter stay in Porto and Lisbon (the hotel hold is undone on the way).
  await s.rollback(flights.id);
  await s.append({ role: "user", content: "Actually, split it: four nights in Lisbon, three in Porto." });
  await s.invoke("hold_hotel", { hotel: "Casa do Conto, Porto", nights: 3 });
  await s.append({ role: "assistant", content: "Casa do Conto in Porto is held for 3 nights, from the 16th. The train takes 3 hours." });
  await s.setState((prev) => ({ ...(prev as object), nights: 4, porto: 3, flight: "TP 1351" }));
  await s.checkpoint({ name: "Porto added" });
  // The first question asked another way: a version of it, on a branch of its own.
  await s.edit(ask!.id, { content: "Plan me a long weekend in Lisbon in May." });
  await s.append({ role: "assistant", content: "Three nights suit the old town: Alfama, Belém and the LX Factory. Which weekend?" });
  // Named as Maria would, and back to the Porto plan.
  const branches = await s.branches();
  const named = { root: "A week in Lisbon", rollback: "Lisbon and Porto" } as Record<string, string>;
  for (const b of branches) if (named[b.reason]) await s.nameBranch(b.id, named[b.reason]!);
  const edits = branches.filter((b) => b.reason === "edit");
  await s.nameBranch(edits[0]!.id, "Hotel answer, take 2");
  await s.nameBranch(edits[1]!.id, "A long weekend");
  await s.switchBranch(branches.find((b) => b.reason === "rollback")!.id);
  return s.id;
}

const dir = mkdtempSync(join(tmpdir(), "forkpoint-screenshot-"));
try {
  const db = join(dir, "screenshot.db");
  const fp = openForkpoint({ path: db, tools });
  const sessionId = await writeSessions(fp);
  const ui = await startUiServer({ fp, assetsDir: await pageFolder((line) => console.error(line)) });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(ui.url);
    await page.getByRole("button", { name: "maria", exact: true }).click();
    await page.getByTestId(`session-${sessionId}`).click();
    await page.getByTestId("branch-history").locator("li").first().waitFor();
    await page.getByRole("button", { name: "◆ hotel held" }).click();
    await page.getByTestId("checkpoint-state").waitFor();
    await page.getByTestId("checkpoint-tools").waitFor();
    // The graph's fit-to-view animation settles.
    await page.waitForTimeout(500);
    await page.screenshot({ path: out });
    console.log(`wrote ${out}`);
  } finally {
    await browser.close();
    await ui.close();
    await fp.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
