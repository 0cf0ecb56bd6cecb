import { spawn } from "node:child_process";

/**
 * Opens `url` in the desktop's browser (`open` on macOS, `start` on Windows, `xdg-open`
 * elsewhere), detached; a missing opener is told to `onFailure`, never thrown.
 */
export function openInBrowser(url: string, onFailure: (reason: string) => void): void {
  const [command, args] = process.platform === "darwin" ? ["open", [url]] : process.platform === "win32" ? ["cmd", ["/c", "start", "", url]] : ["xdg-open", [url]];
  try {
    const child = spawn(command, args as string[], { detached: true, stdio: "ignore" });
    child.once("error", (error) => onFailure(error.message));
    child.unref();
  } catch (error) {
    onFailure(error instanceof Error ? error.message : String(error));
  }
}
