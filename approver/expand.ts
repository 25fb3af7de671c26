/**
 * A command line as the rules judge it: its simple commands, the programs they run through
 * their effects (each a simple command of its own), the files they write (resolved the way
 * the write tool resolves paths) and what can never be allowed by `command` rules (changes
 * to the shell, effects that cannot be known from the text).
 *
 * @module
 */

import { basename, isAbsolute, resolve } from "node:path";
import { type Effect, effectsOf, type Invocation } from "./effects/mod.ts";
import { type SimpleCommand, splitCommands } from "./shell.ts";

/** A simple command the rules must pass. */
export interface Item {
  /** As written (allow and ask rules test this). */
  readonly written: string;
  /** Every spelling deny rules test. */
  readonly variants: readonly string[];
  /** Why no allow rule may pass it, if so. */
  readonly blocked?: string;
  /** `blocked` comes from an effect (its text names it), not from the parser. */
  readonly effect?: boolean;
  /** The effect that runs it (`find -exec`), for one found inside another command. */
  readonly via?: string;
  /** The command whose effect runs it. */
  readonly parent?: Item;
}

/** A file a command writes, resolved. */
export interface ResolvedWrite {
  /** Absolute, symlinks resolved as far as they exist. */
  readonly path: string;
  /** Everything under `path` too. */
  readonly tree: boolean;
  /** What writes it: `git log --output`. */
  readonly via: string;
  /** The command that writes it. */
  readonly item: Item;
  /** Why the write tool would refuse it whatever the rules say (outside the workspace...). */
  readonly problem?: string;
}

/** An effect no `command` rule allows (unless the rule opts in to `run` for `unknown`). */
export interface Blocker {
  readonly item: Item;
  readonly kind: "shell" | "unknown";
  /** The reason text: `assigning PATH changes the shell, which command rules never allow`. */
  readonly text: string;
}

/** The whole line. */
export interface Expansion {
  readonly items: readonly Item[];
  readonly writes: readonly ResolvedWrite[];
  readonly blockers: readonly Blocker[];
}

/** What `expand` needs to resolve paths. */
export interface ExpandOptions {
  readonly resolvePath?: (path: string) => Promise<string>;
  readonly workspace?: { readonly roots: readonly string[] };
  readonly protectedPaths?: readonly string[];
}

/**
 * Reasons the parser marks a command opaque that the effects engine judges itself (a write
 * through a redirection, `find -exec`). Any other reason still blocks (`sh -c` stays opaque,
 * as the spec's rules section says). If the parser's texts change, these stop matching and
 * the check only gets stricter.
 */
const JUDGED_HERE: readonly RegExp[] = [
  /^output is redirected to /,
  /^find -exec runs other commands$/,
];

const MAX_DEPTH = 8;
const MAX_ITEMS = 512;

/** Expands `commands` (from `splitCommands` of a line that parsed). */
export async function expand(
  commands: readonly SimpleCommand[],
  options: ExpandOptions,
): Promise<Expansion> {
  const items: Item[] = [];
  const writes: ResolvedWrite[] = [];
  const blockers: Blocker[] = [];
  const base = options.workspace?.roots[0] ?? resolve(".");
  const resolvePath = options.resolvePath ?? ((p: string) => Promise.resolve(resolve(p)));
  // After `cd`, relative paths of later commands are relative to somewhere unknown.
  const moves = commands.some((c) => ["cd", "pushd", "popd"].includes(basename(c.argv[0] ?? "")));

  const block = (item: Item, kind: Blocker["kind"], text: string) => {
    blockers.push({ item, kind, text });
  };

  async function addWrite(item: Item, effect: Extract<Effect, { kind: "write" }>) {
    if (moves && !isAbsolute(effect.path)) {
      block(
        item,
        "unknown",
        `${effect.via} writes ${effect.path} after a cd, so where it writes cannot be judged from the text`,
      );
      return;
    }
    const lexical = resolve(base, effect.path);
    const path = await resolvePath(lexical).catch(() => lexical);
    const roots = options.workspace?.roots;
    const inside = (root: string) =>
      path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`);
    let problem: string | undefined;
    if (roots !== undefined && !roots.some(inside)) problem = "outside the workspace";
    for (const given of options.protectedPaths ?? []) {
      const protectedPath = await resolvePath(given).catch(() => given);
      const under = path === protectedPath || path.startsWith(`${protectedPath}/`);
      const holds = effect.tree && protectedPath.startsWith(`${path.replace(/\/+$/, "")}/`);
      if (under || holds) problem = `which ${under ? "is" : "holds"} a protected path`;
    }
    writes.push({
      path,
      tree: effect.tree,
      via: effect.via,
      item,
      ...(problem === undefined ? {} : { problem }),
    });
  }

  async function handle(item: Item, command: Invocation, depth: number) {
    for (const effect of effectsOf(command)) {
      if (items.length >= MAX_ITEMS && (effect.kind === "run" || effect.kind === "script")) {
        // Past the bound nothing more is parsed: the line is refused as too big to check.
        add(item);
        return;
      }
      switch (effect.kind) {
        case "write":
          await addWrite(item, effect);
          break;
        case "shell":
          block(item, "shell", `${effect.what} changes the shell, which command rules never allow`);
          break;
        case "unknown":
          block(item, "unknown", `${effect.what}, which cannot be judged from the text`);
          break;
        case "run": {
          const inner = effect.command;
          const written = [
            ...(inner.assignments ?? []).map((a) => `${a.name}=${a.value}`),
            ...inner.argv,
          ].join(" ");
          const argv = inner.argv;
          const child = add({
            written,
            variants: [
              ...new Set([
                written,
                argv.join(" "),
                [basename(argv[0] ?? ""), ...argv.slice(1)].join(" "),
              ]),
            ],
            via: effect.via,
            parent: item,
          });
          if (child === undefined) return;
          if (depth + 1 > MAX_DEPTH) {
            block(child, "unknown", `${effect.via} nests commands too deeply to check`);
          } else await handle(child, inner, depth + 1);
          break;
        }
        case "script": {
          const split = await splitCommands(effect.script);
          if (split.error !== undefined) {
            block(
              item,
              "unknown",
              `${effect.via} runs ${
                JSON.stringify(effect.script)
              }, which does not parse, so it cannot be judged from the text`,
            );
          }
          if (depth + 1 > MAX_DEPTH) {
            block(item, "unknown", `${effect.via} nests commands too deeply to check`);
            break;
          }
          for (const command of split.commands) await top(command, depth + 1, effect.via, item);
          break;
        }
      }
    }
  }

  function add(item: Item): Item | undefined {
    if (items.length >= MAX_ITEMS) {
      if (blockers.every((b) => !b.text.startsWith("the line runs too many"))) {
        block(item, "unknown", `the line runs too many commands (over ${MAX_ITEMS}) to check`);
      }
      return undefined;
    }
    items.push(item);
    return item;
  }

  async function top(command: SimpleCommand, depth: number, via?: string, parent?: Item) {
    const reasons = command.opaque ? (command.why ?? "opaque").split("; ") : [];
    const remaining = reasons.filter((r) => !JUDGED_HERE.some((re) => re.test(r)));
    let blocked: string | undefined;
    let effect = false;
    if (command.defines !== undefined) {
      blocked = `defining the ${command.defines} ${
        (command.names ?? []).join(", ")
      } changes the shell, which command rules never allow`;
      effect = true;
    } else if (command.shadowed) {
      blocked = `${command.argv[0]} is a function or alias this line defines, not the program ${
        command.argv[0]
      }`;
      effect = true;
    } else if (remaining.length > 0) blocked = remaining.join("; ");
    const item = add({
      written: command.written,
      variants: command.variants,
      ...(blocked === undefined ? {} : { blocked, effect }),
      ...(via === undefined ? {} : { via }),
      ...(parent === undefined ? {} : { parent }),
    });
    if (item === undefined) return;
    await handle(item, command, depth);
  }

  for (const command of commands) await top(command, 0);
  return { items, writes: separateLinks(writes, blockers), blockers };
}

/** Programs whose writes can create or move symbolic links. */
const LINKERS = /^(ln|link|mv|cp|install|tar|gtar|bsdtar|git [a-z-]+|rsync|unzip|cpio)( |$)/;

/**
 * Paths are resolved before the line runs. A line that can create a link and also writes
 * elsewhere could write through the link it just made (`ln -s ../.git/config out/l && sort
 * -o out/l f`), so its other writes cannot be judged from the text.
 */
function separateLinks(writes: ResolvedWrite[], blockers: Blocker[]): ResolvedWrite[] {
  const linker = writes.find((w) => LINKERS.test(w.via));
  if (linker === undefined) return writes;
  const kept: ResolvedWrite[] = [];
  for (const write of writes) {
    if (write.item === linker.item) kept.push(write);
    else {
      blockers.push({
        item: write.item,
        kind: "unknown",
        text: `${write.via} writes ${write.path} in a line where ${linker.via} can create links, ` +
          "so where it writes cannot be judged from the text",
      });
    }
  }
  return kept;
}
