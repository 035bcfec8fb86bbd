"""``tilescope serve [FILE | --data-root DIR] [--port N] [--address A] [--show] [--num-procs N]``:
serve the explorer at ``http://ADDRESS:PORT/app`` with Panel's server.

It is ``panel serve <the installed tilescope.app folder> --args ...`` with safe defaults, so it
works the same from a checkout and from a plain ``pip install`` anywhere:

- it listens on **127.0.0.1** unless ``--address`` says otherwise. On any other address it prints
  a warning: whoever reaches the address can open the served file and every file under the data
  root (``?file=NAME``);
- the browser's websocket is accepted only from the pages of that address and port (for a
  loopback address also ``localhost``; for ``0.0.0.0``/``::`` this machine's host names), plus
  each ``--allow-websocket-origin HOST[:PORT]`` given: a page of another site cannot drive a session;
- with no FILE and no ``--data-root`` it opens the bundled sample; FILE opens that file;
  ``--data-root DIR`` serves ``?file=NAME`` (and ``?dataset=NAME``) from DIR
  (``app.loading.parse_app_args``); ``--dataset DIR`` opens every session on the fleet view of a
  dataset written by ``tilescope batch``;
- ``--num-procs N`` is Panel's (Tornado forks N server processes sharing the port; the kernel hands
  each new connection to one of them). It helps when many sessions are open at once: each process
  builds its sessions on its own core. It costs memory: a process shares a loaded profile only
  between its own sessions (``app.shared``), so a profile open in sessions of N processes is loaded
  N times (memory × N, and each process's first open of it takes the full load time).
"""

from __future__ import annotations

import errno
import importlib.util
import ipaddress
import socket
import sys
from pathlib import Path

from tilescope.loaders.json_input import check_input
from tilescope.models.errors import TilescopeError
from tilescope.models.files import FileAccessError

DEFAULT_PORT = 5006
LOOPBACK = "127.0.0.1"
_ALL_INTERFACES = {"", "0.0.0.0", "::", "*"}


def _port(text: str) -> int:
    import argparse

    if not (text.isascii() and text.isdigit() and len(text) <= 5):  # int() would also read "٥٠٠٦"
        raise argparse.ArgumentTypeError(f"expected a port number 1..65535, found {text!r}")
    port = int(text)
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 1..65535, found {port}")
    return port


def _positive(text: str) -> int:
    import argparse

    if not text.isdigit() or len(text) > 6 or int(text) < 1:  # (non-ASCII digits: tilescope.cli refuses them)
        raise argparse.ArgumentTypeError(f"expected a positive integer, found {text!r}")
    return int(text)


def add_arguments(parser) -> None:
    opened = parser.add_mutually_exclusive_group()
    opened.add_argument("file", nargs="?", help="the file to open (default: the bundled sample)")
    opened.add_argument("--data-root", metavar="DIR", help="the folder whose files ?file=NAME URLs open")
    parser.add_argument(
        "--dataset", metavar="DIR", help="open every session on the fleet view of this dataset (tilescope batch)"
    )
    parser.add_argument("--port", type=_port, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT})")
    parser.add_argument(
        "--address", default=LOOPBACK, help=f"address to listen on (default {LOOPBACK}: this machine only)"
    )
    parser.add_argument("--show", action="store_true", help="open the app in a browser")
    parser.add_argument(
        "--num-procs",
        type=_positive,
        default=1,
        metavar="N",
        help="server processes (default 1; Panel's --num-procs). More serve more sessions at once (one core each), "
        "but each process loads its own copy of a profile: memory × N",
    )
    parser.add_argument(
        "--allow-websocket-origin",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="also accept the app's websocket from pages of this host (repeatable)",
    )


def app_directory() -> Path:
    """The folder of the installed ``tilescope.app`` package (it has ``main.py``), found without
    importing it (Panel imports it, once per process)."""
    spec = importlib.util.find_spec("tilescope.app")
    if spec is None or not spec.submodule_search_locations:
        raise TilescopeError("the tilescope.app package is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _host(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def websocket_origins(address: str, port: int, extra: list[str]) -> list[str]:
    """The ``HOST:PORT`` origins whose pages may open the app's websocket."""
    if is_loopback(address):
        hosts = [_host(address), "localhost", LOOPBACK]
    elif address in _ALL_INTERFACES:
        hosts = ["localhost", LOOPBACK, socket.gethostname(), socket.getfqdn()]
    else:
        hosts = [_host(address)]
    origins = [f"{h}:{port}" for h in dict.fromkeys(hosts) if h]
    return list(dict.fromkeys(origins + list(extra)))


def app_arguments(args) -> tuple[list[str], str]:
    """The ``--args`` of the app, and what a visitor can open (for the warning)."""
    from tilescope import samples

    dataset: list[str] = []
    exposed_dataset = ""
    if getattr(args, "dataset", None) is not None:
        folder = Path(args.dataset).expanduser().resolve()
        if not folder.is_dir():
            raise FileAccessError(args.dataset, "is not a directory")
        dataset, exposed_dataset = ["--dataset", str(folder)], f", the dataset {folder}"
    if args.file is not None:
        path = Path(args.file).expanduser().resolve()
        check_input(Path(args.file).expanduser())  # a regular, readable file (a FIFO is refused, not waited on)
        return [str(path), *dataset], f"{path}{exposed_dataset} and every file under {samples.sample_dir()}"
    if args.data_root is not None:
        root = Path(args.data_root).expanduser().resolve()
        if not root.is_dir():
            raise FileAccessError(args.data_root, "is not a directory")
        return ["--data-root", str(root), *dataset], f"every file under {root}{exposed_dataset}"
    return dataset, f"every file under {samples.sample_dir()}{exposed_dataset}"


def panel_command(args, app_args: list[str]) -> list[str]:
    """The ``panel serve`` command line this serves with (``sys.argv`` form)."""
    command = ["panel", "serve", str(app_directory()), "--address", args.address, "--port", str(args.port)]
    command += [
        f"--allow-websocket-origin={o}" for o in websocket_origins(args.address, args.port, args.allow_websocket_origin)
    ]
    if args.num_procs != 1:
        command += ["--num-procs", str(args.num_procs)]
    if args.show:
        command.append("--show")
    if args.quiet:
        command += ["--log-level", "warning"]
    if app_args:
        command += ["--args", *app_args]
    return command


def refuse_port_in_use(address: str, port: int) -> None:
    """A TilescopeError when ``address:port`` cannot be listened on, checked before anything is
    printed (Panel would say "serving" first, then fail). Bound as Tornado binds (SO_REUSEADDR), so
    a port only lingering in TIME_WAIT is not refused; one another program listens on is. Any other
    failure (an address not of this machine) is left to Panel's server to report."""
    try:
        found = socket.getaddrinfo(address or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror:
        return
    for family, kind, proto, _, where in found:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(where)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise TilescopeError(
                        f"port {port} is already in use on {where[0]} (choose another with --port N)"
                    ) from None


def run(args) -> int:
    app_args, exposed = app_arguments(args)
    refuse_port_in_use(args.address, args.port)
    command = panel_command(args, app_args)
    host = "localhost" if args.address in _ALL_INTERFACES else _host(args.address)
    if not is_loopback(args.address):
        print(
            f"tilescope: warning: listening on {args.address or 'every interface'}, port {args.port}: anyone who can reach "
            f"it can open {exposed}",
            file=sys.stderr,
            flush=True,
        )
    if not args.quiet:
        print(f"tilescope: serving the explorer at http://{host}:{args.port}/app", file=sys.stderr, flush=True)
    from panel.command import main as panel_main  # Panel is imported only to serve

    sys.argv = command
    try:
        panel_main()
    except SystemExit as exc:  # Panel's own errors (a port in use, say) end with its message
        return exc.code if isinstance(exc.code, int) else 1
    return 0
