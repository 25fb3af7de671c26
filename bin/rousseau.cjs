#!/usr/bin/env node
// The npm package's `rousseau` command: runs main.ts on the `deno` npm package's runtime with
// the permission set `deno task cli` uses (`-P=cli --no-prompt`, from the shipped deno.json),
// from the Deno cache filled when the package was packed (`--cached-only`: nothing is fetched).
//
// Node cannot exec (replace itself with deno) on the Node versions npm users have, so this
// spawns deno with inherited stdio and mirrors it: SIGINT, SIGTERM and SIGHUP sent to this
// process are passed on, and deno's exit passes back unchanged: its exit code, or its death
// by a signal, which this process then dies of too. A Ctrl+C at a terminal reaches both
// processes (one process group), so deno may see SIGINT twice; rousseau acts on the first.
"use strict";

const childProcess = require("node:child_process");
const path = require("node:path");

const PACKAGE_ROOT = path.join(__dirname, "..");
const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP"];

/** The deno arguments that run the CLI with `argv`, as `deno task cli` does, offline. */
function denoArgs(root, argv) {
  return [
    "run",
    "--quiet",
    "--cached-only",
    "--frozen",
    "--config",
    path.join(root, "deno.json"),
    "-P=cli",
    "--no-prompt",
    // grep's regular expressions fall back to V8's linear-time engine (tools/_grep_matcher.ts).
    "--v8-flags=--enable-experimental-regexp-engine,--enable-experimental-regexp-engine-on-excessive-backtracks",
    path.join(root, "main.ts"),
    ...argv,
  ];
}

/**
 * The environment deno gets: the package's cache as DENO_DIR, the registry it was filled
 * from, no update check, and in
 * ROUSSEAU_NPM_ENV what those variables were, which main.ts puts back so that the programs
 * bash starts see the caller's own values.
 */
function denoEnv(root, env) {
  const set = {
    DENO_DIR: path.join(root, "deno_dir"),
    DENO_NO_UPDATE_CHECK: "1",
    // Deno files npm packages under the registry's host: the cache holds registry.npmjs.org.
    NPM_CONFIG_REGISTRY: "https://registry.npmjs.org/",
  };
  const before = {};
  for (const name of Object.keys(set)) before[name] = env[name] ?? null;
  return { ...env, ...set, ROUSSEAU_NPM_ENV: JSON.stringify(before) };
}

/** The deno executable of the `deno` npm dependency (its postinstall may not have run). */
function denoExecutable() {
  const denoPackage = path.dirname(require.resolve("deno/package.json", { paths: [PACKAGE_ROOT] }));
  return require(path.join(denoPackage, "install_api.cjs")).runInstall();
}

function main() {
  let exe;
  try {
    exe = denoExecutable();
  } catch (error) {
    process.stderr.write(`rousseau: cannot find the deno runtime: ${error.message}\n`);
    process.exit(1);
  }
  const child = childProcess.spawn(exe, denoArgs(PACKAGE_ROOT, process.argv.slice(2)), {
    stdio: "inherit",
    env: denoEnv(PACKAGE_ROOT, process.env),
  });
  const listeners = FORWARDED.map((signal) => {
    const listener = () => {
      try {
        child.kill(signal);
      } catch {
        // already gone: its exit is on the way
      }
    };
    process.on(signal, listener);
    return [signal, listener];
  });
  child.on("error", (error) => {
    process.stderr.write(`rousseau: cannot start deno: ${error.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    for (const [name, listener] of listeners) process.removeListener(name, listener);
    if (signal !== null) {
      // Die of the same signal, so our parent sees what it would have seen from deno.
      // A signal Node ignores (SIGPIPE) kills nothing: then exit as a shell reports it.
      process.kill(process.pid, signal);
      process.exit(128 + (require("node:os").constants.signals[signal] ?? 0));
    }
    process.exit(code ?? 1);
  });
}

if (require.main === module) main();

module.exports = { denoArgs, denoEnv };
