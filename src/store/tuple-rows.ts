// Row objects from a tuple's columns, built by one object literal per column list (both stores' row mappers).

/** Builds a row from `tuple[at…]`. */
export type RowBuilder = (tuple: unknown[], at: number) => Record<string, unknown>;

/**
 * A builder of rows with keys `keys` (the columns from `at` on, in order; a key listed twice has the first one's place
 * and the last one's value, as a driver's named rows): an object literal of its keys, so that each list's rows have one
 * shape from the start. Filled key by key, every list went through the same keyed stores, which V8 makes generic once
 * they have seen many shapes (after a process's reads, a session row's build was a quarter of an edit's CPU profile).
 * Each key is written as a JSON string: no key reaches the code as code (a `"__proto__"` key sets the row's prototype,
 * as a driver's rows and an assignment do). Where code generation from strings is turned
 * off (`--disallow-code-generation-from-strings`), rows are filled key by key instead.
 */
export function rowBuilder(keys: readonly string[]): RowBuilder {
  const places = new Map<string, number>();
  keys.forEach((key, i) => places.set(key, i));
  const fields = [...places].map(([key, i]) => `${JSON.stringify(key)}: t[at + ${i}]`);
  try {
    return new Function("t", "at", `return { ${fields.join(", ")} };`) as RowBuilder;
  } catch {
    return (t, at) => {
      const row: Record<string, unknown> = {};
      for (const [key, i] of places) row[key] = t[at + i];
      return row;
    };
  }
}

const builders = new WeakMap<object, RowBuilder>();

/** The `rowBuilder` of a column list (`[sql, key]` pairs), made once per list. */
export function columnsBuilder(cols: readonly (readonly [sql: string, key: string])[]): RowBuilder {
  let build = builders.get(cols);
  if (!build) builders.set(cols, (build = rowBuilder(cols.map(([, key]) => key))));
  return build;
}
