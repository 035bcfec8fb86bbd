"""What opening a cached profile runs: modules, lines and thread changes, from the open call to the
session's adopt (issue #23's "modules and thread hand-offs for opening a cached profile").

    .venv/bin/python -m benchmarks.trace_open_flow [--file NAME] [--json]   (from the repository's root;
    the script alone can be run in another checkout the same way: python PATH/trace_open_flow.py)

The driver is what a browser session does for ``?file=NAME`` (NAME under the default data root,
``sample_data/``): ``app.explorer.build_app([])`` (what ``app/main.py`` runs: the session's page),
then its ``load_initial()`` on an event loop of its own, with Panel's ``session_args`` saying
``file=NAME``. Without a Bokeh session the document lock is skipped (the change runs directly),
nothing else differs. It runs twice, in two
fresh processes sharing one cache folder (``TILESCOPE_CACHE_DIR``): the first normalises the file
into the cache (not traced), the second opens it from the cache and is traced.

Tracing (``sys.settrace`` and ``threading.settrace``, set before any thread starts) counts from the
call of ``load_initial`` (``app.page_router.PageRouter``'s; before #23's split, ``ExplorerApp``'s)
to the return of ``SessionState.adopt``, in every thread:

- **modules**: distinct ``tilescope.*`` modules with a frame called in that window;
- **lines**: distinct (file, line) pairs of ``tilescope`` code executed;
- **thread changes**: in the time-ordered list of ``tilescope`` lines executed, how often the thread
  differs from the previous line's (raw: a waiting loop that polls adds changes) and, counting only
  the first execution of each distinct line, how often the thread changes (**hand-offs**: work
  moving to another thread; polling repeats lines and so adds none); the threads that ran any;
- **open-flow modules**: the modules with a frame on a call stack from ``load_initial`` (on the loop)
  or from the load worker's loop down to the cache read (``loaders.cache``) and to
  ``SessionState.adopt``: the modules the open passes through, not those doing the kind's work
  they call (parsing, planning, drawing). Coroutine frames are on the stack of what they await.

The counting is the same for every commit; only ``load_initial`` and ``SessionState.adopt`` must
exist (both do since the load flow was moved off the loop).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

SAMPLE_NAME = "vit_finalist5.memory_profile.json"


class Tracer:
    def __init__(self) -> None:
        self.active = False
        self.done = False
        self.events: list[tuple[int, str, int]] = []  # (thread, file, line), tilescope only, in order
        self.modules: set[str] = set()
        self.flow_modules: set[str] = set()
        self.lock = threading.Lock()

    def _stack_modules(self, frame) -> set[str]:
        found = set()
        while frame is not None:
            name = frame.f_globals.get("__name__", "")
            if name.startswith("tilescope"):
                found.add(name)
            frame = frame.f_back
        return found

    def global_trace(self, frame, event, arg):
        code = frame.f_code
        if (
            not self.active
            and code.co_name == "load_initial"
            and frame.f_globals.get("__name__", "").startswith("tilescope.app")
        ):
            self.active = True
        if not self.active or self.done:
            return None
        name = frame.f_globals.get("__name__", "")
        if not name.startswith("tilescope"):
            return None
        with self.lock:
            self.modules.add(name)
            if name == "tilescope.loaders.cache" or (name == "tilescope.app.state" and code.co_name == "adopt"):
                self.flow_modules |= self._stack_modules(frame)
        return self.local_trace

    def local_trace(self, frame, event, arg):
        if self.done:
            return None
        if event == "line":
            with self.lock:
                self.events.append((threading.get_ident(), frame.f_code.co_filename, frame.f_lineno))
        elif (
            event == "return"
            and frame.f_code.co_name == "adopt"
            and frame.f_globals["__name__"] == "tilescope.app.state"
        ):
            self.done = True
        return self.local_trace

    def figures(self) -> dict:
        raw = sum(1 for a, b in itertools.pairwise(self.events) if a[0] != b[0])
        seen: set[tuple[str, int]] = set()
        first: list[int] = []
        for thread, file, line in self.events:
            if (file, line) not in seen:
                seen.add((file, line))
                first.append(thread)
        handoffs = sum(1 for a, b in itertools.pairwise(first) if a != b)
        # The hand-offs as segments: which thread (numbered by first appearance) ran which modules.
        order: dict[int, int] = {}
        segments: list[dict] = []
        seen.clear()
        for thread, file, line in self.events:
            if (file, line) in seen:
                continue
            seen.add((file, line))
            number = order.setdefault(thread, len(order))
            if not segments or segments[-1]["thread"] != number:
                segments.append({"thread": number, "modules": [], "lines": 0})
            module = _module_of(file).removeprefix("tilescope.")
            if module not in segments[-1]["modules"]:
                segments[-1]["modules"].append(module)
            segments[-1]["lines"] += 1
        flow_files = set(self.flow_modules)
        return {
            "modules": len(self.modules),
            "lines": len(seen),
            "thread_changes_raw": raw,
            "hand_offs": handoffs,
            "threads": len({t for t, _, _ in self.events}),
            "open_flow_modules": len(flow_files),
            "open_flow_lines": len({(f, n) for _, f, n in self.events if _module_of(f) in flow_files}),
            "open_flow_module_names": sorted(flow_files),
            "module_names": sorted(self.modules),
            "segments": segments,
        }


_files: dict[str, str] = {}


def _module_of(filename: str) -> str:
    found = _files.get(filename)
    if found is None:
        found = ""
        for name, module in list(sys.modules.items()):
            if name.startswith("tilescope") and getattr(module, "__file__", None) == filename:
                found = name
                break
        _files[filename] = found
    return found


def run_session(name: str, traced: bool) -> dict | None:
    """One session opening ``?file=name`` (module doc); traced: the figures."""
    tracer = Tracer()
    if traced:
        threading.settrace(tracer.global_trace)
        sys.settrace(tracer.global_trace)
    import panel as pn

    type(pn.state).session_args = property(lambda self: {"file": [name.encode()]})  # type: ignore[assignment]
    sys.path.insert(0, str(Path.cwd() / "tests"))
    from async_support import run_on_own_loop

    from tilescope.app.explorer import build_app

    app = build_app([])
    run_on_own_loop(getattr(app, "router", app).load_initial())  # (the page's router since #23; the page before)
    sys.settrace(None)
    threading.settrace(None)  # type: ignore[arg-type]
    if app.state.error:
        raise SystemExit(f"the open failed: {app.state.error}")
    return tracer.figures() if traced else None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", default=SAMPLE_NAME, help="a file under sample_data/ (default the sample)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", choices=("prime", "trace"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        figures = run_session(args.file, traced=args.child == "trace")
        if figures is not None:
            print(json.dumps(figures))
        return
    with tempfile.TemporaryDirectory(prefix="trace-open-") as cache:
        env = dict(os.environ, TILESCOPE_CACHE_DIR=cache)
        command = [sys.executable, str(Path(__file__).resolve()), "--file", args.file, "--child"]
        subprocess.run([*command, "prime"], check=True, env=env)
        out = subprocess.run([*command, "trace"], check=True, env=env, capture_output=True, text=True).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    for key in (
        "modules",
        "lines",
        "thread_changes_raw",
        "hand_offs",
        "threads",
        "open_flow_modules",
        "open_flow_lines",
    ):
        print(f"{key:>20}: {figures[key]:,}")
    for k, segment in enumerate(figures["segments"]):
        print(
            f"  segment {k}: thread {segment['thread']}, {segment['lines']:,} new lines: {', '.join(segment['modules'])}"
        )
    print("open-flow modules:", ", ".join(m.removeprefix("tilescope.") for m in figures["open_flow_module_names"]))


if __name__ == "__main__":
    main()
