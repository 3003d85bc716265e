// The stored form of the stat cache: one row per directory, holding its files' stat data and content hashes.
import { isDir, type DirNode, type FileEntry } from "./dir-node.js";

// The stored form of a directory's files: per file, its name's length (u16) and UTF-8 bytes, size, mtime ns, ctime ns,
// inode (u64 each), mode (u32), flags (u8: 1 = racy) and the content's SHA-256 (32 bytes). Version byte first.
const STAT_VERSION = 1;

export function encodeStatBody(node: DirNode): Buffer {
  const files: [Buffer, FileEntry][] = [];
  let size = 1;
  for (const [name, e] of node.entries) {
    if (isDir(e)) continue;
    const bytes = Buffer.from(name);
    files.push([bytes, e]);
    size += 2 + bytes.length + 8 * 4 + 4 + 1 + 32;
  }
  const out = Buffer.allocUnsafe(size);
  out[0] = STAT_VERSION;
  let at = 1;
  for (const [name, e] of files) {
    at = out.writeUInt16LE(name.length, at);
    at += name.copy(out, at);
    at = out.writeBigUInt64LE(e.size, at);
    at = out.writeBigInt64LE(e.mtimeNs, at);
    at = out.writeBigInt64LE(e.ctimeNs, at);
    at = out.writeBigUInt64LE(e.ino, at);
    at = out.writeUInt32LE(e.mode >>> 0, at);
    at = out.writeUInt8(e.racy ? 1 : 0, at);
    at += out.write(e.hash, at, "hex");
  }
  return out;
}

export function decodeStatBody(body: Buffer): [string, FileEntry][] {
  // An unknown version (a newer forkpoint's) is an empty cache: every file is read again.
  if (body.length === 0 || body[0] !== STAT_VERSION) return [];
  const out: [string, FileEntry][] = [];
  let at = 1;
  while (at < body.length) {
    const len = body.readUInt16LE(at);
    at += 2;
    const name = body.toString("utf8", at, at + len);
    at += len;
    const size = body.readBigUInt64LE(at);
    const mtimeNs = body.readBigInt64LE(at + 8);
    const ctimeNs = body.readBigInt64LE(at + 16);
    const ino = body.readBigUInt64LE(at + 24);
    const mode = body.readUInt32LE(at + 32);
    const racy = body[at + 36] === 1;
    const hash = body.toString("hex", at + 37, at + 69);
    at += 69;
    out.push([name, { size, mtimeNs, ctimeNs, ino, mode, hash, racy }]);
  }
  return out;
}
