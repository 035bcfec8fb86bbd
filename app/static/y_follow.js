// A side-panel chart's y axis follows the steps in view (app/y_follow.py): on a change of the x
// range, or of the data drawn, each y range fits the items overlapping the window. Cheap: one pass
// over what was sent (a few thousand items at most, the server's window).
// args: range (the x range), y_ranges, sources (per y range, a list of sources), x0 and x1 (the
// fields of an item's first and last x; the same field for points), top, bottom (fields; bottom ""
// keeps the y range's start, e.g. 0 bytes), pad (with bottom "": room above the top, a fraction of
// it; otherwise in y units either side), flipped (lanes drawn top to bottom: start is the largest y).
// Over the whole x extent (the range's bounds) a y range with a reset view set by the server
// returns to it (e.g. the lifetimes' band of the other values under the lanes).
const lo = range.start, hi = range.end;
const whole = range.bounds != null && lo <= range.bounds[0] && hi >= range.bounds[1];
for (let k = 0; k < y_ranges.length; k++) {
  const y = y_ranges[k];
  if (whole && y.reset_start != null && y.reset_end != null) {
    y.setv({start: y.reset_start, end: y.reset_end});
    continue;
  }
  let most = -Infinity, least = Infinity;
  for (const source of sources[k]) {
    const d = source.data, a = d[x0], b = d[x1], t = d[top], u = bottom ? d[bottom] : null;
    if (!a || !b || !t) continue;
    for (let i = 0; i < a.length; i++) {
      if (b[i] >= lo && a[i] <= hi) {
        if (t[i] > most) most = t[i];
        if (u && u[i] < least) least = u[i];
      }
    }
  }
  if (most === -Infinity) continue;  // nothing in view: the range stays
  if (!bottom) {
    if (most > 0) y.end = most * (1 + pad);
  } else if (flipped) {
    y.setv({start: most + pad, end: least - pad});
  } else {
    y.setv({start: least - pad, end: most + pad});
  }
}
