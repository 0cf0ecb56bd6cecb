import type { Logger } from "../../logger.js";
import type { RunObserver } from "../../runtime/runtime.js";
export async function startLangsmith(_s: unknown, _l: Logger): Promise<{ observer: RunObserver; close: () => Promise<void> }> { throw new Error("todo"); }
