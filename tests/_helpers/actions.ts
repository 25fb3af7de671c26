/**
 * Runs the `run:` steps of a GitHub Actions workflow or composite action the way the runner
 * does: `bash --noprofile --norc -eo pipefail` on the step's script, the step's `env` over
 * the job's, `${{ … }}` expressions replaced from a given table (an expression the table
 * lacks fails the test: the test then covers every value the step reads), and `GITHUB_OUTPUT`,
 * `GITHUB_STEP_SUMMARY` and `GITHUB_PATH` as files whose contents come back.
 *
 * @module
 */

import { join } from "node:path";
import { parse } from "yaml";

/** One step as written in the YAML. */
export interface YamlStep {
  readonly id?: string;
  readonly name?: string;
  readonly if?: string;
  readonly uses?: string;
  readonly run?: string;
  readonly shell?: string;
  readonly env?: Record<string, string | number | boolean>;
  readonly with?: Record<string, string | number | boolean>;
}

/** What one step did. */
export interface StepRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** `name=value` lines it appended to `GITHUB_OUTPUT`. */
  readonly outputs: Record<string, string>;
  /** What it appended to `GITHUB_STEP_SUMMARY`. */
  readonly summary: string;
}

/** Reads a workflow or action file. */
export async function readYaml(path: string): Promise<Record<string, unknown>> {
  return parse(await Deno.readTextFile(path)) as Record<string, unknown>;
}

/** `text` with every `${{ expr }}` replaced from `values`; throws on an expression not in it. */
export function render(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(/\$\{\{\s*(.+?)\s*\}\}/g, (_, expression: string) => {
    const value = values[expression];
    if (value === undefined) {
      throw new Error(`the step reads \${{ ${expression} }}, which the test does not provide`);
    }
    return value;
  });
}

/** Parses `GITHUB_OUTPUT` text (plain `name=value` lines and `name<<EOF` blocks). */
export function parseOutputs(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const block = /^([^=]+)<<(.+)$/.exec(line);
    if (block) {
      const body: string[] = [];
      for (i++; i < lines.length && lines[i] !== block[2]; i++) body.push(lines[i]!);
      outputs[block[1]!] = body.join("\n");
      continue;
    }
    const eq = line.indexOf("=");
    if (eq > 0) outputs[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return outputs;
}

/** Runs one `run:` step in `cwd`; `values` answers its expressions, `env` is the job's. */
export async function runStep(
  step: YamlStep,
  options: {
    cwd: string;
    env: Readonly<Record<string, string>>;
    values: Readonly<Record<string, string>>;
    runnerTemp: string;
  },
): Promise<StepRun> {
  if (step.run === undefined) throw new Error(`step ${step.id ?? step.name} is not a run step`);
  if ((step.shell ?? "bash") !== "bash") throw new Error(`step ${step.id} uses ${step.shell}`);
  const dir = await Deno.makeTempDir({ dir: options.runnerTemp, prefix: "step-" });
  const files = {
    GITHUB_OUTPUT: join(dir, "output"),
    GITHUB_STEP_SUMMARY: join(dir, "summary"),
    GITHUB_PATH: join(dir, "path"),
  };
  for (const file of Object.values(files)) await Deno.writeTextFile(file, "");
  const stepEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(step.env ?? {})) {
    stepEnv[name] = render(String(value), options.values);
  }
  const script = join(dir, "script.sh");
  await Deno.writeTextFile(script, render(step.run, options.values));
  const { code, stdout, stderr } = await new Deno.Command("bash", {
    args: ["--noprofile", "--norc", "-eo", "pipefail", script],
    cwd: options.cwd,
    clearEnv: true,
    env: { ...options.env, RUNNER_TEMP: options.runnerTemp, ...files, ...stepEnv },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code,
    stdout: decoder.decode(stdout),
    stderr: decoder.decode(stderr),
    outputs: parseOutputs(await Deno.readTextFile(files.GITHUB_OUTPUT)),
    summary: await Deno.readTextFile(files.GITHUB_STEP_SUMMARY),
  };
}
