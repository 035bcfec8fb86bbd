// The timeline tooltip's peak line (app/views/timeline_figure.py, a CustomJSHover formatter of the
// hover carrier's "mid" field): at a step that is a peak, what that peak is — the peak marks have no
// tooltip of their own, which covered the step's at the peak step (issue #27 item 11).
// One short line (the definitions are in the glossary under the timeline): the tooltip must still fit
// the plot at a peak step. args: usage (the points), peaks (the peak marks: x = step, label).
// Bokeh escapes what this returns, like any @field.
const index = special_vars.index
const step = Number(index != null ? usage.data.step[index] : Math.round(special_vars.data_x))
const xs = peaks.data.x
const out = []
for (let k = 0; k < xs.length; k++) {
  if (Number(xs[k]) === step) out.push(`⚑ ${peaks.data.label[k]}`)
}
return out.join(" · ")
