/**
 * Promise (issue 26, item 2): a unix socket bound after rousseau started — a daemon started
 * later, an agent forwarded into a long session — is out of reach of sandboxed bash, like
 * those bound before. Driven through a live `rousseau mcp` (one process, many calls): the
 * socket is bound between two calls, world-writable (so neither the uid nor the mode keeps
 * the shell out: only the sandbox's cover does).
 *
 * Public source: HamedMP/matrix-os#895 (a sandboxed Claude Code bash reached
 * /var/run/docker.sock and escaped through the Docker daemon); sockets appear at any time.
 *
 * @module
 */

import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { CLI_ARGS, REPO, TEST_HOME } from "../_helpers/cli.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { has } from "./_sandboxed.ts";

const bwrap = new Deno.Command("sh", { args: ["-c", "command -v bwrap"] }).outputSync().success;

async function bash(client: Client, command: string): Promise<string> {
  const result = await client.callTool({ name: "bash", arguments: { command } });
  return (result.content as { text: string }[]).map((c) => c.text).join("");
}

/** The environment of the `rousseau mcp` these tests start: test config and state, our DENO_DIR. */
function serverEnv(): Record<string, string> {
  const env: Record<string, string> = {
    NO_COLOR: "1",
    XDG_CONFIG_HOME: `${TEST_HOME}/config`,
    XDG_DATA_HOME: `${TEST_HOME}/data`,
  };
  const denoDir = Deno.env.get("DENO_DIR");
  if (denoDir !== undefined) env.DENO_DIR = denoDir;
  return env;
}

Deno.test({
  name: "sockets: one bound after rousseau started is covered for the next bash call",
  ignore: !bwrap || !has("perl"),
  async fn() {
    await using ws = await tmpWorkspace({ files: {} });
    const dir = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "rousseau-late-sock-" });
    await Deno.chmod(dir, 0o755);
    const path = join(dir, "late.sock");
    const env = serverEnv();
    const transport = new StdioClientTransport({
      command: Deno.execPath(),
      args: [...CLI_ARGS, "--workspace", ws.root, "--allow", "bash", "mcp"],
      env,
      cwd: REPO,
      stderr: "pipe",
    });
    const client = new Client({ name: "late-socket-test", version: "1.0.0" });
    let listener: Deno.UnixListener | undefined;
    let accepted = 0;
    let loop: Promise<void> | undefined;
    try {
      await client.connect(transport);
      assertEquals(await bash(client, "echo warm"), "warm\n");
      listener = Deno.listen({ transport: "unix", path });
      await Deno.chmod(path, 0o666);
      const l = listener;
      loop = (async () => {
        for await (const conn of l) {
          accepted++;
          conn.close();
        }
      })();
      const connect = `perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer=>$ARGV[0]) and ` +
        `print "CONNECTED\\n"' '${path}'; [ -S '${path}' ] && echo socket-visible; echo end`;
      const out = await bash(client, connect);
      assert(out.endsWith("end\n"), out);
      assertEquals(out.includes("CONNECTED"), false, out);
      assertEquals(out.includes("socket-visible"), false, out);
      assertEquals(accepted, 0);
    } finally {
      await client.close();
      listener?.close();
      await loop?.catch(() => {});
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "sockets: one gone after rousseau started fails no later bash call, and is covered again once back",
  ignore: !bwrap || !has("perl"),
  async fn() {
    // A socket bound when rousseau starts is hidden for good; its server going away (and
    // removing its directory) left a cover bwrap could not make, and every later call failed
    // its set-up with a bare `bash: exit status 1` (seen under load, where tests bind and
    // remove sockets all the time).
    await using ws = await tmpWorkspace({ files: {} });
    const dir = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "rousseau-gone-sock-" });
    await Deno.chmod(dir, 0o755);
    const path = join(dir, "gone.sock");
    const env = serverEnv();
    const serve = (): [Deno.UnixListener, Promise<void>] => {
      const listener = Deno.listen({ transport: "unix", path });
      return [
        listener,
        (async () => {
          for await (const conn of listener) conn.close();
        })(),
      ];
    };
    let [listener, loop] = serve();
    await Deno.chmod(path, 0o666);
    const transport = new StdioClientTransport({
      command: Deno.execPath(),
      args: [...CLI_ARGS, "--workspace", ws.root, "--allow", "bash", "mcp"],
      env,
      cwd: REPO,
      stderr: "pipe",
    });
    const client = new Client({ name: "gone-socket-test", version: "1.0.0" });
    try {
      await client.connect(transport);
      const look = `[ -S '${path}' ] && echo socket-visible; echo end`;
      assertEquals(await bash(client, look), "end\n");
      // The server goes, and its directory with it.
      listener.close();
      await loop.catch(() => {});
      await Deno.remove(dir, { recursive: true });
      assertEquals(await bash(client, "echo still runs"), "still runs\n");
      // Only the socket gone, its directory back: still nothing to cover, and no failure.
      await Deno.mkdir(dir, { mode: 0o755 });
      assertEquals(await bash(client, "echo runs again"), "runs again\n");
      // Back again: covered again.
      [listener, loop] = serve();
      await Deno.chmod(path, 0o666);
      assertEquals(await bash(client, look), "end\n");
    } finally {
      await client.close();
      try {
        listener.close();
      } catch {
        // closed already
      }
      await loop.catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
