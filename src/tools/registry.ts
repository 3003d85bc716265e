// The tools an open forkpoint knows by name.
import { ConflictError, NotFoundError, ValidationError } from "../models/errors.js";
import { checkTool, type ToolDefinition } from "./define-tool.js";

export class ToolRegistry {
  readonly #tools = new Map<string, ToolDefinition>();

  constructor(tools: readonly ToolDefinition[] = []) {
    if (!Array.isArray(tools)) throw new ValidationError("tools", "must be an array of tool definitions");
    for (const tool of tools) this.add(tool);
  }

  add(tool: ToolDefinition): void {
    if (typeof tool?.name !== "string" || typeof tool.run !== "function") {
      throw new ValidationError("tools", "each tool must come from defineTool({ name, run, undo? })");
    }
    // A plain object (not from defineTool) gets the same checks, its time limit included.
    checkTool(tool);
    if (this.#tools.has(tool.name)) throw new ConflictError(`two tools are named ${JSON.stringify(tool.name)}`);
    this.#tools.set(tool.name, tool);
  }

  /** The tool, or undefined when none is registered under that name. */
  find(name: string): ToolDefinition | undefined {
    return this.#tools.get(name);
  }

  /** The tool, or a `NotFoundError`. */
  get(name: string): ToolDefinition {
    const tool = this.#tools.get(name);
    if (!tool) throw new NotFoundError("tool", name);
    return tool;
  }

  /**
   * The name to call a tool by: a name as given, or a definition's name when that very definition is registered (a
   * different definition under its name would run code other than the one whose types the caller relies on).
   */
  nameOf(tool: string | ToolDefinition): string {
    if (typeof tool !== "object" || tool === null) return tool;
    const registered = this.get(tool.name);
    if (registered !== tool) {
      throw new ValidationError("tool", `is not the definition registered as ${JSON.stringify(tool.name)}: pass that one, or its name`);
    }
    return tool.name;
  }

  /** True when the named tool is registered and says its effects lie only in the workspace's files (`effects`). */
  actsInWorkspaceOnly(name: string): boolean {
    return this.#tools.get(name)?.effects === "workspace";
  }

  /** True when the named tool is registered and has an `undo`. */
  isReversible(name: string): boolean {
    return typeof this.#tools.get(name)?.undo === "function";
  }
}
