/**
 * Runtime rows `cold`: `deno task cli tool read`, `version` and `--help`, process start to
 * exit, against a `deno task` that runs a one-line hello script, and `tool read` against the
 * floor (`_floor.ts`, the least a `tool read` can cost in this design); with a breakdown of
 * where the start goes.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { join } from "node:path";
import {
  CLI,
  cliEnv,
  CONFIG,
  elapsed,
  fastest,
  type Fixture,
  makeRow,
  REPO,
  type Section,
  type Settings,
} from "./_common.ts";
import { type Breakdown, round, type Row } from "./table.ts";

const FLOOR = fileURLToPath(new URL("./_floor.ts", import.meta.url));

async function runProcess(
  args: string[],
  env: Record<string, string>,
  cwd: string,
  want: string,
): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  if (out.code !== 0 || !stdout.startsWith(want)) {
    throw new Error(
      `bench: deno ${args.join(" ")} exited ${out.code}: ${
        new TextDecoder().decode(out.stderr).slice(0, 500)
      }`,
    );
  }
}

async function measure(fx: Fixture, settings: Settings): Promise<[Row[], Breakdown[]]> {
  const env = cliEnv(fx);
  const script = join(fx.home, "one.ts");
  await Deno.writeTextFile(
    script,
    `console.log(Deno.readTextFileSync(${JSON.stringify(fx.small)}));\n`,
  );
  await Deno.writeTextFile(join(fx.home, "empty.ts"), "\n");
  // The yardstick: `deno task` running a one-line script, as `deno task cli ...` runs ours.
  const yard = join(fx.home, "yardstick");
  await Deno.mkdir(yard, { recursive: true });
  await Deno.writeTextFile(join(yard, "hello.ts"), 'console.log("hello");\n');
  await Deno.writeTextFile(
    join(yard, "deno.json"),
    JSON.stringify({ tasks: { hello: "deno run --quiet hello.ts" } }) + "\n",
  );
  const task = ["task", "--quiet", "--config", CONFIG, "cli"];
  const taskHello = () =>
    elapsed(() =>
      runProcess(
        ["task", "--quiet", "--config", join(yard, "deno.json"), "hello"],
        env,
        yard,
        "hello",
      )
    );
  const taskRead = () =>
    elapsed(() =>
      runProcess(
        [...task, "--workspace", fx.root, "tool", "read", JSON.stringify({ path: fx.small })],
        env,
        fx.home,
        fx.smallText,
      )
    );
  const taskVersion = () =>
    elapsed(() => runProcess([...task, "version"], env, fx.home, "rousseau "));
  const taskHelp = () => elapsed(() => runProcess([...task, "--help"], env, fx.home, "Usage: "));
  const oneLiner = () =>
    elapsed(() =>
      runProcess(
        ["run", "--quiet", "--no-config", `--allow-read=${fx.root}`, script],
        env,
        fx.home,
        fx.smallText,
      )
    );
  // Where the time goes: the project config alone, then the CLI's module graph alone.
  const withConfig = () =>
    elapsed(() =>
      runProcess(["run", "--quiet", "--config", CONFIG, join(fx.home, "empty.ts")], env, REPO, "")
    );
  const help = () =>
    elapsed(() => runProcess([...CLI, "--log-level", "error", "--help"], env, fx.home, ""));
  const floor = () =>
    elapsed(() =>
      runProcess(
        ["run", "-A", "--quiet", "--config", CONFIG, FLOOR, fx.root, fx.small],
        env,
        fx.home,
        fx.smallText,
      )
    );
  const tools = () =>
    elapsed(() => runProcess([...CLI, "--workspace", fx.root, "tools"], env, fx.home, "bash"));
  const read = () =>
    elapsed(() =>
      runProcess(
        [...CLI, "--workspace", fx.root, "tool", "read", JSON.stringify({ path: fx.small })],
        env,
        fx.home,
        fx.smallText,
      )
    );
  const runs = settings.quick ? 1 : settings.runs * 2;
  const [y, tr, tv, th, b, c, h, t, f, r] = await fastest("cold start", runs, [
    taskHello,
    taskRead,
    taskVersion,
    taskHelp,
    oneLiner,
    withConfig,
    help,
    tools,
    floor,
    read,
  ]);
  const yardName = "`deno task` of a one-line hello script";
  const note = (what: string) =>
    `min of ${runs} runs, interleaved; ours is \`deno task --quiet cli ${what}\` in this ` +
    "repository, the comparison `deno task --quiet hello` (`deno run --quiet hello.ts`)";
  const within = (_: number, ratio: number | null) => ratio === null ? null : ratio <= 2;
  const rows = [
    makeRow(
      {
        id: "cold_start",
        group: "cold",
        name: "cold start: `deno task cli tool read` of a small file, process start to exit",
        unit: "ms",
        "comparison_name": yardName,
        target: "<= 2x (goal 1.5x)",
        note: note("--workspace DIR tool read '{\"path\": ...}'"),
      },
      tr!,
      y!,
      within,
    ),
    makeRow(
      {
        id: "cold_version",
        group: "cold",
        name: "cold start: `deno task cli version`",
        unit: "ms",
        "comparison_name": yardName,
        target: "<= 2x (goal 1.5x)",
        note: note("version"),
      },
      tv!,
      y!,
      within,
    ),
    makeRow(
      {
        id: "cold_help",
        group: "cold",
        name: "cold start: `deno task cli --help`",
        unit: "ms",
        "comparison_name": yardName,
        target: "<= 2x (goal 1.5x)",
        note: note("--help"),
      },
      th!,
      y!,
      within,
    ),
    makeRow(
      {
        id: "cold_tool_read_floor",
        group: "cold",
        name: "cold start: `main.ts tool read` of a small file beside the floor, start to exit",
        unit: "ms",
        "comparison_name": "the floor: scripts/bench/_floor.ts (start the narrowed tool worker, " +
          "read one file through it, nothing else)",
        target: "<= 1.2x",
        note: `min of ${runs} runs, interleaved; ours is \`deno run\` of main.ts as ` +
          "`deno task cli` runs it (`--workspace DIR tool read '{\"path\": ...}'`), no task runner; " +
          "the floor is `deno run -A` of the script with the project's deno.json",
      },
      r!,
      f!,
      (_, ratio) => ratio === null ? null : ratio <= 1.2,
    ),
  ];
  const breakdown: Breakdown = {
    title: "cold start, process start to exit (ms)",
    unit: "ms",
    rows: [
      { name: "`deno run` of a one-line script", value: round(b!, 1) },
      { name: "`deno run` of an empty script with the project's deno.json", value: round(c!, 1) },
      {
        name: "`main.ts --log-level error --help` (commander and the full CLI's modules)",
        value: round(h!, 1),
      },
      {
        name: "`main.ts tools` (the full CLI, config, the tool worker, no call)",
        value: round(t!, 1),
      },
      {
        name: "scripts/bench/_floor.ts: the tool worker started first, one read, nothing else",
        value: round(f!, 1),
      },
      {
        name: "`main.ts tool read` (no commander; the worker first; config, gate, audit)",
        value: round(r!, 1),
      },
      { name: "`deno task` of a one-line script (the comparison)", value: round(y!, 1) },
      { name: "`deno task cli tool read`", value: round(tr!, 1) },
    ],
    note: "`version`, `-v` and `--help` to a pipe are answered before the CLI loads, and a plain " +
      "`tool` call is parsed without commander (main.ts). The floor is this design's least: a " +
      "process that starts the tool worker (whose isolate creation blocks the starting thread) " +
      "and reads one file through it (the worker loads Node's fs layer for its descriptor " +
      "checks); from the floor to `tool read` is the CLI's own work: its modules, the config, " +
      "the approver, two audit lines. `deno task` adds a second `deno` process to ours and to " +
      "the comparison alike.",
  };
  return [rows, [breakdown]];
}

/** The cold-start rows. */
export const coldStart: Section = {
  group: "cold",
  ids: ["cold_start", "cold_version", "cold_help", "cold_tool_read_floor"],
  run: measure,
};
