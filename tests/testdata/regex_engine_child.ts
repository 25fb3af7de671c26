// deno-lint-ignore-file no-console
/**
 * A child process for tests/tools/grep_redos_test.ts, started with or without grep's V8
 * flags. Argument: a JSON object.
 *
 * - `{"engines": [[pattern, ignoreCase], ...]}`: prints the engine grep picks for each
 *   pattern in this process (`v8` or `re2js`), one a line.
 * - `{"raw": pattern, "input": text}`: runs the V8 translation of `pattern` on `input` with
 *   no safety check at all (no flag probe, no `l` check) and prints whether it matched: the
 *   control showing what the fallback flag prevents.
 */

import { RE2JS, RE2Set } from "re2js";
import { jsMatcher, matcherFor } from "../../tools/_grep_matcher.ts";
import { re2ToJs } from "../../tools/_re2_to_js.ts";

const RE2 = { RE2JS, RE2Set };
const request = JSON.parse(Deno.args[0] ?? "{}");
if (Array.isArray(request.engines)) {
  for (const [pattern, ignoreCase] of request.engines as Array<[string, boolean]>) {
    const flags = RE2JS.MULTILINE | (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
    const re = RE2JS.compile(pattern, flags);
    console.log(matcherFor(RE2, re, pattern, ignoreCase).engine);
  }
} else if (typeof request.raw === "string" && typeof request.input === "string") {
  const sources = re2ToJs(RE2, request.raw, false);
  if (sources === undefined) throw new Error(`no translation of ${request.raw}`);
  console.log(jsMatcher(sources).test(request.input));
} else throw new Error(`bad request: ${Deno.args[0]}`);
