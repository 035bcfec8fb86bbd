// The rows a table was sent while BokehJS was still building it (app/widgets/tables.py).
// Panel's TabulatorView.setData() returns without a word while the table is initialising or
// building, and builds it from the rows it had when drawn: rows that arrive in between are lost and
// the table stays empty (a loaded machine, a tab shown and filled at once; tests/test_table_rows_browser.py).
// Runs on the table's source's `data` change, as Panel's own handler does; if that handler just
// dropped the rows, they are set once the table is built.
// args: table (the DataTabulator model).
const view = Bokeh.index.find_one_by_id(table.id);
const building = (v) => v._initializing || v._building || v.tabulator == null || !v.tabulator.initialized;
if (view != null && view.tabulator != null && building(view) && !table._ts_rows_pending) {
  table._ts_rows_pending = true;
  const settle = (tries) => {
    const now = Bokeh.index.find_one_by_id(table.id);
    if (now == null || now.tabulator == null) { table._ts_rows_pending = false; return; }  // drawn again later, from its rows then
    if (building(now)) {
      if (tries < 1200) setTimeout(() => settle(tries + 1), 50);  // (a minute at most)
      else table._ts_rows_pending = false;
      return;
    }
    table._ts_rows_pending = false;
    void now.setData();
  };
  setTimeout(() => settle(0), 50);
}
