/**
 * `devmind show ID | head -3`: once the reader goes away, writing to stdout fails with EPIPE
 * (asynchronously, as an 'error' event nobody handles, so Node would print a stack trace). The
 * output was cut short on purpose, so the command ends quietly with exit 0, as `cat`/`grep` do;
 * the data directory's lock file is still released by its exit handler.
 */
export function exitQuietlyWhenOutputCloses(streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED") process.exit(0);
      throw error;
    });
  }
}
