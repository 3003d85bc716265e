// `--tools ./my-tools.js`: the tool definitions a module exports, so CLI moves can undo and replay their calls.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { ToolDefinition } from "../index.js";
import { CliError } from "./cli.js";
import { importOwnSource } from "./source-imports.js";

const isTool = (value: unknown): value is ToolDefinition =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as ToolDefinition).name === "string" &&
  typeof (value as ToolDefinition).run === "function";

/**
 * Imports the module and takes its tools: a default export that is an array of definitions (or one definition),
 * and every named export that is one. A module that exports none is an error: moves would refuse anyway.
 */
export async function loadTools(spec: string): Promise<ToolDefinition[]> {
  const path = resolve(spec);
  // The common mistakes get a sentence saying what to do; Node's own messages name paths inside forkpoint.
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) throw new CliError(`cannot load --tools ${spec}: no such file`, { code: "TOOLS_NOT_LOADED" });
  if (stat.isDirectory()) throw new CliError(`cannot load --tools ${spec}: a directory, not a module file`, { code: "TOOLS_NOT_LOADED" });
  let module: Record<string, unknown>;
  importOwnSource();
  try {
    module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (cause) {
    // Node 22.18+ strips erasable TypeScript itself; enums, namespaces and parameter properties still need a compiler.
    const code = (cause as NodeJS.ErrnoException).code;
    if ((code === "ERR_UNKNOWN_FILE_EXTENSION" || code === "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX") && /\.[cm]?tsx?$/.test(path)) {
      throw new CliError(
        `cannot load --tools ${spec}: TypeScript that Node cannot strip (enums, namespaces, parameter properties); compile it to JavaScript, or run forkpoint with node --import tsx`,
        { cause, code: "TOOLS_NOT_LOADED" },
      );
    }
    throw new CliError(`cannot load --tools ${spec}: ${(cause as Error).message}`, { cause, code: "TOOLS_NOT_LOADED" });
  }
  const found = new Set<ToolDefinition>();
  const take = (value: unknown) => {
    if (Array.isArray(value)) for (const v of value) take(v);
    else if (isTool(value)) found.add(value);
  };
  for (const value of Object.values(module)) take(value);
  if (found.size === 0) {
    throw new CliError(`--tools ${spec} exports no tool definitions (export defineTool results, or a default array of them)`, {
      code: "TOOLS_NOT_LOADED",
    });
  }
  return [...found];
}
