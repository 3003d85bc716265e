// The column types both halves of the PostgreSQL schema use: what each reads back as must match SQLite's.
import { bigint, customType, doublePrecision } from "drizzle-orm/pg-core";

/**
 * Text compared byte by byte, as SQLite compares it: ids, user ids and LangGraph checkpoint ids sort and page the same
 * on both stores whatever the database's locale (and their indexes serve those orders).
 */
export const text = customType<{ data: string; driverData: string }>({ dataType: () => 'text COLLATE "C"' });
/** Buffers (file contents, LangGraph's serialized values, entry hashes) as they are. */
export const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });
/** Times: JS numbers in ms with µs fractions. float8 round-trips a JS double exactly (they feed hash chains). */
export const time = (name: string) => doublePrecision(name);
/** Row numbers and ids that only grow, read back as JS numbers (the store parses int8). */
export const seq = (name: string) => bigint(name, { mode: "number" });
