// The placement-problem view's hover (app/views/placement_problem.py): while the pointer is over a
// group's rectangle, its conflict partners (the groups it must not share a memory element with,
// whatever their lifetimes) are outlined. Drawn in the browser alone: a hover sends nothing to the
// server. The partners' rows are precomputed per rectangle (the `partner_rows` column).
// args: rects (the groups' ColumnDataSource), partners (the outline's ColumnDataSource);
// cb_data.index: the rows under the pointer.
const hovered = cb_data.index.indices
const d = rects.data
const rows = hovered.length ? Array.from(d.partner_rows[hovered[0]] || []) : []
const out = {left: [], right: [], bottom: [], top: [], request: []}
for (const r of rows) {
  out.left.push(d.left[r]); out.right.push(d.right[r])
  out.bottom.push(d.bottom[r]); out.top.push(d.top[r]); out.request.push(d.request[r])
}
const shown = partners.data.request || []
const same = shown.length === out.request.length && shown.every((v, i) => v === out.request[i])
if (!same) {
  partners.setv({data: out}, {sync: false})
}
