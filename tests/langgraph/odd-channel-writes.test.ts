// Pending writes on channels named like Object.prototype members (`toString`, `__proto__`) are plain writes, stored and
// read back as LangGraph's MemorySaver keeps them (a channel is special only when LangGraph's own map has it).
import { MemorySaver } from "@langchain/langgraph";
import { emptyCheckpoint, type BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const CHANNELS = ["plain", "toString", "constructor", "__proto__", "valueOf", "hasOwnProperty"];

async function pendingOf(saver: BaseCheckpointSaver) {
  const cp = { ...emptyCheckpoint(), id: "1f000000-0000-6000-8000-000000000001" };
  const cfg = await saver.put({ configurable: { thread_id: "t", checkpoint_ns: "" } }, cp, { source: "input", step: -1, parents: {} }, {});
  for (const channel of CHANNELS)
    await saver.putWrites(
      cfg,
      [
        [channel, { v: channel }],
        ["other", 1],
      ],
      `task-${channel}`,
    );
  return (await saver.getTuple(cfg))?.pendingWrites;
}

it("writes on channels named like Object.prototype members are kept as MemorySaver keeps them", async () => {
  const { fp } = dbs.open();
  const expected = await pendingOf(new MemorySaver());
  expect(expected).toHaveLength(CHANNELS.length * 2);
  expect(await pendingOf(new ForkpointSaver(fp))).toEqual(expected);
  expect((await fp.verify()).ok).toBe(true);
});
