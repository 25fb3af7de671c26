/**
 * The peer pi (`@mariozechner/pi-coding-agent`, {@linkcode PI_VERSION}) as the peer rows drive
 * it: installed once with npm into the bench's cache dir, given a private home whose only model
 * is the bench's loopback one, and timed per call as peer_calls.ts times `rousseau run`, from one
 * request the model receives to the next.
 *
 * @module
 */

import { join } from "node:path";
import { startFakeAnthropic } from "../../tests/_helpers/fake_providers.ts";
import { endSeries, stampedLines, timedScript } from "./_common.ts";
import { log } from "./table.ts";

export const PI_PACKAGE = "@mariozechner/pi-coding-agent";
export const PI_VERSION = "0.73.1";
/** npm's run of one install, at most (a registry that does not answer ends it). */
const INSTALL_TIMEOUT_MS = 300_000;

/** The tools a series calls; pi has them under the same names. */
export type PiTool = "read" | "edit" | "write" | "bash" | "grep";

/** The project a series runs in: the one rousseau's series use, with our tools' inputs. */
export interface PiProject {
  readonly root: string;
  /** Our `i`th call's input (0-based); {@linkcode piInput} gives pi's. */
  input(tool: PiTool, i: number): Record<string, string>;
  /** Puts the files back before a series. */
  reset(): Promise<void>;
}

/** An installed pi and the private home it runs with. */
export interface Pi {
  /** `node_modules/.bin/pi` of the install (a node script: the machine's Node.js runs it). */
  readonly bin: string;
  /** `PI_CODING_AGENT_DIR`: where each series writes `models.json`. */
  readonly agentDir: string;
  /** The environment of pi's processes: ours, with `HOME` and the agent dir private. */
  readonly env: Record<string, string>;
}

/**
 * pi installed into `<cache>/peers/pi-<version>` (npm, once: a `<dir>.ok` file marks a complete
 * install), with a private home made at `home` (removed by whoever owns it). Throws, saying
 * why, when npm is missing, the registry does not answer or the install is incomplete.
 */
export async function preparePi(cache: string, home: string): Promise<Pi> {
  const dir = join(cache, "peers", `pi-${PI_VERSION}`);
  const bin = join(dir, "node_modules", ".bin", "pi");
  const marker = `${dir}.ok`;
  const ready = await Deno.stat(marker).then(() => Deno.stat(bin)).then(() => true, () => false);
  if (!ready) await install(dir, bin, marker);
  const agentDir = join(home, "agent");
  await Deno.mkdir(agentDir, { recursive: true });
  const { INIT_CWD: _, ...env } = Deno.env.toObject();
  return { bin, agentDir, env: { ...env, HOME: home, PI_CODING_AGENT_DIR: agentDir } };
}

async function install(dir: string, bin: string, marker: string): Promise<void> {
  await Deno.remove(marker).catch(() => {});
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  log(`bench: installing ${PI_PACKAGE}@${PI_VERSION} into ${dir} (npm)`);
  const started = performance.now();
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command("npm", {
      args: ["install", "--prefix", dir, "--no-audit", "--no-fund", `${PI_PACKAGE}@${PI_VERSION}`],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(INSTALL_TIMEOUT_MS),
    }).output();
  } catch (error) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw new Error(
      error instanceof Deno.errors.NotFound
        ? "npm not found (pi is installed with npm)"
        : `npm install ${PI_PACKAGE}@${PI_VERSION}: ${error}`,
    );
  }
  const installed = out.success && await Deno.stat(bin).then(() => true, () => false);
  if (!installed) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    // npm's first error lines say what failed (`code ECONNREFUSED`, the request); the last, where
    // its log is.
    const said = new TextDecoder().decode(out.stderr).split("\n")
      .map((line) => line.replace(/^npm (?:error|ERR!)\s*/, "").trim())
      .filter((line) => line !== "" && !line.startsWith("npm warn")).slice(0, 4).join("; ");
    const how = out.success
      ? `left no ${bin}`
      : out.signal === null
      ? `exited ${out.code}`
      : `was ended (${out.signal})`;
    throw new Error(
      `npm install ${PI_PACKAGE}@${PI_VERSION} ${how}: ${said.slice(0, 300) || "no message"}`,
    );
  }
  await Deno.writeTextFile(marker, `${PI_PACKAGE}@${PI_VERSION}\n`);
  log(`bench: installed pi in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * pi's input for our input `ours` of `tool`: edit takes `{path, edits: [{oldText, newText}]}`;
 * read `{path}`, write `{path, content}`, bash `{command}` and grep `{pattern, path}` are ours.
 */
export function piInput(tool: PiTool, ours: Record<string, string>): Record<string, unknown> {
  if (tool !== "edit") return ours;
  return { path: ours.path, edits: [{ oldText: ours.old_string, newText: ours.new_string }] };
}

/**
 * One `pi -p --mode json` whose loopback model (the Anthropic wire format) asks for `n` calls of
 * `tool` in `project` (reset first), then answers; resolves to each call's ms as the model sees
 * it, from one request it receives to the next. Throws when a call's result is an error, when pi
 * fails or when it makes other than `n` calls; pi is ended and reaped before the error goes on.
 */
export async function piSeries(
  pi: Pi,
  project: PiProject,
  tool: PiTool,
  n: number,
): Promise<number[]> {
  await project.reset();
  const script = timedScript(tool, n, (i) => piInput(tool, project.input(tool, i)));
  await using server = startFakeAnthropic(script.steps);
  await Deno.writeTextFile(
    join(pi.agentDir, "models.json"),
    JSON.stringify({
      providers: {
        loop: {
          baseUrl: server.url,
          api: "anthropic-messages",
          apiKey: "bench",
          models: [{ id: "claude-fake" }],
        },
      },
    }),
  );
  const child = new Deno.Command(pi.bin, {
    args: [
      ..."-p --provider loop --model claude-fake --no-session --offline".split(" "),
      ..."--tools read,bash,edit,write,grep --mode json go".split(" "),
    ],
    cwd: project.root,
    env: pi.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  let results = 0;
  try {
    for await (const { line } of stampedLines(child.stdout)) {
      // Only the results are parsed: the other events (streamed message parts) are most lines.
      if (!line.startsWith('{"type":"tool_execution_end"')) continue;
      const event = JSON.parse(line) as {
        isError?: boolean;
        result?: { content?: Array<{ text?: string }> };
      };
      if (event.isError !== false) {
        const said = event.result?.content?.map((c) => c.text ?? "").join(" ") ?? line;
        throw new Error(`pi's ${tool} call failed: ${said.slice(0, 300)}`);
      }
      results++;
    }
  } catch (error) {
    await endSeries(child, stderr);
    throw error;
  }
  const status = await child.status;
  if (status.code !== 0 || script.requests() !== n + 1 || results !== n) {
    throw new Error(
      `pi exited ${status.code} after ${script.requests()} model requests and ${results} tool ` +
        `results: ${(await stderr).slice(0, 400)}`,
    );
  }
  return script.gaps();
}
