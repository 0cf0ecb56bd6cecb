// The SVG paths of a laid-out graph's edges (graph-layout.js places the nodes and waypoints):
// curves only in the gaps between layers, straight lines through an edge's own waypoints, so no
// path enters a node box. Pure (no DOM).

/** @typedef {{ id: string, depth: number, x: number, y: number, width: number, height: number }} Box */

/**
 * The SVG path of an edge, from its source to its target: through the gaps between layers (a
 * curve with vertical ends, which stays between the two layers) and straight through its
 * waypoints; an edge within one layer dips into the gap below; a node's edge to itself is a small
 * loop on its right.
 * @param {Box} from
 * @param {Box} to
 * @param {{ x: number, top: number }[]} chain  the edge's slots top to bottom: x (a waypoint's) and the top of its layer
 * @param {number} startX  where it leaves its source
 * @param {number} endX  where it enters its target
 * @param {{ nodeHeight: number, loop: number, dip: number }} size
 * @returns {string}
 */
export function edgePath(from, to, chain, startX, endX, size) {
  const r = (/** @type {number} */ value) => Math.round(value * 10) / 10;
  if (from.id === to.id) {
    const x = from.x + from.width;
    const y = from.y + from.height / 2;
    return `M ${r(x)} ${r(y - 6)} C ${r(x + size.loop)} ${r(y - 22)}, ${r(x + size.loop)} ${r(y + 22)}, ${r(x)} ${r(y + 6)}`;
  }
  if (from.depth === to.depth) {
    const y = from.y + from.height;
    const dip = size.dip;
    return `M ${r(startX)} ${r(y)} C ${r(startX)} ${r(y + dip)}, ${r(endX)} ${r(y + dip)}, ${r(endX)} ${r(y)}`;
  }
  // the points top to bottom: each a pair (enters its layer at the top, leaves at the bottom)
  const down = from.depth < to.depth;
  /** @type {[number, number, number][]} x, top y, bottom y */
  const stops = chain.map((slot, index) => {
    const x = index === 0 ? (down ? startX : endX) : index === chain.length - 1 ? (down ? endX : startX) : slot.x;
    return [x, slot.top, slot.top + size.nodeHeight];
  });
  let d = "";
  for (let i = 0; i < stops.length - 1; i += 1) {
    const [x1, , y1] = /** @type {[number, number, number]} */ (stops[i]);
    const [x2, y2, y2b] = /** @type {[number, number, number]} */ (stops[i + 1]);
    const mid = (y2 - y1) / 2;
    if (i === 0) d = `M ${r(x1)} ${r(y1)}`;
    d += ` C ${r(x1)} ${r(y1 + mid)}, ${r(x2)} ${r(y2 - mid)}, ${r(x2)} ${r(y2)}`;
    if (i + 1 < stops.length - 1) d += ` L ${r(x2)} ${r(y2b)}`;
  }
  return down ? d : reversePath(d);
}

/**
 * The same path drawn the other way (a back edge is laid out top to bottom, drawn from its source
 * below to its target above, so the arrow head is at the target).
 * @param {string} d  `M x y` followed by `C c1, c2, p` and `L p` commands
 */
function reversePath(d) {
  const tokens = d.replace(/,/g, " ").trim().split(/\s+/);
  /** @type {{ command: string, points: [string, string][] }[]} */
  const commands = [];
  for (let i = 0; i < tokens.length; ) {
    const command = /** @type {string} */ (tokens[i]);
    const count = command === "C" ? 3 : 1;
    /** @type {[string, string][]} */
    const points = [];
    for (let p = 0; p < count; p += 1) points.push([/** @type {string} */ (tokens[i + 1 + 2 * p]), /** @type {string} */ (tokens[i + 2 + 2 * p])]);
    commands.push({ command, points });
    i += 1 + 2 * count;
  }
  // walk back: each segment ends where the previous one started
  const start = (/** @type {number} */ index) => /** @type {[string, string]} */ ((/** @type {{ points: [string, string][] }} */ (commands[index])).points.at(-1));
  let out = `M ${start(commands.length - 1).join(" ")}`;
  for (let i = commands.length - 1; i > 0; i -= 1) {
    const { command, points } = /** @type {{ command: string, points: [string, string][] }} */ (commands[i]);
    const before = start(i - 1);
    out += command === "C" ? ` C ${(/** @type {[string, string]} */ (points[1])).join(" ")}, ${(/** @type {[string, string]} */ (points[0])).join(" ")}, ${before.join(" ")}` : ` L ${before.join(" ")}`;
  }
  return out;
}
