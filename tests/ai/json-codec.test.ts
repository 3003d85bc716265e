// The adapters' JSON codec: binary values and URLs anywhere in a message come back as they went in, and an app's own
// object that looks like an encoded value is not mistaken for one.
import { describe, expect, it } from "vitest";
import { decodeValue, encodeValue } from "../../src/adapters/json-codec.js";

const roundTrip = (value: unknown) => decodeValue(JSON.parse(JSON.stringify(encodeValue(value))));

describe("json codec", () => {
  it("keeps each kind of binary value, and URLs", () => {
    const back = roundTrip({
      u8: new Uint8Array([0, 255]),
      buf: Buffer.from("hi"),
      ab: new Uint8Array([7, 8]).buffer,
      url: new URL("https://x.test/a?b=1"),
    });
    expect(back.u8).toBeInstanceOf(Uint8Array);
    expect(Buffer.isBuffer(back.u8)).toBe(false);
    expect([...back.u8]).toEqual([0, 255]);
    expect(Buffer.isBuffer(back.buf) && back.buf.toString()).toBe("hi");
    expect(back.ab).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(back.ab)]).toEqual([7, 8]);
    expect(back.url).toEqual(new URL("https://x.test/a?b=1"));
  });

  it("gives back an app's object that has the codec's tag key exactly", () => {
    const tricky = [
      { $fp: "bytes", base64: "AAAA" },
      { $fp: "object", value: { a: 1 } },
      { $fp: 3, nested: { $fp: "url", href: "x" } },
    ];
    expect(roundTrip(tricky)).toEqual(tricky);
  });

  it("encodes a view on part of a buffer as just that part", () => {
    const whole = new Uint8Array([1, 2, 3, 4, 5]);
    expect([...roundTrip(whole.subarray(1, 3))]).toEqual([2, 3]);
  });
});
