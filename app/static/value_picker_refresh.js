const view = Bokeh.index.find_one(cb_obj)
if (view != null && view.shadow_el.activeElement === view.input_el) {
  view._toggle_menu()
}
