/**
 * Unsandboxed bash's reaper: a cgroup (v2) per running call, which the command's shell joins
 * before it runs anything, so every process the command starts is a member — whatever it does
 * to its session, process group or parent (`setsid`, double forks, `nohup`) — and
 * `cgroup.kill` ends all of them at once. The cgroups are children of the one this process
 * runs in (so the limits it runs under still apply to the command), under
 * `rousseau-bash.<pid>.<random>/<slot>` (the random part: processes in other PID namespaces may
 * share the cgroup tree and the pid); a slot is reused once its cgroup is empty, so a call costs no
 * `mkdir`, and finding the cgroup empty after the shell exits is one read of an empty file:
 * no scan of `/proc`.
 *
 * Needs cgroup v2 with `cgroup.kill` (Linux 5.14) and write access to this process's cgroup:
 * root, or a delegated subtree. Where that is missing (a read-only cgroupfs in a container, no
 * v2 mount, an older kernel) `findReaper` resolves to undefined and bash falls back to its
 * `/proc` scan. Everything runs through `/bin/sh`, the tool worker's only run grant: the worker
 * itself may neither read the cgroup tree nor signal processes.
 *
 * A member that moves itself to another cgroup (as root, unsandboxed, it can) leaves the
 * reaper's reach, as a process that leaves the session and outlives its parent leaves the
 * scan's: only the sandbox closes that.
 *
 * @module
 */

const SHELL = "/bin/sh";

/**
 * Finds this process's cgroup in the v2 hierarchy, sweeps the empty reapers of rousseau
 * processes that are gone (a sweep from another PID namespace may take ours while it is idle:
 * a call makes its slot again), makes ours (`$1`, `<pid>.<random>`) and proves a shell can join a slot in it and that
 * `cgroup.kill` is there. Prints the reaper's directory, or nothing.
 */
const PROBE = `
own=
while IFS= read -r line; do
  case $line in 0::/*) own=\${line#0::} ;; esac
done < /proc/self/cgroup
[ -n "$own" ] || exit 1
mnt=
while read -r _ _ _ root point rest; do
  case $rest in *" - cgroup2 "*) ;; *) continue ;; esac
  if [ "$root" != / ]; then
    case $own in "$root"|"$root"/*) own=\${own#"$root"} ;; *) continue ;; esac
  fi
  mnt=$point
  break
done < /proc/self/mountinfo
[ -n "$mnt" ] || exit 1
case $mnt in *\\\\*) exit 1 ;; esac
base=$mnt\${own%/}
for d in "$base"/rousseau-bash.*; do
  [ -d "$d" ] || continue
  p=\${d##*/rousseau-bash.}
  p=\${p%%.*}
  [ -d "/proc/$p" ] && continue
  for s in "$d"/*; do [ -f "$s/cgroup.procs" ] && rmdir "$s"; done
  rmdir "$d"
done 2>/dev/null
dir=$base/rousseau-bash.$1
{ [ -d "$dir/0" ] || mkdir -p "$dir/0"; } 2>/dev/null || exit 1
[ -f "$dir/0/cgroup.kill" ] || exit 1
(echo $$ > "$dir/0/cgroup.procs") 2>/dev/null || exit 1
printf '%s' "$dir"`;

let found: Promise<string | undefined> | undefined;

/** The reaper's directory (made once per process), or undefined where there can be none. */
export function findReaper(): Promise<string | undefined> {
  found ??= new Deno.Command(SHELL, {
    args: ["-c", PROBE, SHELL, `${Deno.pid}.${crypto.randomUUID().slice(0, 8)}`],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin:/usr/sbin:/sbin" },
  }).output().then((out) => {
    const dir = new TextDecoder().decode(out.stdout);
    if (!out.success || !dir.startsWith("/")) return undefined;
    globalThis.addEventListener("unload", () => removeReaper(dir));
    return dir;
  }, () => undefined);
  return found;
}

/** Removes the reaper's empty cgroups at exit (what is still busy, the next sweep takes). */
function removeReaper(dir: string): void {
  try {
    new Deno.Command(SHELL, {
      args: [
        "-c",
        'for s in "$1"/*; do [ -f "$s/cgroup.procs" ] && rmdir "$s"; done 2>/dev/null; ' +
        'rmdir "$1" 2>/dev/null',
        SHELL,
        dir,
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
      clearEnv: true,
    }).outputSync();
  } catch {
    // no run grant left at exit: the next rousseau sweeps it
  }
}

/** Slots whose cgroups were found empty at the end of their last call. */
const free: number[] = [];
let next = 0;

/** One call's cgroup: its directory, made by the shell that joins it when missing. */
export interface Slot {
  readonly dir: string;
  readonly index: number;
}

/** A slot no call is using. */
export function takeSlot(reaper: string): Slot {
  const index = free.pop() ?? next++;
  return { dir: `${reaper}/${index}`, index };
}

/**
 * What the first shell runs before it becomes the command (sh code; `$3` is the slot's
 * directory): joins the slot, or fails the call, since a command outside it could leave
 * processes behind.
 */
export const JOIN_SLOT = '{ { [ -d "$3" ] || mkdir -p "$3"; } && echo $$ > "$3/cgroup.procs"; } ' +
  "2>/dev/null || { echo \"bash: cannot join the cgroup $3 that collects the command's " +
  'processes"; exit 125; }; ';

/**
 * Kills every member of the slot (`$2`) and the shell's group (`$1`), then waits until the
 * slot is empty: exit 0 then, 1 when it is not (a member stuck in the kernel), and the slot
 * is not reused. With the shell gone and nothing left behind, it reads one empty file.
 */
const KILL_SLOT = `
sid=$1 cg=$2
kill -9 -$sid 2>/dev/null
{ read -r p < "$cg/cgroup.procs"; } 2>/dev/null || p=
[ -z "$p" ] && exit 0
echo 1 > "$cg/cgroup.kill" || exit 1
n=0
while { read -r p < "$cg/cgroup.procs"; } 2>/dev/null && [ -n "$p" ]; do
  n=$((n + 1))
  [ $n -lt 2000 ] && continue
  [ $n -gt 2500 ] && exit 1
  sleep 0.01
done
exit 0`;

/** Kills what is left in `slot` (and the group led by `pid`); frees the slot once it is empty. */
export async function reap(slot: Slot, pid: number): Promise<void> {
  const out = await new Deno.Command(SHELL, {
    args: ["-c", KILL_SLOT, SHELL, String(pid), slot.dir],
    stdin: "null",
    stdout: "null",
    stderr: "null",
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin:/usr/sbin:/sbin" },
  }).output().catch(() => undefined);
  if (out?.success === true) free.push(slot.index);
}
