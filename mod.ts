/**
 * rousseau as a library: the tool interface, the registry and the built-in tools.
 *
 * ```ts
 * import { createBuiltinTools, createInProcessHost, createWorkspace, DEFAULT_LIMITS, Registry } from "./mod.ts";
 * const registry = new Registry(createBuiltinTools());
 * const host = createInProcessHost(registry, {
 *   workspace: await createWorkspace([Deno.cwd()]),
 *   limits: DEFAULT_LIMITS,
 *   env: {},
 * });
 * const result = await host.call("grep", { pattern: "TODO", path: Deno.cwd() }, new AbortController().signal);
 * ```
 *
 * @module
 */

export * from "./tools/mod.ts";
