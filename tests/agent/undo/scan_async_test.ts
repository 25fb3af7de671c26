/**
 * scanTreeAsync(): the same mirror as scanTree(), with the event loop given a turn as it
 * goes (issue 27 item 2: a synchronous first scan of a large tree froze chat's spinner for
 * 11 s) and progress reported: the files in the tree once listed, then how far the scan is.
 */

import { join } from "node:path";
import {
  type ScanProgress,
  scanTree,
  scanTreeAsync,
} from "../../../agent/undo/_mirror_fallback.ts";
import { assert, assertEquals } from "../../_helpers/assert.ts";

Deno.test("scanTreeAsync() gives scanTree()'s mirror while timers keep running, and says how far it is", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-scan-async-" }));
  try {
    for (let d = 0; d < 10; d++) {
      await Deno.mkdir(join(root, `d${d}`));
      for (let f = 0; f < 100; f++) {
        await Deno.writeTextFile(join(root, `d${d}`, `f${f}`), `${d} ${f}`);
      }
    }
    const sink = { put: () => true };
    const progress: ScanProgress[] = [];
    let ticks = 0;
    let ticking = true;
    const tick = () => {
      ticks++;
      if (ticking) timer = setTimeout(tick, 0);
    };
    let timer = setTimeout(tick, 0);
    for (const noFind of [false, true]) {
      const now = () => 1_000_000;
      const expected = scanTree({ roots: [root], sink, now, noFind });
      progress.length = 0;
      const before = ticks;
      const mirror = await scanTreeAsync({
        roots: [root],
        sink,
        now,
        noFind,
        sliceMs: 0,
        onProgress: (p) => progress.push(p),
      });
      assertEquals(mirror, expected);
      assert(ticks - before >= 10, `the timer ran ${ticks - before} times during the scan`);
      assertEquals(progress[0], { files: 1000, done: 0, paths: 1010 });
      const dones = progress.map((p) => p.done);
      assertEquals(dones, [...dones].sort((a, b) => a - b));
      assert(progress.length > 10 && dones.at(-1)! > 900, JSON.stringify(dones.slice(-3)));
    }
    ticking = false;
    clearTimeout(timer);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
