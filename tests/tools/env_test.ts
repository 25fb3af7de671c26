import { assert, assertEquals } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { scrubEnvironment, SECRET_VARIABLES } from "../../tools/_env.ts";

const PATH = Deno.env.get("PATH") ?? "/usr/bin:/bin";

Deno.test("scrubEnvironment() removes the provider keys", () => {
  assertEquals(
    scrubEnvironment({ ANTHROPIC_API_KEY: "sk-ant", OPENAI_API_KEY: "sk-oai", PATH }),
    { PATH },
  );
  assertEquals([...SECRET_VARIABLES].sort(), ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"]);
});

Deno.test("scrubEnvironment() removes ROUSSEAU_* secrets", () => {
  const secrets = [
    "ROUSSEAU_KEY",
    "ROUSSEAU_API_KEY",
    "ROUSSEAU_ANTHROPIC_API_KEY",
    "ROUSSEAU_TOKEN",
    "ROUSSEAU_GITHUB_TOKEN",
    "ROUSSEAU_SECRET",
    "ROUSSEAU_CLIENT_SECRET",
    "ROUSSEAU_DB_PASSWORD",
    "ROUSSEAU_CREDENTIALS",
  ];
  const env: Record<string, string> = { PATH };
  for (const name of secrets) env[name] = `value of ${name}`;
  assertEquals(scrubEnvironment(env), { PATH });
});

Deno.test("scrubEnvironment() keeps everything else, values untouched", () => {
  const env = {
    PATH,
    HOME: "/home/someone",
    ROUSSEAU_LOG_LEVEL: "debug",
    ROUSSEAU_WORKSPACE: "/work",
    ROUSSEAU_CONFIG: "/etc/rousseau.yaml",
    ROUSSEAU_MODEL: "claude",
    // Not this process's secrets unless configured: the spec names only the above.
    GITHUB_TOKEN: "ghp",
    AWS_SECRET_ACCESS_KEY: "aws",
    MY_ROUSSEAU_API_KEY: "not a ROUSSEAU_ name",
    ANTHROPIC_API_KEY_FILE: "/run/key", // not the exact name
    EMPTY: "",
    ODD: "a=b\nc d\u00e9",
  };
  assertEquals(scrubEnvironment(env), env);
});

Deno.test("scrubEnvironment() removes the names it is given, exactly", () => {
  const env = { PATH, GITHUB_TOKEN: "ghp", NPM_TOKEN: "npm", GITHUB_TOKEN_2: "keep" };
  assertEquals(scrubEnvironment(env, ["GITHUB_TOKEN", "NPM_TOKEN", "NOT_SET"]), {
    PATH,
    GITHUB_TOKEN_2: "keep",
  });
  // The built-in names go even when a list is given.
  assertEquals(scrubEnvironment({ OPENAI_API_KEY: "x", A: "1" }, ["B"]), { A: "1" });
});

Deno.test("scrubEnvironment() returns a new object and leaves its input alone", () => {
  const env = { PATH, OPENAI_API_KEY: "sk" };
  const out = scrubEnvironment(env);
  assert(out !== env);
  assertEquals(env, { PATH, OPENAI_API_KEY: "sk" });
  assertEquals(scrubEnvironment({}), {});
});

Deno.test("a bash child sees the scrubbed environment and nothing else", async () => {
  await using ws = await tmpWorkspace();
  const env = scrubEnvironment({
    PATH,
    ANTHROPIC_API_KEY: "sk-ant",
    OPENAI_API_KEY: "sk-oai",
    ROUSSEAU_API_KEY: "r-key",
    ROUSSEAU_SESSION_TOKEN: "r-token",
    ROUSSEAU_LOG_LEVEL: "debug",
    LISTED: "gone",
    KEPT: "here",
  }, ["LISTED"]);
  const result = await ws.call("bash", { command: "env" }, { env });
  assertEquals(result.isError, false);
  // dash exports PWD itself; everything else is exactly what was passed.
  assertEquals(
    result.output.split("\n").filter((line) => line !== "").sort(),
    [`KEPT=here`, `PATH=${PATH}`, `PWD=${ws.root}`, `ROUSSEAU_LOG_LEVEL=debug`].sort(),
  );
});
