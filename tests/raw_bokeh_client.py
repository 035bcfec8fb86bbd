"""A client of the served app that is not the browser: it speaks Bokeh's websocket protocol itself,
as a script attacking the server would, so it can send what the browser widget never sends (an
upload declared far over the cap, chunks that stop half-way).

``RawSession(url)`` opens a session (GET the page for its token, open ``/ws`` with it, pull the
document, send ``DocumentReady`` as the browser does), waits for the page's upload box (Panel's ``FileDropper`` model) and sends ``upload_event``s
to it exactly as Panel's JavaScript does (``{chunk, data, name, total_chunks, type}``, the chunk's
bytes as a binary buffer). Uses tornado's websocket client (a Bokeh dependency).
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
import uuid

from tornado.websocket import websocket_connect

_TOKEN = re.compile(r'"token":"([^"]+)"')
UPLOAD_BOX_WAIT_S = 60.0


class RawSession:
    def __init__(self, app_url: str):
        self.app_url = app_url
        self.ws = None
        self.upload_model_id: str | None = None
        self.models: dict[str, dict] = {}
        self.received: list[str] = []  # every text message the server sent since the document was pulled

    async def open(self, query: str = "") -> RawSession:
        with urllib.request.urlopen(self.app_url + query, timeout=60) as response:
            page = response.read().decode()
        token = _TOKEN.search(page).group(1)
        ws_url = self.app_url.replace("http://", "ws://") + "/ws"
        self.ws = await websocket_connect(ws_url, subprotocols=["bokeh", token], max_message_size=1 << 30)
        await self._receive()  # ACK
        await self._send("PULL-DOC-REQ", {})
        while True:
            header, content = await self._receive()
            if header["msgtype"] == "PULL-DOC-REPLY":
                break
        self._index(content["doc"])
        # The upload box joins the page with the views, once the first file is shown. The file is
        # loaded when the document is ready (Panel's onload, started by the browser's DocumentReady
        # event): send it, then wait for the patch that adds the box.
        ready = {"type": "event", "name": "document_ready", "values": {"type": "map"}}
        await self._send(
            "PATCH-DOC", {"events": [{"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": ready}]}
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + UPLOAD_BOX_WAIT_S
        while not (droppers := [m for m in self.models.values() if m.get("name", "").endswith("FileDropper")]):
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise RuntimeError(f"no FileDropper in the document after {UPLOAD_BOX_WAIT_S:.0f} s")
            header, content = await asyncio.wait_for(self._receive(), remaining)
            self.received.append(json.dumps(content))
            self._index(content)
        self.upload_model_id = droppers[0]["id"]
        return self

    def _index(self, node) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "id" in node:
                self.models[node["id"]] = node
            for value in node.values():
                self._index(value)
        elif isinstance(node, list):
            for value in node:
                self._index(value)

    async def _send(self, msgtype: str, content: dict, buffers: list[tuple[str, bytes]] = ()) -> None:
        header = {"msgid": uuid.uuid4().hex, "msgtype": msgtype}
        if buffers:
            header["num_buffers"] = len(buffers)
        await self.ws.write_message(json.dumps(header))
        await self.ws.write_message("{}")
        await self.ws.write_message(json.dumps(content))
        for buffer_id, payload in buffers:
            await self.ws.write_message(json.dumps({"id": buffer_id}))
            await self.ws.write_message(payload, binary=True)

    async def _receive(self) -> tuple[dict, dict]:
        """One whole message (header, content); its buffers are read and dropped."""
        header = json.loads(await self.ws.read_message())
        await self.ws.read_message()  # metadata
        content = json.loads(await self.ws.read_message())
        for _ in range(2 * header.get("num_buffers", 0)):
            await self.ws.read_message()
        return header, content

    async def send_chunk(self, chunk: int, total_chunks: int, data: bytes, name: str = "raw.json") -> None:
        buffer_id = uuid.uuid4().hex
        values = {
            "type": "map",
            "entries": [
                ["chunk", chunk],
                ["data", {"type": "bytes", "data": {"id": buffer_id}}],
                ["name", name],
                ["total_chunks", total_chunks],
                ["type", "application/json"],
            ],
        }
        event = {
            "type": "event",
            "name": "upload_event",
            "values": {"type": "map", "entries": [["model", {"id": self.upload_model_id}], ["data", values]]},
        }
        await self._send(
            "PATCH-DOC",
            {"events": [{"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": event}]},
            [(buffer_id, data)],
        )

    async def drain(self, seconds: float) -> None:
        """Read what the server sends for ``seconds`` (so its writes never block on us)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while (remaining := end - loop.time()) > 0:
            try:
                message = await asyncio.wait_for(self.ws.read_message(), remaining)
            except TimeoutError:
                return
            if message is None:
                return
            if isinstance(message, str):
                self.received.append(message)

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()
            self.ws = None
