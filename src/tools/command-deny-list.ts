/**
 * The deny-list of `run_command`: shell commands destructive enough that no human should even be
 * asked (CONTRACT section 4). `run_command`'s `deny` calls `deniedCommandReason`, so the registry's
 * `check()` answers PERMISSION_DENIED before any approval is requested.
 *
 * It is a policy gate, not a sandbox: approval (on by default) and the workspace-confined working
 * directory remain the real protection. The matching errs on the side of refusing:
 * - quotes and backslashes are removed first (`r'm' -"rf" /` is `rm -rf /`), `$IFS` becomes a
 *   space, and separators (`;`, `&`, `|`, `(`, `)`, backticks, braces, redirections) split words;
 * - a dangerous command word is recognised anywhere in the text, by its base name (`/bin/rm`,
 *   `sudo rm`, `xargs rm`, `find … -exec rm`, `sh -c 'rm …'`), and its flags are read up to the
 *   next separator, in any order and grouping (`-rf`, `-fr`, `-r -f`, `--recursive --force`);
 * - so a mere mention (`echo rm -rf x`) is refused too; the model can say it differently.
 */

/** Words that end one simple command (after normalisation they stand alone). */
const SEPARATORS = new Set([";", "&", "|", "(", ")", "`", "{", "}", "<", ">", "\n"]);

/** Commands refused whatever their arguments. */
const ALWAYS_DENIED: ReadonlyMap<string, string> = new Map([
  ["shutdown", "shuts the machine down"],
  ["reboot", "reboots the machine"],
  ["halt", "halts the machine"],
  ["poweroff", "powers the machine off"],
  ["killall5", "signals every process"],
  ["mke2fs", "formats a file system"],
  ["mkswap", "formats a swap area"],
  ["mkdosfs", "formats a file system"],
  ["mkntfs", "formats a file system"],
  ["wipefs", "erases file-system signatures"],
  ["fdisk", "rewrites partition tables"],
  ["sfdisk", "rewrites partition tables"],
  ["sgdisk", "rewrites partition tables"],
  ["parted", "rewrites partition tables"],
  ["blkdiscard", "discards a whole block device"],
]);

/** Raw disks and kernel memory: reading or writing them is never a workspace task. */
const DEVICE = /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk|mapper\/|md\d|dm-\d|loop\d|mem$|kmem$|port$)/;

/** System trees a redirection or `tee` must not write into. */
const SYSTEM_FILE = /^\/+(etc|boot|bin|sbin|lib|lib32|lib64|usr|proc|sys|root|var\/lib|var\/spool\/cron)(\/|$)/;

/** Device files that are fine as a `dd of=` target. */
const HARMLESS_DEVICES = new Set(["/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/full", "/dev/tty"]);

/**
 * Why `command` is refused, or null when it may go on (to approval, by default).
 *
 * @example
 *   deniedCommandReason("rm -r -f build")   // 'refused: "rm" with -r and -f deletes without asking…'
 *   deniedCommandReason("ls -la")           // null
 */
export function deniedCommandReason(command: string): string | null {
  const raw = typeof command === "string" ? command : String(command);
  const compact = raw.replace(/\s+/g, "");
  // `:(){ :|:& };:` and any named function that pipes into itself in the background
  if (/:\(\)\{/.test(compact) || /([A-Za-z_][\w-]*)\(\)\{[^}]*\b\1\|\1&/.test(compact) || /\bfunction([A-Za-z_][\w-]*)(\(\))?\{[^}]*\b\1\|\1&/.test(compact)) {
    return refused("a fork bomb", "it would exhaust the machine's processes");
  }
  const words = tokenize(raw);
  for (let i = 0; i < words.length; i += 1) {
    const word = words[i] as string;
    if (word === "--no-preserve-root" || (word.startsWith("--no-p") && "--no-preserve-root".startsWith(word))) {
      return refused("--no-preserve-root", "it lets rm delete /");
    }
    if (DEVICE.test(word) || DEVICE.test(word.replace(/^of=/, ""))) {
      return refused(`access to ${word.replace(/^of=/, "")}`, "it reads or overwrites a raw disk or kernel memory");
    }
    if (word === ">") {
      let j = i + 1;
      while (words[j] === ">" || words[j] === "|" || words[j] === "&") j += 1;
      const target = words[j];
      if (target !== undefined && SYSTEM_FILE.test(target)) return refused(`writing to ${target}`, "it overwrites a system file");
    }
    const name = baseName(word);
    const args = argsAfter(words, i);
    const reason = checkCommand(name, args);
    if (reason !== null) return reason;
  }
  return null;
}

function checkCommand(name: string, args: string[]): string | null {
  const always = ALWAYS_DENIED.get(name);
  if (always !== undefined) return refused(`"${name}"`, always);
  if (/^mkfs(\..+)?$/.test(name)) return refused(`"${name}"`, "it formats a file system");
  switch (name) {
    case "rm":
      return checkRm(args);
    case "dd":
      return checkDd(args);
    case "chmod":
    case "chown":
    case "chgrp":
      return checkOwnership(name, args);
    case "init":
    case "telinit":
      return args.some((a) => a === "0" || a === "6") ? refused(`"${name} ${args.find((a) => a === "0" || a === "6")}"`, "it halts or reboots the machine") : null;
    case "systemctl": {
      const verb = args.find((a) => /^(poweroff|reboot|halt|kexec|rescue|emergency|soft-reboot)$/.test(a));
      return verb === undefined ? null : refused(`"systemctl ${verb}"`, "it stops or restarts the machine");
    }
    case "tee": {
      const target = operands(args).find((a) => SYSTEM_FILE.test(a));
      return target === undefined ? null : refused(`writing to ${target}`, "it overwrites a system file");
    }
    case "kill":
      return checkKill(args);
    case "find": {
      const system = args.find(isSystemPath);
      return args.includes("-delete") && system !== undefined ? refused(`"find ${system} … -delete"`, "it deletes a system tree") : null;
    }
    case "mv": {
      const system = operands(args).slice(0, -1).find(isSystemPath);
      return system === undefined ? null : refused(`"mv ${system}"`, "it moves a system or home directory away");
    }
    default:
      return null;
  }
}

function checkRm(args: string[]): string | null {
  let recursive = false;
  let force = false;
  const targets = operands(args);
  for (const arg of options(args)) {
    if (arg.startsWith("--")) {
      const long = arg.slice(2).split("=", 1)[0] ?? "";
      if (long !== "" && "recursive".startsWith(long)) recursive = true;
      else if (long !== "" && "force".startsWith(long)) force = true;
    } else {
      if (/[rR]/.test(arg)) recursive = true;
      if (arg.includes("f")) force = true;
    }
  }
  if (recursive && force) return refused(`"rm" with -r and -f`, "it deletes whole trees without asking (delete specific files instead)");
  const root = targets.find(isRootish);
  if (recursive && root !== undefined) return refused(`"rm -r ${root}"`, "it deletes a system or home directory");
  return null;
}

function checkDd(args: string[]): string | null {
  for (const arg of args) {
    if (!arg.startsWith("of=")) continue;
    const target = arg.slice(3);
    if (target.startsWith("/dev/") && !HARMLESS_DEVICES.has(target)) return refused(`"dd of=${target}"`, "it overwrites a device");
  }
  return null;
}

function checkOwnership(name: string, args: string[]): string | null {
  const recursive = options(args).some((a) => (a.startsWith("--") ? "--recursive".startsWith(a) && a.length > 2 : /R/.test(a)));
  const targets = operands(args);
  if (targets.some((t) => /^\/+\*?$/.test(t))) return refused(`"${name}" on /`, "it changes every file of the machine");
  const system = targets.find(isSystemPath);
  if (recursive && system !== undefined) return refused(`"${name} -R ${system}"`, "it changes a whole system or home directory");
  return null;
}

function checkKill(args: string[]): string | null {
  // `kill -9 -1`, `kill -s KILL -1`, `kill -- -1`: -1 as a target means every process
  let i = 0;
  if (args[i] === "-s" || args[i] === "-n") i += 2;
  else if (args[i] !== undefined && args[i] !== "--" && (args[i] as string).startsWith("-") && args[i] !== "-1") i += 1;
  else if (args[i] === "-1" && args.length > 1) i += 1; // `kill -1 PID`: -1 is SIGHUP here
  if (args[i] === "--") i += 1;
  const targets = args.slice(i);
  return targets.includes("-1") ? refused(`"kill … -1"`, "it signals every process") : null;
}

/** True for `/`, `/*`, a top-level directory (`/etc`, `/usr/`), a home directory (`~`, `~bob`, `$HOME`). */
function isSystemPath(path: string): boolean {
  return /^\/+\*?$/.test(path) || /^\/+[^/]+\/*\*?$/.test(path) || /^~[^/]*\/?\*?$/.test(path) || /^\$\{?HOME\}?\/?\*?$/.test(path);
}

/** A system path, or the whole working tree: `.`, `..`, `./*`, `*`. */
function isRootish(path: string): boolean {
  return isSystemPath(path) || /^\.{1,2}\/?\*?$/.test(path) || path === "*";
}

/** Flags before `--` (words starting with `-`, not `-` alone). */
function options(args: string[]): string[] {
  const out: string[] = [];
  for (const arg of args) {
    if (arg === "--") break;
    if (arg.startsWith("-") && arg !== "-") out.push(arg);
  }
  return out;
}

/** Operands: words not starting with `-`, and everything after `--`. */
function operands(args: string[]): string[] {
  const out: string[] = [];
  let ended = false;
  for (const arg of args) {
    if (!ended && arg === "--") ended = true;
    else if (ended || !arg.startsWith("-") || arg === "-") out.push(arg);
  }
  return out;
}

/** The words after `words[index]` up to the next separator. */
function argsAfter(words: string[], index: number): string[] {
  const out: string[] = [];
  for (let j = index + 1; j < words.length && !SEPARATORS.has(words[j] as string); j += 1) out.push(words[j] as string);
  return out;
}

function baseName(word: string): string {
  const slash = word.lastIndexOf("/");
  return slash >= 0 && slash < word.length - 1 ? word.slice(slash + 1) : word;
}

/**
 * Normalised words: quotes and backslashes removed, `$IFS` as a space, `$(` split off, and each
 * separator character a word of its own.
 */
function tokenize(command: string): string[] {
  const text = command
    .replace(/\\\n/g, " ")
    .replace(/\$\{IFS[^}]*\}|\$IFS\b/g, " ")
    .replace(/["'\\]/g, "")
    .replace(/\$\(/g, " ( ")
    .replace(/[;&|()`{}<>\n]/g, (c) => ` ${c} `);
  // commas split too, so brace expansion (`{rm,-rf,/}`) shows its words
  return text.split(/[ \t\r\f\v,]+/).filter((w) => w !== "");
}

function refused(what: string, why: string): string {
  return `refused: ${what} is on run_command's deny-list of destructive commands (${why}); this is policy, not a failure to retry`;
}
