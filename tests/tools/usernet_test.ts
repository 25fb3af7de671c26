/**
 * Promise: in its own network namespace the command is told a resolver it can reach. A
 * nameserver on the host's loopback (systemd-resolved's 127.0.0.53, a local dnsmasq on
 * 127.0.0.1 or ::1, or none at all, which the C library reads as 127.0.0.1) would be the
 * namespace's own loopback there: such a file is replaced by slirp4netns's 10.0.2.3 (the
 * host's other lines kept); a file whose first nameserver lies beyond the host is kept as is.
 * The end-to-end run is in tests/layers/sandbox_network_test.ts.
 *
 * @module
 */

import { assertEquals } from "../_helpers/assert.ts";
import { isLoopback, resolverText } from "../../tools/_usernet.ts";

Deno.test("usernet: a resolver on the host's loopback is replaced by slirp4netns's", () => {
  assertEquals(
    resolverText("# systemd-resolved\nnameserver 127.0.0.53\noptions edns0 trust-ad\nsearch lan\n"),
    "nameserver 10.0.2.3\n# systemd-resolved\noptions edns0 trust-ad\nsearch lan\n",
  );
  assertEquals(resolverText("nameserver ::1\n"), "nameserver 10.0.2.3\n");
  assertEquals(resolverText("search lan\n"), "nameserver 10.0.2.3\nsearch lan\n");
  assertEquals(resolverText(""), "nameserver 10.0.2.3\n");
});

Deno.test("usernet: a resolver beyond the host is kept as it is", () => {
  assertEquals(resolverText("nameserver 10.255.255.53\n"), undefined);
  assertEquals(resolverText("nameserver 192.0.2.1\nnameserver 127.0.0.1\n"), undefined);
  assertEquals(resolverText("nameserver 2001:db8::53\n"), undefined);
});

Deno.test("usernet: loopback addresses in each spelling are loopback", () => {
  for (
    const address of [
      "127.0.0.1",
      "127.0.0.53",
      "127.1.2.3",
      "::1",
      "0:0:0:0:0:0:0:1",
      "::ffff:127.0.0.1",
      "::1%lo",
    ]
  ) {
    assertEquals(isLoopback(address), true, address);
  }
  for (
    const address of ["10.0.2.3", "192.0.2.1", "::", "2001:db8::1", "fe80::1", "::ffff:10.0.0.1"]
  ) {
    assertEquals(isLoopback(address), false, address);
  }
});
