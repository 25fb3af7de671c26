/**
 * The one place that turns runtime errors into the Go `os` vocabulary the spec fixes:
 * `open /x: no such file or directory`, `read /x: is a directory`, ...
 *
 * @module
 */

const BY_CLASS: ReadonlyArray<readonly [new (...args: never[]) => Error, string]> = [
  [Deno.errors.NotFound, "no such file or directory"],
  [Deno.errors.PermissionDenied, "permission denied"],
  [Deno.errors.NotCapable, "permission denied (outside the runtime permissions)"],
  [Deno.errors.IsADirectory, "is a directory"],
  [Deno.errors.NotADirectory, "not a directory"],
  [Deno.errors.AlreadyExists, "file exists"],
  [Deno.errors.FilesystemLoop, "too many levels of symbolic links"],
];

const BY_CODE: Readonly<Record<string, string>> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EISDIR: "is a directory",
  ENOTDIR: "not a directory",
  EEXIST: "file exists",
  ELOOP: "too many levels of symbolic links",
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EROFS: "read-only file system",
  ENAMETOOLONG: "file name too long",
  EMFILE: "too many open files",
  ENFILE: "too many open files in system",
  EBUSY: "device or resource busy",
  ENOTEMPTY: "directory not empty",
  EXDEV: "invalid cross-device link",
  EIO: "input/output error",
  EFBIG: "file too large",
  ETXTBSY: "text file busy",
  EINVAL: "invalid argument",
};

/** The Go-style reason for an error: `no such file or directory`, `permission denied`, ... */
export function osReason(error: unknown): string {
  for (const [cls, text] of BY_CLASS) {
    if (error instanceof cls) return text;
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && code in BY_CODE) return BY_CODE[code]!;
  const message = error instanceof Error ? error.message : String(error);
  // Deno and node:fs messages look like "No space left on device (os error 28): open '/x'"
  // or "ENOSPC: no space left on device, open '/x'"; keep only the reason.
  const reason = message.replace(/^E[A-Z]+: /, "").replace(/ \(os error \d+\).*$/s, "")
    .replace(/, \w+ '.*'$/s, "");
  return reason.charAt(0).toLowerCase() + reason.slice(1);
}

/** `<op> <path>: <reason>`, as Go's `*os.PathError` prints. */
export function pathError(op: string, path: string, error: unknown): string {
  return `${op} ${path}: ${osReason(error)}`;
}

/** True when `error` means the path does not exist. */
export function isNotFound(error: unknown): boolean {
  return error instanceof Deno.errors.NotFound ||
    (error as { code?: unknown } | null)?.code === "ENOENT";
}
