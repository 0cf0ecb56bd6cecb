import { lstat, mkdir, readlink, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { TOOL_LIMITS } from "../constants.js";
import { ToolFailure } from "./tool-failure.js";
import { quote } from "./tool-result.js";

/** Where a user-supplied path lands inside the workspace. */
export interface WorkspacePath {
  /** Real path of the workspace directory. */
  root: string;
  /** Real, absolute path to operate on (symlinks resolved, `..` gone); always inside `root`. */
  absolute: string;
  /** `absolute` relative to `root`, with `/` separators; `.` for the root itself. */
  relative: string;
  /** Whether something exists at `absolute` right now. */
  exists: boolean;
}

/**
 * Resolves a path a model sent to a real path inside the workspace, or refuses it.
 *
 * Why: file tools must touch nothing outside DEVMIND_WORKSPACE, whatever the model sends:
 * `../` chains, absolute paths, symlinks inside the workspace that point outside, NUL bytes.
 * How: relative paths are resolved against the workspace and `..` is applied lexically; then
 * symlinks are resolved (`realpath` of the path, or of its deepest existing ancestor for a path
 * about to be created, following dangling symlinks to where they would create a file) and the
 * result must still be inside the workspace's real path. Operate on the returned path only.
 *
 * @throws ToolFailure PERMISSION_DENIED for an escape or a NUL byte, INVALID_ARGUMENTS for an
 *   empty path, TOOL_FAILED when `mustExist` is set and nothing is there or the file system fails.
 */
export async function resolveInWorkspace(workspace: string, userPath: string, options: { mustExist?: boolean } = {}): Promise<string> {
  const located = await locateInWorkspace(workspace, userPath);
  if (options.mustExist === true && !located.exists) throw new ToolFailure("TOOL_FAILED", `no such file or directory: ${quote(located.relative)}`);
  return located.absolute;
}

/**
 * Like `resolveInWorkspace` but also returns the workspace root, the workspace-relative form (what
 * tool results show) and whether the path exists; never requires existence.
 */
export async function locateInWorkspace(workspace: string, userPath: string): Promise<WorkspacePath> {
  if (typeof userPath !== "string" || userPath === "") throw new ToolFailure("INVALID_ARGUMENTS", "path is empty");
  if (userPath.includes("\0")) throw new ToolFailure("PERMISSION_DENIED", `path ${quote(userPath)} contains a NUL byte`);
  const given = resolve(workspace);
  let root: string;
  try {
    root = await realpath(given);
  } catch {
    throw new ToolFailure("TOOL_FAILED", "the workspace directory does not exist");
  }
  let candidate: string;
  if (isAbsolute(userPath)) {
    const lexical = resolve(userPath);
    // an absolute path may name the workspace by its configured (non-real) form
    if (isInside(lexical, root)) candidate = lexical;
    else if (isInside(lexical, given)) candidate = join(root, relative(given, lexical));
    else throw outside(userPath);
  } else {
    candidate = resolve(root, userPath);
  }
  if (!isInside(candidate, root)) throw outside(userPath);
  let real: { path: string; exists: boolean };
  try {
    real = await realpathLenient(candidate, 0);
  } catch (error) {
    throw fsFailure(error, userPath);
  }
  if (!isInside(real.path, root)) throw outside(userPath);
  return { root, absolute: real.path, relative: toRelative(root, real.path), exists: real.exists };
}

/**
 * Creates the workspace directory if needed (like `mkdir -p`) and returns its real path.
 * Call it once at startup and hand the result to `ToolRegistry` and `builtinTools`.
 */
export async function ensureWorkspace(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  return realpath(dir);
}

/**
 * Turns a file-system error into a ToolFailure whose message names the workspace-relative path
 * instead of an absolute one (no host paths in tool messages). Abort errors pass through unchanged
 * so the registry can tell a timeout or a cancel from a failure.
 */
export function fsFailure(error: unknown, shownPath: string): unknown {
  if (error instanceof ToolFailure) return error;
  if (error instanceof Error && error.name === "AbortError") return error;
  const code = (error as { code?: unknown } | null)?.code;
  const what = quote(shownPath);
  const reasons: Record<string, string> = {
    ENOENT: `no such file or directory: ${what}`,
    ENOTDIR: `a parent of ${what} is not a directory`,
    EISDIR: `${what} is a directory`,
    EACCES: `permission denied: ${what}`,
    EPERM: `operation not permitted: ${what}`,
    ELOOP: `too many levels of symbolic links: ${what}`,
    EEXIST: `${what} already exists`,
    ENOSPC: `no space left on device while writing ${what}`,
    ENAMETOOLONG: `path too long: ${what}`,
  };
  const reason = typeof code === "string" ? reasons[code] : undefined;
  return new ToolFailure("TOOL_FAILED", reason ?? `file system error${typeof code === "string" ? ` ${code}` : ""} on ${what}`, { cause: error });
}

/** True when `path` is `root` or below it (both absolute and normalized). */
function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function toRelative(root: string, path: string): string {
  const rel = relative(root, path);
  return rel === "" ? "." : rel.split(sep).join("/");
}

function outside(userPath: string): ToolFailure {
  return new ToolFailure("PERMISSION_DENIED", `path ${quote(userPath)} is outside the workspace`);
}

/**
 * `realpath` that also works for paths that do not exist yet: the deepest existing ancestor is
 * resolved and the missing components are appended. A dangling symlink is followed to where a
 * write through it would land, so it cannot smuggle a new file outside the workspace.
 */
async function realpathLenient(path: string, hops: number): Promise<{ path: string; exists: boolean }> {
  try {
    return { path: await realpath(path), exists: true };
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  let target: string | null = null;
  try {
    const stats = await lstat(path);
    if (stats.isSymbolicLink()) target = await readlink(path);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  const parent = dirname(path);
  if (target !== null) {
    if (hops >= TOOL_LIMITS.maxSymlinkHops) throw Object.assign(new Error("too many symbolic links"), { code: "ELOOP" });
    const realParent = await realpathLenient(parent, hops + 1);
    return { path: (await realpathLenient(resolve(realParent.path, target), hops + 1)).path, exists: false };
  }
  if (parent === path) return { path, exists: false };
  const base = await realpathLenient(parent, hops);
  return { path: join(base.path, basename(path)), exists: false };
}

function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * A quick, synchronous check for the policy gate (`deny`): refuses NUL bytes and paths that leave
 * the workspace by `..` or an absolute path, before any approval is asked. Symlinks need the file
 * system and are checked again by `resolveInWorkspace` when the tool runs. Returns the reason, or
 * null when the path may go on.
 */
export function lexicalEscape(workspace: string, userPath: unknown): string | null {
  if (typeof userPath !== "string") return null;
  if (userPath.includes("\0")) return `path ${quote(userPath)} contains a NUL byte`;
  const root = resolve(workspace);
  const target = resolve(root, userPath);
  const inside = target === root || target.startsWith(root.endsWith(sep) ? root : root + sep);
  return inside ? null : `path ${quote(userPath)} is outside the workspace`;
}
