"""Where the app reads and writes, without a browser:

- ``?file=`` names resolve only under the data root (``app.loading.resolve_in_root``): absolute
  names, ``..`` in any spelling, symlinks (to files or folders) leading out are refused, for any
  name built from those parts (hypothesis);
- uploads above the documented cap are refused with a message (``app.loading.check_upload_size``),
  and the README states the same cap;
- the server binds to loopback: ``make run``'s command, started for real, listens on 127.0.0.1 only,
  and every ``panel serve`` command the README documents passes ``--address 127.0.0.1``;
- saved edit sets are written atomically and never replace a file unless asked.

(The browser side of the refusals: tests/test_security_browser.py.)
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import time
import urllib.parse
from pathlib import Path

import pytest
from browser_support import REPO_ROOT, free_port
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilescope.app.loading import MAX_UPLOAD_BYTES, PathRefused, check_upload_size, resolve_in_root
from tilescope.loaders.edit_sets import load_edit_set
from tilescope.models.edits import TilingEdit, save_edit_set
from tilescope.models.errors import InputError, TilescopeError
from tilescope.models.files import FileAccessError, write_atomically

README = REPO_ROOT / "README.md"


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """``root/`` with a file, a sub-folder, a symlink to a file inside, and symlinks (file and
    folder) leading outside; ``outside/secret.json`` beside it."""
    base = tmp_path_factory.mktemp("paths")
    root, outside = base / "root", base / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "a.json").write_text("{}")
    (root / "sub" / "b.json").write_text("{}")
    (outside / "secret.json").write_text('{"secret": true}')
    os.symlink(root / "a.json", root / "inside-link.json")
    os.symlink(outside / "secret.json", root / "out-link.json")
    os.symlink(outside, root / "out-dir")
    os.symlink("../../outside/secret.json", root / "sub" / "relative-out.json")
    return root, outside


def test_names_under_the_root_resolve_there(tree):
    root, _ = tree
    real = root.resolve()
    assert resolve_in_root(root, "a.json") == real / "a.json"
    assert resolve_in_root(root, "sub/b.json") == real / "sub" / "b.json"
    assert resolve_in_root(root, "inside-link.json") == real / "a.json"  # a symlink staying inside is fine


@pytest.mark.parametrize(
    "name, reason",
    [
        ("../../etc/passwd", "'..' is not allowed"),
        ("..", "'..' is not allowed"),
        ("sub/../../outside/secret.json", "'..' is not allowed"),
        ("sub/..", "'..' is not allowed"),
        ("..\\..\\etc\\passwd", "'..' is not allowed"),  # Windows separators
        ("/etc/passwd", "absolute paths are not allowed"),
        ("//etc/passwd", "absolute paths are not allowed"),
        ("\\etc\\passwd", "absolute paths are not allowed"),
        ("out-link.json", "resolves outside the data root"),  # symlink to a file outside
        ("out-dir/secret.json", "resolves outside the data root"),  # symlinked folder outside
        ("sub/relative-out.json", "resolves outside the data root"),  # relative symlink climbing out
        ("", "empty"),
        ("a.json\x00.png", "empty or not text"),
        # a name is spelt one way: folder and file names joined by '/', no empty or '.' part
        ("a.json/", "an empty or '.' part"),
        ("a.json/.", "an empty or '.' part"),
        ("a.json/./", "an empty or '.' part"),
        ("a.json\\", "an empty or '.' part"),
        ("./a.json", "an empty or '.' part"),
        ("sub//b.json", "an empty or '.' part"),
        ("sub/./b.json", "an empty or '.' part"),
        ("sub/", "an empty or '.' part"),
        (".", "an empty or '.' part"),
    ],
)
def test_names_leading_out_of_the_root_are_refused(tree, name, reason):
    root, _ = tree
    with pytest.raises(PathRefused, match=re.escape(reason)):
        resolve_in_root(root, name)


def test_an_absolute_name_is_refused_even_inside_the_root(tree):
    root, _ = tree
    with pytest.raises(PathRefused, match="absolute paths are not allowed"):
        resolve_in_root(root, str(root / "a.json"))


@pytest.mark.parametrize(
    "query",
    [
        "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "..%2f..%2fetc%2fpasswd",
        "%2e%2e/%2e%2e/etc/passwd",
        "%2Fetc%2Fpasswd",
        "%2e%2e%5c%2e%2e%5cetc%5cpasswd",
        "out-dir%2Fsecret.json",
    ],
)
def test_url_encoded_traversal_is_refused_once_decoded(tree, query):
    """The server hands the app the ``?file=`` value URL-decoded (as a browser request would arrive)."""
    root, _ = tree
    name = urllib.parse.parse_qs(f"file={query}")["file"][0]
    with pytest.raises(PathRefused):
        resolve_in_root(root, name)


@pytest.mark.parametrize(
    "name", ["%2e%2e%2fouter.json", "%252e%252e%252fetc%252fpasswd", "．．/etc/passwd", "~/.ssh/id_rsa"]
)
def test_names_that_only_look_like_traversal_stay_inside(tree, name):
    """Still-encoded, double-encoded, full-width dots, a tilde: ordinary names under the root
    (the file system decodes nothing), so at worst a file that does not exist there."""
    root, _ = tree
    resolved = resolve_in_root(root, name)
    assert resolved.is_relative_to(root.resolve())
    assert not resolved.exists()


PARTS = st.sampled_from(
    [
        "..",
        ".",
        "",
        "a.json",
        "sub",
        "b.json",
        "out-dir",
        "out-link.json",
        "inside-link.json",
        "secret.json",
        "relative-out.json",
        "%2e%2e",
        "~",
        "outside",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parts=st.lists(PARTS, min_size=1, max_size=6),
    separator=st.sampled_from(["/", "\\"]),
    lead=st.sampled_from(["", "/", "\\"]),
)
def test_any_name_is_refused_or_resolves_inside_the_root(tree, parts, separator, lead):
    root, outside = tree
    name = lead + separator.join(parts)
    try:
        resolved = resolve_in_root(root, name)
    except PathRefused:
        return
    assert resolved.is_relative_to(root.resolve()), (name, resolved)
    assert not resolved.is_relative_to(outside.resolve())


# ----------------------------------------------------------------------------- uploads


def test_uploads_above_the_cap_are_refused_with_a_message():
    check_upload_size(0)
    check_upload_size(MAX_UPLOAD_BYTES)  # exactly the cap is accepted
    with pytest.raises(TilescopeError) as refused:
        check_upload_size(MAX_UPLOAD_BYTES + 1)
    message = str(refused.value)
    assert message.startswith("refused upload:")
    assert f"{MAX_UPLOAD_BYTES + 1:,} bytes" in message and "200 MB" in message
    assert "\n" not in message


def test_the_readme_documents_the_upload_cap():
    assert MAX_UPLOAD_BYTES == 200 * 1024 * 1024
    section = readme_section("## What tilescope promises about bad input and your data")
    assert "200 MB" in section and "MAX_UPLOAD_BYTES" in section


# ----------------------------------------------------------------------------- loopback


def readme_section(heading: str) -> str:
    text = README.read_text()
    assert heading in text, f"README.md has no section {heading!r}"
    section = text.split(heading, 1)[1]
    return section.split("\n## ", 1)[0]


def documented_serve_commands(text: str) -> list[str]:
    """Every ``panel serve`` / ``tilescope serve`` command in inline code or fenced blocks of a Markdown text."""
    commands = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S):
        commands += [line.strip() for line in block.splitlines() if re.search(r"(panel|tilescope) serve", line)]
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    commands += [
        span
        for span in re.findall(r"`([^`\n]+)`", prose)
        if re.match(r"\s*(\.venv/bin/)?(panel|tilescope) serve( |$)", span)
    ]
    return commands


def test_documented_serve_commands_bind_loopback():
    """``tilescope serve`` is on loopback unless --address says otherwise; ``panel serve`` is not."""
    commands = documented_serve_commands(README.read_text())
    assert any("tilescope serve" in c for c in commands), "the README documents how to serve the app"
    # (a synopsis such as ``[--address A]`` names the option, it does not choose an address)
    loose = [
        c
        for c in commands
        if ("panel serve" in c and "--address 127.0.0.1" not in c)
        or ("tilescope serve" in c and re.search(r"--address (?!127\.0\.0\.1|A\])", c))
    ]
    assert loose == [], f"README commands that would listen on every interface: {loose}"


def make_run_command(port: int) -> list[str]:
    """The ``tilescope serve`` command ``make run`` runs (``make -n``: printed, not run)."""
    out = subprocess.run(
        ["make", "-n", "run", f"PORT={port}"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout
    lines = [line for line in out.splitlines() if "tilescope serve" in line]
    assert len(lines) == 1, out
    return shlex.split(lines[0])


def listening_addresses(port: int) -> set[str]:
    """Local addresses of sockets listening on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].split(":")
            if int(port_hex, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                raw = bytes.fromhex(address)
                if width == 8:
                    found.add(socket.inet_ntop(socket.AF_INET, raw[::-1]))
                else:  # four little-endian 32-bit words
                    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
                    found.add(socket.inet_ntop(socket.AF_INET6, words))
    return found


@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="reads Linux's /proc/net/tcp")
def test_make_run_listens_on_loopback_only():
    port = free_port()
    command = make_run_command(port)
    assert "--address" not in command or command[command.index("--address") + 1] == "127.0.0.1"
    command = [part for part in command if part != "--show"]  # no browser to open here
    process = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while not listening_addresses(port):
            assert process.poll() is None, f"make run's server exited with {process.returncode}"
            assert time.monotonic() < deadline, "make run's server did not listen within 90 s"
            time.sleep(0.3)
        assert listening_addresses(port) <= {"127.0.0.1", "::1"}, listening_addresses(port)
        # and from another of this machine's addresses, if it has one, nothing answers
        for address in {info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)}:
            if not address.startswith("127."):
                with pytest.raises(OSError):
                    socket.create_connection((address, port), timeout=2).close()
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


# ----------------------------------------------------------------------------- what gets written


def test_a_saved_edit_set_never_replaces_a_file_unless_asked(tmp_path):
    path = tmp_path / "edits.json"
    first = [TilingEdit(84, axis=1, partitions=18)]
    save_edit_set(path, first)
    kept = path.read_bytes()
    with pytest.raises(InputError, match="exists already"):
        save_edit_set(path, [TilingEdit(85, replicas=27)])
    assert path.read_bytes() == kept and load_edit_set(path) == first
    save_edit_set(path, [TilingEdit(85, replicas=27)], overwrite=True)
    assert load_edit_set(path) == [TilingEdit(85, replicas=27)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edits.json"]  # no temporary left behind


def test_an_interrupted_replace_leaves_the_old_file_whole(tmp_path, monkeypatch):
    """Atomic: the new bytes go to a temporary file first; if the final rename fails, the old
    file is untouched and the temporary removed."""
    path = tmp_path / "edits.json"
    path.write_text(json.dumps({"old": True}))

    def failing_replace(src, dst):
        raise OSError("disk went away")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(FileAccessError, match=r"edits.json: cannot write it: disk went away"):
        write_atomically(path, b'{"new": true}', overwrite=True)
    assert json.loads(path.read_text()) == {"old": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edits.json"]
