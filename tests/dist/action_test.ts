/**
 * The composite action (action.yml) run as the runner runs it: its `policy`, `run` and
 * `verify` steps, read from action.yml, with their `env` mapping rendered from the inputs, in
 * bash with `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY` and `RUNNER_TEMP`, against a loopback
 * model; `rousseau` on the PATH is the checkout's CLI run as `deno task cli` runs it. The
 * install steps (npm from the registry, actions/cache) and the upload (actions/upload-artifact)
 * are not run here: tests/dist/npm_package_test.ts covers the package they install, and this
 * test checks the files the upload step is given.
 *
 * @module
 */

import { join } from "node:path";
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import { readYaml, render, runStep, type StepRun, type YamlStep } from "../_helpers/actions.ts";
import { CLI_ARGS, REPO } from "../_helpers/cli.ts";
import { type FakeServer, startFakeAnthropic, type Step } from "../_helpers/fake_providers.ts";

const SECRET = "sk-ant-test-0123456789-never-in-bash";

const POLICY = `agent:
  approver:
    mode: pattern
    default: deny
    allow:
      - { tool: read }
      - { tool: grep }
      - tool: bash
        command: "^env$"
        examples: [{ command: "env" }]
        not_examples: [{ command: "env; rm -rf ~" }]
`;

interface Action {
  inputs: Record<string, { default?: string; required?: boolean }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: YamlStep[] };
}

/** The action's steps this test runs, in order, and the action itself. */
async function actionSteps(): Promise<{ action: Action; steps: YamlStep[] }> {
  const action = await readYaml(join(REPO, "action.yml")) as unknown as Action;
  assertEquals(action.runs.using, "composite");
  const steps = action.runs.steps.filter((step) =>
    ["policy", "run", "verify"].includes(step.id ?? "")
  );
  assertEquals(steps.map((step) => step.id), ["policy", "run", "verify"]);
  return { action, steps };
}

interface ActionRun {
  readonly steps: Record<string, StepRun>;
  /** The action's outputs, rendered from its `outputs:` mapping. */
  readonly outputs: Record<string, string>;
  readonly runnerTemp: string;
  readonly fake: FakeServer;
}

/** Runs the action's steps with `inputs` in a fresh repository against `model`. */
async function runAction(
  base: string,
  inputs: Record<string, string>,
  model: Step[],
): Promise<ActionRun> {
  const { action, steps } = await actionSteps();
  const repo = await Deno.makeTempDir({ dir: base, prefix: "repo-" });
  const runnerTemp = await Deno.makeTempDir({ dir: base, prefix: "runner-temp-" });
  const home = await Deno.makeTempDir({ dir: base, prefix: "home-" });
  const bin = await Deno.makeTempDir({ dir: base, prefix: "bin-" });
  await Deno.mkdir(join(repo, ".github"));
  await Deno.writeTextFile(join(repo, ".github", "rousseau.yaml"), POLICY);
  await Deno.writeTextFile(join(repo, "task.md"), "say hello\n");
  // A warning only (command on a tool other than bash): plain policy test passes, --strict fails.
  await Deno.writeTextFile(
    join(repo, ".github", "loose.yaml"),
    POLICY.replace("- { tool: grep }", '- { tool: grep, command: "^x" }'),
  );
  const quoted = [Deno.execPath(), ...CLI_ARGS].map((arg) => `'${arg}'`).join(" ");
  await Deno.writeTextFile(join(bin, "rousseau"), `#!/bin/sh\nexec ${quoted} "$@"\n`);
  await Deno.chmod(join(bin, "rousseau"), 0o755);
  const denoDir = JSON.parse(
    new TextDecoder().decode(
      (await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).output()).stdout,
    ),
  ).denoDir;

  const fake = startFakeAnthropic(model);
  const values: Record<string, string> = { "github.action_path": REPO.replace(/\/$/, "") };
  for (const [name, input] of Object.entries(action.inputs)) {
    values[`inputs.${name}`] = inputs[name] ?? input.default ?? "";
  }
  for (const name of Object.keys(inputs)) {
    assert(action.inputs[name] !== undefined, `action.yml has no input ${name}`);
  }
  values["inputs.base-url"] = fake.url;
  const env = {
    PATH: `${bin}:${Deno.env.get("PATH") ?? ""}`,
    HOME: home,
    NO_COLOR: "1",
    DENO_DIR: denoDir,
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_DATA_HOME: join(home, "data"),
    // As the calling workflow's `env:` sets it from a secret.
    ANTHROPIC_API_KEY: SECRET,
  };
  const ran: Record<string, StepRun> = {};
  for (const step of steps) {
    if (step.id === "verify") {
      assertEquals(step.if, "always() && steps.policy.outcome == 'success'");
      if (ran.policy?.code !== 0) continue;
    } else {
      assertEquals(step.if, undefined);
      if (Object.values(ran).some((done) => done.code !== 0)) continue;
    }
    ran[step.id!] = await runStep(step, { cwd: repo, env, values, runnerTemp });
  }
  const stepValues: Record<string, string> = {};
  for (const [id, done] of Object.entries(ran)) {
    for (const [name, value] of Object.entries(done.outputs)) {
      stepValues[`steps.${id}.outputs.${name}`] = value;
    }
  }
  const outputs: Record<string, string> = {};
  for (const [name, output] of Object.entries(action.outputs)) {
    outputs[name] = render(
      output.value,
      new Proxy(stepValues, { get: (t, k) => t[k as string] ?? "" }),
    );
  }
  return { steps: ran, outputs, runnerTemp, fake };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/** Checks what every finished run leaves: outputs, result object, artifact files, summary. */
async function checkArtifacts(run: ActionRun, code: number, subtype: string): Promise<unknown> {
  const step = run.steps.run!;
  assertEquals(step.code, code, step.stderr);
  assertEquals(run.outputs["exit-code"], String(code));
  const artifact = join(run.runnerTemp, "rousseau", "artifact");
  assertEquals(run.outputs.result, join(artifact, "result.json"));
  assertEquals(step.outputs["artifact-dir"], artifact);
  const result = JSON.parse(await Deno.readTextFile(run.outputs.result!));
  assertEquals(result.subtype, subtype);
  assertEquals(run.outputs["session-id"], result.session_id);
  assert(result.session_id.length > 0);
  assertStringIncludes(step.summary, `| ${code} | ${subtype} |`);
  const verify = run.steps.verify!;
  assertEquals(verify.code, 0, verify.stderr + verify.stdout);
  const report = JSON.parse(await Deno.readTextFile(join(artifact, "audit-verify.json")));
  assertEquals(report.intact, true);
  assertEquals(run.outputs["audit-head"], report.head);
  for (const file of ["result.json", "stderr.log", "audit-verify.json"]) {
    assert(await exists(join(artifact, file)), `the artifact lacks ${file}`);
  }
  return result;
}

Deno.test("action.yml: policy test, run, audit verify, outputs and artifact, for exits 0, 4 and 5", async (t) => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-action-" }));
  try {
    await t.step("a passing run exits 0, and the key never reaches bash", async () => {
      const run = await runAction(base, {
        prompt: "print the environment",
        policy: ".github/rousseau.yaml",
        provider: "anthropic",
        model: "claude-test",
        "max-iterations": "4",
      }, [{ tools: [{ name: "bash", input: { command: "env" } }] }, { text: "done" }]);
      await using _ = run.fake;
      assertEquals(run.steps.policy?.code, 0, run.steps.policy?.stderr);
      const result = await checkArtifacts(run, 0, "success") as { result: string };
      assertEquals(result.result, "done");
      const toolResult = JSON.stringify(run.fake.requests[1]?.body.messages.at(-1));
      assertStringIncludes(toolResult, "HOME=");
      assert(!toolResult.includes(SECRET), "bash saw the API key");
      const artifact = join(run.runnerTemp, "rousseau", "artifact");
      for (const file of ["audit.jsonl", "audit.jsonl.head"]) {
        assert(await exists(join(artifact, file)), `the artifact lacks ${file}`);
      }
    });

    await t.step("a denied call exits 4 and is still audited and uploaded", async () => {
      const run = await runAction(base, {
        "prompt-file": "task.md",
        policy: ".github/rousseau.yaml",
      }, [{ tools: [{ name: "bash", input: { command: "curl https://example.com" } }] }, {
        text: "could not",
      }]);
      await using _ = run.fake;
      const result = await checkArtifacts(run, 4, "success") as { denials: unknown[] };
      assertEquals(result.denials.length, 1);
      assert(await exists(join(run.runnerTemp, "rousseau", "artifact", "audit.jsonl")));
    });

    await t.step("denials-ok: true turns that 4 into 0", async () => {
      const run = await runAction(base, {
        prompt: "try",
        policy: ".github/rousseau.yaml",
        "denials-ok": "true",
      }, [{ tools: [{ name: "bash", input: { command: "curl https://example.com" } }] }, {
        text: "could not",
      }]);
      await using _ = run.fake;
      await checkArtifacts(run, 0, "success");
    });

    await t.step("the deadline exits 5", async () => {
      const run = await runAction(base, {
        prompt: "wait",
        policy: ".github/rousseau.yaml",
        deadline: "2s",
      }, [{ hang: true }]);
      await using _ = run.fake;
      await checkArtifacts(run, 5, "error_deadline");
    });

    for (
      const [policy, code, text] of [
        [".github/loose.yaml", 1, "command"],
        [".github/missing.yaml", 2, "policy file .github/missing.yaml does not exist"],
      ] as const
    ) {
      await t.step(
        `policy ${policy} fails the policy step (exit ${code}) before any run`,
        async () => {
          const run = await runAction(base, { prompt: "anything", policy }, []);
          await using _ = run.fake;
          assertEquals(run.steps.policy?.code, code, run.steps.policy?.stderr);
          assertStringIncludes(run.steps.policy!.stdout + run.steps.policy!.stderr, text);
          assertEquals([run.steps.run, run.steps.verify, run.fake.requests.length], [
            undefined,
            undefined,
            0,
          ]);
        },
      );
    }
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
