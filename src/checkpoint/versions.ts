import { randomInt } from "node:crypto";

/** The random fraction has this many decimal digits (1 in 10^6 collision per fork step and channel). */
const FRACTION_SCALE = 1_000_000;

/**
 * Next channel version: the integer step counter plus one, with a random fraction, e.g. `8.123456`.
 *
 * LangGraph derives each step's version from the checkpoint's highest version, so after a fork
 * (updateState on an older checkpoint) plain integers repeat versions already used by the
 * abandoned branch, and a stored (channel, version) value would be reused for different
 * content. The fraction keeps versions unique across branches; the integer part keeps them
 * increasing; they stay numbers, so the saver remains a `BaseCheckpointSaver<number>`.
 */
export function nextChannelVersion(current: number | undefined): number {
  const counter = typeof current === "number" && Number.isFinite(current) ? Math.floor(current) : 0;
  return counter + 1 + randomInt(1, FRACTION_SCALE) / FRACTION_SCALE;
}
