// The page's URL and keyboard (app/widgets/page_controls.py).
// - query: the server sets it after every change of the shareable state; it is pushed onto the
//   browser's history (one entry per change), and the back/forward buttons send the URL's
//   query back (the server restores that state).
// - keys: ←/→, Home/End and p are sent to the server whenever the focus is not in a text field.
const KEYS = new Set(["ArrowLeft", "ArrowRight", "Home", "End", "p"]);

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
    if (element.getAttribute && element.getAttribute("role") === "slider") return true;  // a drag handle keeps its keys
  }
  return false;
}

export function render({ model, el }) {
  el.style.display = "none";
  let applied = window.location.search;
  let first = true;  // the server's first query describes the page as opened: it replaces the entry

  function push() {
    const query = model.query || "";
    if (!query || query === applied) {
      if (query) first = false;
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

  model.on("query", push);
  window.addEventListener("popstate", onPop);
  document.addEventListener("keydown", onKey, true);
  model.on("remove", () => {
    window.removeEventListener("popstate", onPop);
    document.removeEventListener("keydown", onKey, true);
  });
  push();
}
