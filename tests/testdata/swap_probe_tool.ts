/**
 * A tool for tests/layers/fd_channel_test.ts: opens `<root>/d/secret` while `d` is a symlink
 * to a directory outside, then puts a directory holding a hard link to that same file in
 * `d`'s place, and asks `proveOpenedSync` about the open descriptor. A path-based check sees
 * an inside path leading to the same inode and passes; only the kernel's record of the open
 * (`/proc/self/fd`, which the worker asks its host for) shows it came from outside.
 */

import { closeSync, constants, openSync } from "node:fs";
import { defineTool } from "../../mod.ts";
import { proveOpenedSync } from "../../tools/_workspace.ts";

export default defineTool<{ root: string }>({
  name: "swap_probe",
  description: "test probe",
  inputSchema: { type: "object", properties: { root: { type: "string" } } },
  readOnly: true,
  parseInput: (raw) => raw as { root: string },
  execute({ root }, context) {
    const path = `${root}/d/secret`;
    const fd = openSync(path, constants.O_RDONLY);
    try {
      Deno.renameSync(`${root}/d`, `${root}/old_link`);
      Deno.renameSync(`${root}/hardlinked`, `${root}/d`);
      proveOpenedSync("swap_probe", path, fd, path, context.workspace);
      return Promise.resolve("proved inside");
    } finally {
      closeSync(fd);
    }
  },
});
