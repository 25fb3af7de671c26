/**
 * A tool for tests/layers/prefilter_lane_test.ts: a custom module that asks its host for
 * grep's prefilter worker, as only the built-in grep may (the host starts that worker with
 * read on the workspace, and a custom module must not get a thread it did not start).
 */

import { defineTool } from "../../mod.ts";

export default defineTool<Record<string, never>>({
  name: "prefilter_asker",
  description: "test probe",
  inputSchema: { type: "object", properties: {} },
  readOnly: true,
  parseInput: () => ({}),
  execute() {
    (self as unknown as { postMessage(message: unknown): void }).postMessage({
      type: "want-prefilter",
    });
    return Promise.resolve("asked");
  },
});
