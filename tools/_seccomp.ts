/**
 * The seccomp filter bwrap loads before it starts the command: the kernel keyring calls
 * (`add_key`, `request_key`, `keyctl`) fail with EPERM, for every ABI the host's CPU can run.
 *
 * Why: a process possesses the session keyring it inherits, whatever its uid, and may read
 * the keys in it that grant their possessor reading (the default): Kerberos tickets, fscrypt
 * and ecryptfs keys, tokens a login stored there. No namespace bwrap makes separates
 * keyrings, so the calls themselves are refused — as Docker's default seccomp profile does.
 *
 * The data below is the knowledge (which calls, their numbers per ABI); the rest writes the
 * classic-BPF program in the layout `seccomp_export_bpf` produces and bwrap's `--seccomp`
 * reads: `struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }`, little-endian.
 *
 * @module
 */

/** The calls refused, per ABI: `AUDIT_ARCH_*` value and the calls' numbers on it. */
const REFUSED: Readonly<Record<string, readonly { arch: number; calls: readonly number[] }[]>> = {
  "x86_64": [
    // x86_64 (add_key 248, request_key 249, keyctl 250), and the same calls through the
    // x32 ABI, which shares the audit arch and sets bit 30 of the number.
    {
      arch: 0xc000003e,
      calls: [248, 249, 250, 0x40000000 + 248, 0x40000000 + 249, 0x40000000 + 250],
    },
    // i386 (int 0x80 from a 32-bit binary).
    { arch: 0x40000003, calls: [286, 287, 288] },
  ],
  aarch64: [
    { arch: 0xc00000b7, calls: [217, 218, 219] },
    // 32-bit ARM (EABI).
    { arch: 0x40000028, calls: [309, 310, 311] },
  ],
};

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const RET_K = 0x06;
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const RET_ALLOW = 0x7fff0000;
const RET_EPERM = 0x00050000 | 1;

interface Instruction {
  readonly code: number;
  readonly k: number;
  /** Where a match jumps: the refusal, or past this ABI's checks. */
  readonly onMatch?: "refuse";
  readonly onMiss?: "nextArch";
}

/**
 * The filter for the CPU `arch` (`Deno.build.arch`), or undefined when this table does not
 * know it (then no filter is loaded, and `doctor` says so).
 */
export function keyringFilter(arch: string = Deno.build.arch): Uint8Array | undefined {
  const abis = REFUSED[arch];
  if (abis === undefined) return undefined;
  const program: Instruction[] = [{ code: LD_W_ABS, k: OFFSET_ARCH }];
  const sectionEnds: number[] = [];
  for (const abi of abis) {
    program.push({ code: JEQ_K, k: abi.arch, onMiss: "nextArch" });
    program.push({ code: LD_W_ABS, k: OFFSET_NR });
    for (const call of abi.calls) program.push({ code: JEQ_K, k: call, onMatch: "refuse" });
    program.push({ code: RET_K, k: RET_ALLOW });
    sectionEnds.push(program.length);
  }
  program.push({ code: RET_K, k: RET_ALLOW }); // an ABI not listed: nothing to refuse
  const refuse = program.length;
  program.push({ code: RET_K, k: RET_EPERM });

  const bytes = new Uint8Array(program.length * 8);
  const view = new DataView(bytes.buffer);
  let section = 0;
  program.forEach((op, i) => {
    let jt = 0;
    let jf = 0;
    if (op.onMatch === "refuse") jt = refuse - (i + 1);
    if (op.onMiss === "nextArch") jf = sectionEnds[section++]! - (i + 1);
    if (jt > 255 || jf > 255) throw new Error("seccomp filter: a jump is too long");
    view.setUint16(i * 8, op.code, true);
    view.setUint8(i * 8 + 2, jt);
    view.setUint8(i * 8 + 3, jf);
    view.setUint32(i * 8 + 4, op.k >>> 0, true);
  });
  return bytes;
}
