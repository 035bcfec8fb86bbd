const SVG_NS = "http://www.w3.org/2000/svg";
const BAND_WIDTH = 420;
const BAND_HEIGHT = 26;
const MAX_DRAWN_BOUNDARIES = 140;

function node(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined) element.textContent = String(text);
  return element;
}

function svgNode(tag, attributes) {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  return element;
}

function ceilDiv(a, b) { return Math.floor((a + b - 1) / b); }

function formatInt(n) { return Number(n).toLocaleString("en-US"); }

// Elements of one shard along the axis for a partition count (docs/formats.md §2).
function perPartition(axis, count) {
  const raw = ceilDiv(axis.blocks, Math.max(count, 1)) * axis.block_size;
  const multiple = Math.max(axis.shard_padding_multiple || 1, 1);
  return ceilDiv(raw, multiple) * multiple;
}

// The stop closest to a fraction of the track (stops are evenly spaced).
function stopAt(stops, fraction) {
  if (stops.length <= 1) return 0;
  const clamped = Math.min(Math.max(fraction, 0), 1);
  return Math.round(clamped * (stops.length - 1));
}

function stopIndexOf(stops, count) {
  let best = 0;
  for (let i = 0; i < stops.length; i++) {
    if (stops[i] <= count) best = i;
  }
  return best;
}

export function render({ model, el }) {
  const root = node("div", "ts-root");
  let nonce = 0;
  const rows = new Map();  // key ("0", "1", ..., "replicas") -> row parts

  function descriptors() {
    const list = (model.axes || []).map((axis, position) => ({
      key: String(position), axis, count: axis.partitions, stops: axis.counts || [],
      valid: new Set(axis.valid_counts || []),
    }));
    if (model.show_replicas) {
      list.push({
        key: "replicas", axis: null, count: model.replicas, stops: model.replica_counts || [],
        valid: new Set(model.valid_replica_counts || []),
      });
    }
    return list;
  }

  function buildRow(key, slotIndex) {
    const row = node("div", "ts-row");
    row.dataset.axis = key;
    const label = node("div", "ts-label");
    // Drawn in BAND_WIDTH units, stretched to the row's width (the side panel is narrower on small screens).
    const band = svgNode("svg", { class: "ts-band", height: BAND_HEIGHT, viewBox: `0 0 ${BAND_WIDTH} ${BAND_HEIGHT}`, preserveAspectRatio: "none" });
    const track = node("div", "ts-track");
    track.dataset.axis = key;
    const zones = node("div", "ts-zones");
    const handle = node("div", "ts-handle");
    handle.dataset.axis = key;
    handle.tabIndex = 0;
    handle.setAttribute("role", "slider");
    const bubble = node("span", "ts-bubble");
    handle.appendChild(bubble);
    track.append(zones, handle);
    const ends = node("div", "ts-ends");
    const low = node("span", "ts-end-low");
    const high = node("span", "ts-end-high");
    ends.append(low, high);
    const left = node("div", "ts-left");
    left.append(label, band, track, ends);
    const slot = node("div", "ts-input");
    const input = (model.get_child("inputs") || [])[slotIndex];
    if (input) slot.appendChild(input);
    const detail = node("div", "ts-detail");
    const right = node("div", "ts-right");
    right.append(slot, detail);
    const message = node("div", "ts-message");
    message.dataset.axis = key;
    message.setAttribute("role", "alert");
    const body = node("div", "ts-body");
    body.append(left, right);
    row.append(body, message);
    const parts = { row, label, band, track, zones, handle, bubble, low, high, detail, message, key, dragging: false, pending: null };
    attachDrag(parts);
    return parts;
  }

  function drawBand(parts, d, count) {
    const band = parts.band;
    band.replaceChildren();
    if (d.axis === null) {
      // Replicas: the device's tiles, and the share this tiling occupies.
      const device = Math.max(model.device_tiles, 1);
      const tiles = model.tile_product * count;
      const width = Math.min(tiles / device, 1) * BAND_WIDTH;
      band.appendChild(svgNode("rect", { x: 0, y: 4, width: BAND_WIDTH, height: BAND_HEIGHT - 8, class: "ts-band-space" }));
      band.appendChild(svgNode("rect", { x: 0, y: 4, width: Math.max(width, 1), height: BAND_HEIGHT - 8, class: tiles > device ? "ts-band-over" : "ts-band-used" }));
      const copies = Math.min(count, MAX_DRAWN_BOUNDARIES);
      for (let i = 1; i < copies; i++) {
        const x = (i / count) * width;
        band.appendChild(svgNode("line", { x1: x, x2: x, y1: 4, y2: BAND_HEIGHT - 4, class: "ts-boundary" }));
      }
      return;
    }
    const axis = d.axis;
    const padded = Math.max(axis.padded, 1);
    const scale = BAND_WIDTH / padded;
    const shard = perPartition(axis, count);
    band.appendChild(svgNode("rect", { x: 0, y: 4, width: BAND_WIDTH, height: BAND_HEIGHT - 8, class: "ts-band-data" }));
    if (axis.padded > axis.size) {
      band.appendChild(svgNode("rect", { x: axis.size * scale, y: 4, width: (axis.padded - axis.size) * scale, height: BAND_HEIGHT - 8, class: "ts-band-padding" }));
    }
    band.appendChild(svgNode("rect", { x: 0, y: 2, width: Math.max(Math.min(shard, padded) * scale, 1.5), height: BAND_HEIGHT - 4, class: "ts-band-shard" }));
    const boundaries = Math.ceil(padded / shard) - 1;
    const step = Math.max(1, Math.ceil(boundaries / MAX_DRAWN_BOUNDARIES));
    for (let i = 1; i <= boundaries; i += step) {
      const x = i * shard * scale;
      band.appendChild(svgNode("line", { x1: x, x2: x, y1: 4, y2: BAND_HEIGHT - 4, class: "ts-boundary" }));
    }
  }

  function describe(parts, d, count) {
    // the slider's accessible name: what its count is (the row's label holds the figures)
    parts.handle.setAttribute("aria-label", d.axis === null ? "replicas" : `partitions of axis ${d.key} (${d.axis.label})`);
    if (d.axis === null) {
      parts.label.textContent = `replicas · ${formatInt(model.tile_product * count)} of ${formatInt(model.device_tiles)} tiles`;
      parts.detail.textContent = `${formatInt(count)} cop${count === 1 ? "y" : "ies"} of each shard` +
        ` (device allows ${formatInt(model.max_replicas)})`;
      return;
    }
    const axis = d.axis;
    parts.label.textContent = `axis ${d.key} · ${axis.label} · size ${formatInt(axis.size)}` +
      (axis.padded > axis.size ? ` (padded ${formatInt(axis.padded)})` : "") +
      ` · ${formatInt(axis.blocks)} block${axis.blocks === 1 ? "" : "s"} of ${formatInt(axis.block_size)}`;
    parts.detail.textContent = `${formatInt(count)} partition${count === 1 ? "" : "s"} × ${formatInt(perPartition(axis, count))}`;
  }

  function placeHandle(parts, d, count, pending) {
    const stops = d.stops;
    const index = stopIndexOf(stops, count);
    const fraction = stops.length > 1 ? index / (stops.length - 1) : 0;
    parts.handle.style.left = `${fraction * 100}%`;
    parts.bubble.textContent = formatInt(count);
    parts.handle.setAttribute("aria-valuenow", String(count));
    parts.handle.setAttribute("aria-valuemin", String(stops.length ? stops[0] : count));
    parts.handle.setAttribute("aria-valuemax", String(stops.length ? stops[stops.length - 1] : count));
    parts.handle.dataset.count = String(count);
    parts.handle.classList.toggle("ts-pending", Boolean(pending));
    parts.handle.classList.toggle("ts-outside", stops.length > 0 && !d.valid.has(count));
    parts.handle.classList.toggle("ts-fixed", stops.length <= 1);
    describe(parts, d, count);
    drawBand(parts, d, count);
  }

  function drawZones(parts, d) {
    // Runs of stops the planner would refuse, drawn behind the handle.
    parts.zones.replaceChildren();
    const stops = d.stops;
    parts.track.dataset.stops = JSON.stringify(stops);
    parts.low.textContent = stops.length ? formatInt(stops[0]) : "";
    parts.high.textContent = stops.length ? formatInt(stops[stops.length - 1]) : "";
    if (stops.length <= 1) return;
    const last = stops.length - 1;
    let start = -1;
    for (let i = 0; i <= stops.length; i++) {
      const refused = i < stops.length && !d.valid.has(stops[i]);
      if (refused && start < 0) start = i;
      if (!refused && start >= 0) {
        const zone = node("div", "ts-zone-refused");
        const from = Math.max((start - 0.5) / last, 0);
        const to = Math.min((i - 0.5) / last, 1);
        zone.style.left = `${from * 100}%`;
        zone.style.width = `${(to - from) * 100}%`;
        parts.zones.appendChild(zone);
        start = -1;
      }
    }
  }

  function drawMessage(parts) {
    const text = model.message_axis === parts.key ? (model.message || "") : "";
    parts.message.textContent = text;
    parts.message.hidden = !text;
    parts.row.classList.toggle("ts-refused", Boolean(text));
  }

  function current(key) {
    return descriptors().find((d) => d.key === key);
  }

  function commit(parts, count) {
    const d = current(parts.key);
    if (!d) return;
    if (count === d.count) {
      placeHandle(parts, d, d.count, false);
      return;
    }
    parts.pending = count;
    placeHandle(parts, d, count, true);
    nonce += 1;
    model.committed = { axis: parts.key, count: count, nonce: `${Date.now()}-${nonce}` };
  }

  function attachDrag(parts) {
    let preview = null;
    function countAt(clientX) {
      const d = current(parts.key);
      const box = parts.track.getBoundingClientRect();
      const fraction = box.width > 0 ? (clientX - box.left) / box.width : 0;
      return d.stops.length ? d.stops[stopAt(d.stops, fraction)] : d.count;
    }
    function move(event) {
      if (!parts.dragging) return;
      event.preventDefault();
      const count = countAt(event.clientX);
      if (count !== preview) {
        preview = count;
        placeHandle(parts, current(parts.key), count, false);
      }
    }
    function release(event) {
      if (!parts.dragging) return;
      parts.dragging = false;
      parts.handle.classList.remove("ts-dragging");
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", release);
      window.removeEventListener("pointercancel", release);
      const count = event.type === "pointercancel" ? null : countAt(event.clientX);
      preview = null;
      if (count === null) {
        const d = current(parts.key);
        placeHandle(parts, d, d.count, false);
      } else {
        commit(parts, count);
      }
    }
    function press(event) {
      const d = current(parts.key);
      if (!d || d.stops.length <= 1 || model.disabled || event.button !== 0) return;
      event.preventDefault();
      parts.handle.focus();
      parts.dragging = true;
      parts.handle.classList.add("ts-dragging");
      window.addEventListener("pointermove", move);
      window.addEventListener("pointerup", release);
      window.addEventListener("pointercancel", release);
      move(event);
    }
    // Pressing anywhere on the track grabs the handle there.
    parts.track.addEventListener("pointerdown", press);
    parts.handle.addEventListener("keydown", (event) => {
      const d = current(parts.key);
      if (!d || d.stops.length <= 1 || model.disabled) return;
      const shown = parts.pending !== null ? parts.pending : d.count;
      const index = stopIndexOf(d.stops, shown);
      const moves = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, Home: -Infinity, End: Infinity };
      if (!(event.key in moves)) return;
      event.preventDefault();
      const target = Math.min(Math.max(index + moves[event.key], 0), d.stops.length - 1);
      commit(parts, d.stops[target]);
    });
  }

  function draw(rebuild = false) {
    const list = descriptors();
    const keys = list.map((d) => d.key).join(",");
    if (rebuild || keys !== [...rows.keys()].join(",")) {
      rows.clear();
      root.replaceChildren();
      list.forEach((d, i) => {
        const parts = buildRow(d.key, i);
        rows.set(d.key, parts);
        root.appendChild(parts.row);
      });
    }
    for (const d of list) {
      const parts = rows.get(d.key);
      if (parts.dragging) continue;
      parts.pending = null;
      drawZones(parts, d);
      placeHandle(parts, d, d.count, false);
      drawMessage(parts);
    }
    root.classList.toggle("ts-disabled", Boolean(model.disabled));
  }

  model.on(["axes", "replicas", "replica_counts", "valid_replica_counts", "tile_product", "device_tiles", "max_replicas",
            "show_replicas", "message", "message_axis", "revision", "disabled"], () => draw());
  // Manual render policy: new numeric inputs arrive here, already rendered; re-slot every row.
  model.on("inputs", () => draw(true));
  draw();
  return root;
}
