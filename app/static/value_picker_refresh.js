const view = Bokeh.index.find_one(source)
if (view != null && view.shadow_el.activeElement === view.input_el) {
  view._toggle_menu()
}
