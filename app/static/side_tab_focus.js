// A side tab's header keeps the focus when its view is first built (app/widgets/side_tab_strip.py).
// The view takes its spacer's place in the tabs, so the server sends a new list of tabs and BokehJS
// draws every header again: the header just clicked, focused, left the page and the focus with it
// (then ←/→ moved the step instead of staying the tab's). When the active tab changes, this notes
// whether a header had the focus; when the tabs are drawn again, that header gets it back.
// args: changed, "active" or "tabs" (the property whose change runs this).
const view = Bokeh.index.find_one_by_id(cb_obj.id);
if (view != null && view.header_els != null) {
  if (changed === "active") {
    const focused = view.shadow_el.activeElement;
    cb_obj._ts_header_focused = focused != null && view.header_els.includes(focused);
  } else if (cb_obj._ts_header_focused) {
    cb_obj._ts_header_focused = false;
    setTimeout(() => {
      const now = document.activeElement;
      if (now != null && now !== document.body) return;  // the focus went somewhere on purpose meanwhile
      const header = view.header_els[cb_obj.active];
      if (header != null) header.focus({ preventScroll: true });
    });
  }
}
