// PostgreSQL's batches: a unit's waiting writes in fewer statements, built from inserts declared by their parts.
export interface Statement {
  text: string;
  values: unknown[];
}

/**
 * An INSERT declared by its parts, so that a batch places it after other statements' parameters, and merges rows of
 * it, by putting the parts together: no SQL text is parsed or edited. The other writes are plain text and go alone.
 */
export interface Insert {
  /** The table it inserts into: inserts into different tables may share one statement. */
  readonly table: string;
  /** The statement with its parameters numbered from $1. */
  readonly text: string;
  /** The statement with its parameters numbered from `offset + 1`. */
  readonly at: (offset: number) => string;
  /** For one VALUES row with nothing after it: the text before the row, and the row placed at an offset. */
  readonly values?: { readonly head: string; readonly row: (offset: number) => string };
}

/**
 * Bounds on a batch: each shape is a prepared statement of its own (so their number stays small), and a statement
 * takes at most 65,535 parameters (a big import writes thousands of rows in one unit).
 */
const MAX_ROWS = 16;
const MAX_STATEMENTS = 8;
const MAX_PARAMETERS = 16_384;

/** A parameter's placeholder, `n` counted from 1 after `offset`. */
const param = (offset: number, n: number) => `$${offset + n}`;

/**
 * `INSERT INTO table (columns) VALUES (...)`, one parameter per column in order. `expr` wraps a column's placeholder
 * (`decode($n, 'hex')`); `tail` follows the row (`ON CONFLICT ...`, no parameters), and keeps rows from merging (two
 * rows of one statement updating one row is an error).
 */
export function insertRow(
  table: string,
  columns: readonly string[],
  options: { expr?: Readonly<Record<string, (placeholder: string) => string>>; tail?: string } = {},
): Insert {
  const head = `INSERT INTO ${table} (${columns.join(", ")}) VALUES `;
  const row = (offset: number) =>
    `(${columns.map((c, i) => options.expr?.[c]?.(param(offset, i + 1)) ?? param(offset, i + 1)).join(", ")})`;
  const tail = options.tail === undefined ? "" : ` ${options.tail}`;
  const at = (offset: number) => head + row(offset) + tail;
  return { table, text: at(0), at, ...(tail === "" ? { values: { head, row } } : {}) };
}

/** An INSERT of another form (INSERT ... SELECT, a subquery), written with `p(n)` for its n-th parameter. */
export function insertWith(table: string, text: (p: (n: number) => string) => string): Insert {
  const at = (offset: number) => text((n) => param(offset, n));
  return { table, text: at(0), at };
}

/** A write waiting to be sent: plain text, or an insert by its parts. */
export interface Waiting {
  statement: string | Insert;
  values: unknown[];
}

/** Consecutive writes sent as one statement: rows of one insert (`insert`), or a plain text alone (`insert` null). */
interface Group {
  insert: Insert | null;
  rows: number[];
}

/** A batch's statement: its text, with its parameters taken from the writes that wait (`[write, parameter]`). */
type Planned = { text: string; sources: Source[] };

/**
 * The writes that wait, in fewer statements with the same effect: consecutive rows of one insert as one multi-row
 * insert (rows, and so their identities, in the order given), then consecutive inserts into different tables as one
 * statement (`WITH w0 AS (INSERT ...) INSERT ...`: inserts never touch one another's rows, and each table's identities
 * still grow in the order its rows were given). Anything else goes alone, in its place.
 */
function batched(waiting: readonly Waiting[]): Planned[] {
  // Groups of consecutive writes, each sent as one statement.
  const groups: Group[] = [];
  for (let i = 0; i < waiting.length; i++) {
    const st = waiting[i]!.statement;
    const last = groups.at(-1);
    if (typeof st !== "string" && st.values && last?.insert === st && last.rows.length < MAX_ROWS) last.rows.push(i);
    else groups.push({ insert: typeof st === "string" ? null : st, rows: [i] });
  }
  /** How many parameters a group's writes take. */
  const size = (group: Group) => group.rows.reduce((n, i) => n + waiting[i]!.values.length, 0);
  const sourcesOf = (rows: readonly number[]) => rows.flatMap((i) => waiting[i]!.values.map((_, k): Source => [i, k]));
  /** A group's text placed after `offset` parameters. */
  const textOf = (group: Group, offset: number): string => {
    const { insert, rows } = group;
    if (insert === null) return waiting[rows[0]!]!.statement as string;
    if (rows.length === 1) return insert.at(offset);
    const width = waiting[rows[0]!]!.values.length;
    return insert.values!.head + rows.map((_, r) => insert.values!.row(offset + r * width)).join(", ");
  };
  const out: Planned[] = [];
  let run: Group[] = [];
  const end = () => {
    if (run.length === 0) return;
    let offset = 0;
    const texts = run.map((group) => {
      const text = textOf(group, offset);
      offset += size(group);
      return text;
    });
    const text =
      texts.length === 1
        ? texts[0]!
        : `WITH ${texts
            .slice(0, -1)
            .map((t, i) => `w${i} AS (${t})`)
            .join(", ")} ${texts.at(-1)}`;
    out.push({ text, sources: run.flatMap((group) => sourcesOf(group.rows)) });
    run = [];
  };
  for (const group of groups) {
    const table = group.insert?.table;
    const full = run.length === MAX_STATEMENTS || run.reduce((n, r) => n + size(r), size(group)) > MAX_PARAMETERS;
    if (table === undefined || full || run.some((r) => r.insert!.table === table)) end();
    if (table === undefined) out.push({ text: textOf(group, 0), sources: sourcesOf(group.rows) });
    else run.push(group);
  }
  end();
  return out;
}

/** Where each parameter of a batched statement comes from: [write, parameter] of the writes that wait. */
type Source = readonly [number, number];

/**
 * Batches by the statements of the writes that wait: a unit of one kind (a turn, say) batches the same way each time.
 * Keyed by the statements one after another (texts and inserts), in nested maps: they are the same objects every
 * time, so a lookup neither joins texts into a new string nor hashes one.
 */
interface PlanNode {
  plan?: Planned[];
  next?: Map<string | Insert, PlanNode>;
}
let plans: PlanNode = {};
let planCount = 0;
/** Sequences of statements kept before the cache starts afresh (statements are written by the engine: they are few). */
const MAX_PLANS = 1_000;

/** `batched(waiting)`, its texts and parameter layout computed once per sequence of statements. */
export function planned(waiting: Waiting[]): Statement[] {
  let node = plans;
  for (const st of waiting) {
    node.next ??= new Map();
    let child = node.next.get(st.statement);
    if (child === undefined) node.next.set(st.statement, (child = {}));
    node = child;
  }
  let plan = node.plan;
  if (plan === undefined) {
    if (++planCount > MAX_PLANS) {
      planCount = 0;
      plans = {};
      return planned(waiting);
    }
    node.plan = plan = batched(waiting);
  }
  const out = new Array<Statement>(plan.length);
  for (let p = 0; p < plan.length; p++) {
    const { text, sources } = plan[p]!;
    const values = new Array<unknown>(sources.length);
    for (let v = 0; v < sources.length; v++) {
      // Indexed, not destructured: destructuring an array runs the iterator protocol.
      const source = sources[v]!;
      values[v] = waiting[source[0]]!.values[source[1]];
    }
    out[p] = { text, values };
  }
  return out;
}
