// `devmind dev`: a line under the header saying whether the last reload of the project's graphs
// worked, and why not when it did not (the previous graphs are still served). On `devmind serve`
// /dev/status says `{state: "off"}` and the line stays hidden. Text only (textContent): a load error may quote code.
import { byId } from "./dom.js";

const POLL_MS = 1000;

/** Starts asking /dev/status every second while the page is visible; stops on a server without it. */
export function watchDevStatus() {
  const line = byId("dev-status");
  let shown = "";
  const look = async () => {
    let response;
    try {
      response = await fetch("/dev/status", { headers: { accept: "application/json" } });
    } catch {
      return true;
    }
    if (!response.ok) return true;
    const status = await response.json();
    if (status.state === "off") return false;
    const text =
      status.state === "error"
        ? `Reload failed after a change to ${status.changed.join(", ")}; still serving the previous version.\n${status.error?.message ?? ""}`
        : status.reloaded_at === null
          ? `devmind dev: watching ${status.watched} project files`
          : `Reloaded in ${status.reload_ms} ms after a change to ${status.changed.join(", ")}` + (status.handed_over.length > 0 ? `; ${status.handed_over.length} run(s) continue on the new code` : "");
    if (text !== shown) {
      shown = text;
      line.textContent = text;
      line.classList.toggle("dev-error", status.state === "error");
      line.dataset.state = status.state;
      line.hidden = false;
    }
    return true;
  };
  const loop = async () => {
    if (document.visibilityState === "visible" && !(await look())) return;
    setTimeout(() => void loop(), POLL_MS);
  };
  void loop();
}
