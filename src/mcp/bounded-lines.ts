// The stdio server's input cut into whole lines of at most the SDK's read limit: a longer one is dropped, not fatal.
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { Transform } from "node:stream";

/** The longest message line passed on (its line break included): the SDK's stdio transport closes on a longer one. */
export const MAX_LINE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;

/**
 * Passes on each whole line of the stream (one JSON-RPC message) once its line break came; a line longer than `limit`
 * bytes is dropped as it comes, and `dropped` is called at its end. The SDK's transport, given such a line, would
 * close for good and leave the server deaf; this way the client's other messages are still answered.
 */
export function boundedLines(dropped: () => void, limit = MAX_LINE_BYTES): Transform {
  let line: Buffer[] = [];
  let size = 0;
  let dropping = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(10, start);
        const piece = chunk.subarray(start, nl === -1 ? chunk.length : nl + 1);
        if (!dropping && size + piece.length > limit) {
          dropping = true;
          line = [];
        }
        if (!dropping) {
          line.push(piece);
          size += piece.length;
        }
        if (nl === -1) break;
        if (dropping) dropped();
        else this.push(Buffer.concat(line, size));
        dropping = false;
        line = [];
        size = 0;
        start = nl + 1;
      }
      done();
    },
  });
}
