// The page's half of benchmarks/bench_browser.py, installed in every page before its own scripts
// (Playwright's add_init_script). The benchmark's Python side only calls these functions:
// - setup(names): stamps the time of every input event (pointerup, keydown, wheel; capturing, so
//   before any handler) and counts the changes of the data sources named (a new data, a stream,
//   a patch);
// - floorDone, stepDone, dragDone, zoomDone: polled once per animation frame until the page shows
//   the answer, then the milliseconds since the input event (false until then);
// - text(selector), count(name): what the benchmark reads between tries.
window.__tsBench = (() => {
  const state = { t0: null, counts: {}, roots: {}, listening: false };

  function setup(names) {
    if (!state.listening) {
      for (const type of ["pointerup", "keydown", "wheel"]) {
        window.addEventListener(type, () => { state.t0 = performance.now(); }, true);
      }
      state.listening = true;
    }
    for (const doc of Bokeh.documents) for (const m of doc._all_models.values()) {
      if (!names.includes(m.name) || m.__tsb) continue;
      m.__tsb = true;
      const bump = () => { state.counts[m.name] = (state.counts[m.name] || 0) + 1; };
      m.change.connect(bump);
      m.streaming.connect(bump);
      m.patching.connect(bump);
    }
    return true;
  }

  // The first element matching `selector` anywhere in the page, shadow roots included; the root it
  // was found in is remembered (a pane's HTML is replaced, its shadow root is not).
  function find(selector) {
    const cached = state.roots[selector];
    if (cached) { const hit = cached.querySelector(selector); if (hit) return hit; }
    const stack = [document];
    while (stack.length) {
      const root = stack.pop();
      const hit = root.querySelector(selector);
      if (hit) { state.roots[selector] = root; return hit; }
      for (const el of root.querySelectorAll("*")) if (el.shadowRoot) stack.push(el.shadowRoot);
    }
    return null;
  }

  function text(selector) {
    const el = find(selector);
    return el ? el.textContent.trim() : null;
  }

  function source(name) {
    for (const doc of Bokeh.documents) for (const m of doc._all_models.values()) if (m.name === name) return m;
    return null;
  }

  function since() {
    return state.t0 !== null ? performance.now() - state.t0 : false;
  }

  // The floor page's text reads `want`.
  function floorDone(want) {
    return text("[data-testid=floor-text]") === String(want) ? since() : false;
  }

  // The step header names `step` and the step's table holds `live` rows.
  function stepDone([step, live]) {
    if (text("[data-testid=ts-step-index]") !== String(step)) return false;
    if (text("[data-testid=ts-step-live-count]") !== String(live)) return false;
    let rows = null;
    for (const doc of Bokeh.documents) for (const m of doc._all_models.values()) {
      if (m.source && m.source.data && m.source.data.share !== undefined) rows = m.source.get_length();
    }
    return rows === live ? since() : false;
  }

  // The summary's peaks differ from `before` and the timeline's series changed since `count`.
  function dragDone([before, count]) {
    const now = text("[data-testid=ts-summary] table");
    if (now === null || now === before) return false;
    return (state.counts["ts-timeline-usage"] || 0) > count ? since() : false;
  }

  // The timeline's series changed since `count` and covers the visible window (re-sampled for it):
  // its points reach both edges of the window (or the profile's ends) and nothing far outside it.
  function zoomDone([count, nSteps]) {
    if ((state.counts["ts-timeline-usage"] || 0) <= count) return false;
    const src = source("ts-timeline-usage"), fig = source("ts-timeline");
    const steps = src.data.step, n = src.get_length();
    if (!n) return false;
    const start = fig.x_range.start, end = fig.x_range.end;
    const span = Math.max(end - start, 1);
    if (steps[0] > Math.max(start, 0) + 1 || steps[n - 1] < Math.min(end, nSteps - 1) - 1) return false;
    if (steps[0] < start - span || steps[n - 1] > end + span) return false;
    return since();
  }

  // The address view's head is shown (its placement is done) and one of the data sources `names`
  // holds rows (its chart's data has arrived: a large profile's small allocations are drawn as
  // aggregated cells, its large ones as rectangles).
  function addressesDone(names) {
    if (text("[data-testid=ts-address-head]") === null) return false;
    for (const name of names) {
      const src = source(name);
      if (src !== null && src.get_length() > 0) return since();
    }
    return false;
  }

  function count(name) {
    return state.counts[name] || 0;
  }

  return { setup, text, floorDone, stepDone, dragDone, zoomDone, addressesDone, count };
})();
