// Installed before the page's scripts (Playwright's add_init_script): every Bokeh protocol message
// the server sends over the websocket is noted in window.__tsMessages as [msgtype, time], read
// from its header frame (a Bokeh message is a header, a metadata and a content frame, then buffers).
// This listener is added before Bokeh's own, so window.__tsOnMessage (if a test sets it) runs
// before the message is applied: it sees the page as it was when the server's answer arrived.
(() => {
  const received = window.__tsMessages = [];
  const Native = window.WebSocket;
  function Counting(...args) {
    const socket = new Native(...args);
    socket.addEventListener("message", (event) => {
      if (typeof event.data !== "string" || !event.data.includes('"msgtype"')) return;
      try {
        const header = JSON.parse(event.data);
        if (header.msgtype) received.push([header.msgtype, performance.now()]);
        if (header.msgtype && window.__tsOnMessage) window.__tsOnMessage(header.msgtype);
      } catch (error) { /* a content frame that merely mentions msgtype */ }
    });
    return socket;
  }
  Counting.prototype = Native.prototype;
  Object.assign(Counting, Native);
  window.WebSocket = Counting;
})();
