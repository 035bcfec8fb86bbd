// The page's URL and keyboard (app/widgets/page_controls.py).
// - query: the server sets it after every change of the shareable state; it is pushed onto the
//   browser's history (one entry per change), and the back/forward buttons send the URL's
//   query back (the server restores that state).
// - keys: ←/→, Home/End and p are sent to the server whenever the focus is not in a text field or
//   on a control that takes those keys itself (a tab: ←/→ move between tabs; a slider, a list).
// - clear_filters (a message from the server): empty a table's header filters.
// - theme: on opening, the theme kept from the last visit (localStorage), else the system's
//   prefers-color-scheme, is sent to the server; a change of the page's theme that the browser did
//   not send (the user's toggle) is kept for the next visit.
const KEYS = new Set(["ArrowLeft", "ArrowRight", "Home", "End", "p"]);
const OWN_KEYS = new Set(["slider", "tab", "tablist", "radio", "radiogroup", "listbox", "option", "combobox", "spinbutton", "menuitem"]);
const THEME_KEY = "tilescope-theme";

function typingIn(event) {
  // The focused element may sit inside shadow roots: look at the real target first.
  const path = event.composedPath ? event.composedPath() : [event.target];
  for (const element of path) {
    if (!element || !element.tagName) continue;
    const tag = element.tagName.toUpperCase();
    if (tag === "TEXTAREA" || tag === "SELECT" || element.isContentEditable) return true;
    if (tag === "INPUT") {
      const type = (element.getAttribute("type") || "text").toLowerCase();
      if (!["checkbox", "radio", "button", "submit", "range", "file"].includes(type)) return true;
    }
    if (element.getAttribute && OWN_KEYS.has(element.getAttribute("role"))) return true;  // a drag handle, a tab keep their keys
    if (element.classList && element.classList.contains("bk-tab")) return true;  // Bokeh's tab headers (no role)
  }
  return false;
}

function keptTheme() {
  try {
    const kept = window.localStorage.getItem(THEME_KEY);
    if (kept === "dark" || kept === "light") return kept === "dark";
  } catch (e) { /* storage refused: the system's choice */ }
  return !!(window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches);
}

export function render({ model, el }) {
  el.style.display = "none";
  let applied = window.location.search;
  let first = true;  // the server's first query describes the page as opened: it replaces the entry
  let theme = keptTheme();  // the theme the browser asked for (or last kept)

  function push() {
    if (!model.query) return;  // (nothing yet)
    const query = model.query === "?" ? "" : model.query;  // "?": the page's bare URL
    if (query === applied) {
      first = false;
      return;
    }
    applied = query;
    const url = `${window.location.pathname}${query}${window.location.hash}`;
    if (first) window.history.replaceState({ tilescope: query }, "", url);
    else window.history.pushState({ tilescope: query }, "", url);
    first = false;
  }

  function onPop() {
    applied = window.location.search;
    model.send_msg({ restore: window.location.search });
  }

  function onKey(event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || !KEYS.has(event.key)) return;
    if (typingIn(event)) return;
    event.preventDefault();
    model.send_msg({ key: event.key });
  }

  // The user's own toggle (a click or a key on the theme button) is kept: the next change of the
  // page's theme after it is the user's, however long the server took to answer (a 5 s window
  // took a toggle answered after 5.03 s under load for a component settling, and undid it). Any
  // other change is the page's components settling on their first render (late under load, and
  // more than once): the wanted theme is sent again (at most 10 times, against a loop) and never
  // kept as the user's choice.
  let toggled = false;
  let resent = 0;
  function onToggle(event) {
    const path = event.composedPath ? event.composedPath() : [event.target];
    if (path.some((e) => e && e.getAttribute && /theme/i.test(e.getAttribute("aria-label") || ""))) toggled = true;
  }

  function onTheme() {
    if (model.dark === theme) return;  // (what the browser asked for)
    if (!toggled) {
      if (resent < 10) {
        resent += 1;
        model.send_msg({ theme: theme ? "dark" : "light" });
      }
      return;
    }
    toggled = false;
    theme = model.dark;
    try { window.localStorage.setItem(THEME_KEY, theme ? "dark" : "light"); } catch (e) { /* not kept */ }
  }

  function onServer(msg) {
    // clear_filters: the header filters of the table with that class (the value search's pick was hidden)
    if (!msg || typeof msg.clear_filters !== "string" || !window.Bokeh) return;
    for (const doc of window.Bokeh.documents) {
      for (const m of doc._all_models.values()) {
        if (!m.css_classes || !m.css_classes.includes(msg.clear_filters)) continue;
        const view = window.Bokeh.index.find_one(m);
        if (view && view.tabulator) view.tabulator.clearHeaderFilter();
      }
    }
  }

  model.on("query", push);
  model.on("msg:custom", onServer);
  model.on("dark", onTheme);
  window.addEventListener("popstate", onPop);
  document.addEventListener("keydown", onKey, true);
  document.addEventListener("pointerdown", onToggle, true);
  document.addEventListener("keydown", onToggle, true);
  model.on("remove", () => {
    window.removeEventListener("popstate", onPop);
    document.removeEventListener("keydown", onKey, true);
    document.removeEventListener("pointerdown", onToggle, true);
    document.removeEventListener("keydown", onToggle, true);
  });
  push();
  // The page's own components settle their theme on their first render (and would set a theme
  // sent earlier back): the wanted theme goes once the document is idle.
  let waited = 0;
  (function sendTheme() {
    const docs = window.Bokeh ? window.Bokeh.documents : [];
    if ((docs.length === 0 || !docs.every((doc) => doc.is_idle)) && waited < 20000) {
      waited += 50;
      setTimeout(sendTheme, 50);
      return;
    }
    model.send_msg({ theme: theme ? "dark" : "light" });
  })();
}
