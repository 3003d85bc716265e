// new ForkpointSaver checks its options as the core verbs check theirs: a misspelt key (which would put every thread
// under the default user) or an option it cannot read is a ValidationError naming it, before LangGraph reads any.
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases, thrownBy } from "../helpers.js";

const dbs = tempDatabases();

describe("new ForkpointSaver's options", () => {
  it("refuse a misspelt key, naming it", () => {
    const { fp } = dbs.open();
    expect(thrownBy(() => new ForkpointSaver(fp, { userID: "alice" } as never))).toMatchObject({
      name: "ValidationError",
      field: "options",
      message: expect.stringContaining("userID"),
    });
    expect(new ForkpointSaver(fp, { userId: "alice", messagesChannel: "messages" })).toBeInstanceOf(ForkpointSaver);
  });

  it("refuse options that cannot be read: a throwing getter, a revoked proxy", () => {
    const { fp } = dbs.open();
    const getter = {
      get serde(): never {
        throw new Error("no");
      },
    };
    expect(thrownBy(() => new ForkpointSaver(fp, getter))).toMatchObject({ name: "ValidationError", field: "options" });
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(thrownBy(() => new ForkpointSaver(fp, proxy))).toMatchObject({ name: "ValidationError", field: "options" });
    expect(thrownBy(() => new ForkpointSaver(fp, null as never))).toMatchObject({ name: "ValidationError", field: "options" });
  });
});
