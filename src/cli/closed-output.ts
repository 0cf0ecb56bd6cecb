/**
 * Output into a pipe whose reader went away (`devmind show ID | head -3`): writing to stdout
 * then fails with EPIPE (asynchronously, as an 'error' event nobody handles, so Node would print
 * a stack trace). The output was cut short on purpose, so a command that only prints ends quietly
 * with exit 0, as `cat`/`grep` do; the data directory's lock file is still released by its exit
 * handler. A command executing a run in this process (`run`, `resume`, `approve`, `reject`) holds
 * the process instead (`holdRunWhenOutputCloses`): exiting there would leave its run claimed by a
 * dead process, `running` until its lease expires, with no worker to take it on an embedded
 * database. The run goes on to its next stop here, with its output dropped, and the command
 * exits with the code of the run's status as usual.
 */

const output = { stdoutClosed: false, stderrClosed: false, noted: false, everHeld: false };
/** Runs being executed in this process (a hold each; the same run may be held twice, nested). */
const held: { runId: string }[] = [];

/** True once stdout's reader has gone away (nothing more is written to it). */
export function stdoutClosed(): boolean {
  return output.stdoutClosed;
}

/** Writes to stdout unless its reader has gone away. */
export function writeStdout(text: string): void {
  if (!output.stdoutClosed) process.stdout.write(text);
}

/** Writes to stderr unless its reader has gone away. */
export function writeStderr(text: string): void {
  if (!output.stderrClosed) process.stderr.write(text);
}

/**
 * While the returned release function is not called, a closed stdout does not end the process:
 * the run `runId` executing here continues to its next stop (end, interrupt, cancel), and a
 * line on stderr says so. Call the release when the run has stopped. From then on a closed
 * stdout never ends the process early: the command ends with its run's exit code.
 */
export function holdRunWhenOutputCloses(runId: string): () => void {
  const mine = { runId };
  held.push(mine);
  output.everHeld = true;
  return () => {
    const index = held.indexOf(mine);
    if (index >= 0) held.splice(index, 1);
  };
}

function isClosedPipe(error: NodeJS.ErrnoException): boolean {
  return error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED";
}

function onClosed(which: "stdout" | "stderr"): void {
  if (which === "stdout") output.stdoutClosed = true;
  else output.stderrClosed = true;
  const run = held.at(-1);
  // a command that executed a run here ends on its own with its run's exit code (the closed
  // pipe's error may be reported after the run stopped, as the command is finishing)
  if (run === undefined) {
    if (!output.everHeld) process.exit(0);
    return;
  }
  if (which === "stdout" && !output.noted) {
    output.noted = true;
    writeStderr(`devmind: output closed; run ${run.runId} continues in this process to its next stop (the exit code is its status's; Ctrl-C cancels it)\n`);
  }
}

/**
 * Installs the handlers described above on stdout and stderr: once per process, before any
 * command writes.
 */
export function exitQuietlyWhenOutputCloses(streams: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream } = { stdout: process.stdout, stderr: process.stderr }): void {
  for (const which of ["stdout", "stderr"] as const) {
    streams[which].on("error", (error: NodeJS.ErrnoException) => {
      if (!isClosedPipe(error)) throw error;
      onClosed(which);
    });
  }
}
