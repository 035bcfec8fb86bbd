"""Placeholder until its issue lands: `tilescope advise` reports that it is not available yet."""
from models.errors import TilescopeError


def add_arguments(parser) -> None:
    parser.add_argument("rest", nargs="*")


def run(args) -> int:
    raise TilescopeError("'advise' is not implemented yet")
