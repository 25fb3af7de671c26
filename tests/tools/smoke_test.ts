import { assertEquals } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";

Deno.test("read() returns a file's contents exactly", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "hi\r\nthere" } });
  assertEquals(await ws.call("read", { path: ws.path("a.txt") }), {
    output: "hi\r\nthere",
    isError: false,
  });
});
