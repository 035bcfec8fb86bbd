// The compare overlays' y axes follow the visible steps (app/views/compare_timeline.py): on a change
// of the shared x range, or of the points drawn, each figure's top becomes the highest of A and B
// ("hi") over the steps in view, plus room for the peak labels. Cheap: one pass over the points sent
// (a few thousand at most, the server's window). args: range (the x range), sources, y_ranges.
const lo = range.start, hi = range.end;
for (let k = 0; k < sources.length; k++) {
  const xs = sources[k].data.x, tops = sources[k].data.hi;
  if (!xs || !tops) continue;
  let top = 0;
  for (let i = 0; i < xs.length; i++) {
    if (xs[i] >= lo && xs[i] <= hi && tops[i] > top) top = tops[i];
  }
  if (top > 0) y_ranges[k].end = top * 1.12;
}
