// From the adapters review: undoableAgentTools', agentToolDefinitions' and ForkpointSession's options are checked as the
// core verbs check theirs: an unknown key or a value of the wrong type is a ValidationError naming it, not ignored.
import { tool } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ValidationError } from "../../src/index.js";
import { ForkpointSession, agentToolDefinitions, undoableAgentTools } from "../../src/openai-agents/index.js";
import { tempDatabases, thrownBy } from "../helpers.js";

const dbs = tempDatabases();
const note = tool({ name: "note", description: "Note", parameters: z.object({ t: z.string() }), execute: async ({ t }) => t });

describe("the Agents SDK adapter's options", () => {
  it("undoableAgentTools and agentToolDefinitions refuse unknown keys and an abortController that is none", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const unknown = thrownBy(() => undoableAgentTools(s, [note], {}, { afterr: "x" } as never));
    expect(unknown).toBeInstanceOf(ValidationError);
    expect(unknown).toMatchObject({ field: "options", message: expect.stringContaining("afterr") });
    expect(thrownBy(() => undoableAgentTools(s, [note], {}, { abortController: 5 } as never))).toMatchObject({
      field: "options.abortController",
    });
    expect(thrownBy(() => agentToolDefinitions([note], {}, { abortController: new AbortController() } as never))).toMatchObject({
      field: "options",
      message: expect.stringContaining("abortController"),
    });
    expect(undoableAgentTools(s, [note], {}, { abortController: new AbortController() })).toHaveLength(1);
  });

  it("new ForkpointSession refuses unknown keys and bad move options, naming them", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const unknown = thrownBy(() => new ForkpointSession(s, { moveOption: { scope: "both" } } as never));
    expect(unknown).toBeInstanceOf(ValidationError);
    expect(unknown).toMatchObject({ field: "options", message: expect.stringContaining("moveOption") });
    expect(thrownBy(() => new ForkpointSession(s, { moveOptions: { scope: "all" } } as never))).toMatchObject({
      field: "options.moveOptions.scope",
    });
    expect(thrownBy(() => new ForkpointSession(s, { moveOptions: { refuseIrreversibl: true } } as never))).toBeInstanceOf(ValidationError);
    await expect(new ForkpointSession(s, { moveOptions: { refuseIrreversible: true } }).getSessionId()).resolves.toBe(s.id);
  });

  it("new ForkpointSession refuses options it cannot read (a throwing getter, a revoked proxy) as bad options", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const getter = {
      get moveOptions(): never {
        throw new Error("no");
      },
    };
    expect(thrownBy(() => new ForkpointSession(s, getter))).toMatchObject({ name: "ValidationError", field: "options" });
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(thrownBy(() => new ForkpointSession(s, proxy))).toMatchObject({ name: "ValidationError", field: "options" });
  });
});
