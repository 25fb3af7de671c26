/**
 * The registry: the set of tools a process offers, by exact name.
 *
 * @module
 */

import type { AnyTool, ToolDefinition } from "./types.ts";

const NAME_PATTERN = /^[a-z][a-z0-9_]*$/;

/** Tools by name. Lookup is exact and case-sensitive; listings are sorted by name. */
export class Registry {
  readonly #tools = new Map<string, AnyTool>();

  /** Creates a registry holding `tools`, registered in order. */
  constructor(tools: Iterable<AnyTool> = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Adds a tool; throws on a bad or duplicate name, leaving the registry unchanged. */
  register(tool: AnyTool): void {
    const name: unknown = tool?.name;
    if (typeof name !== "string" || !NAME_PATTERN.test(name)) {
      throw new TypeError(`tools: invalid tool name ${JSON.stringify(String(name))}`);
    }
    if (this.#tools.has(name)) throw new Error(`tools: duplicate registration for "${name}"`);
    this.#tools.set(name, tool);
  }

  /** The tool called exactly `name`, if any. */
  get(name: string): AnyTool | undefined {
    return this.#tools.get(name);
  }

  /** True when a tool called exactly `name` is registered. */
  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** Registered names, sorted. */
  names(): string[] {
    return [...this.#tools.keys()].sort();
  }

  /** Wire definitions, sorted by name, so the model sees the same list on every run. */
  definitions(): ToolDefinition[] {
    return this.names().map((name) => {
      const tool = this.#tools.get(name)!;
      return { name, description: tool.description, input_schema: tool.inputSchema };
    });
  }
}
