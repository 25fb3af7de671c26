/**
 * Entry point: run the CLI and exit with its code. The only caller of `Deno.exit`.
 *
 * @module
 */

import { main } from "./cli/mod.ts";

Deno.exit(await main(Deno.args));
