"""pyarrow without pandas, for processes that only write tables (``tilescope normalise``, the
workers of ``tilescope batch``).

pyarrow imports pandas at its first ``pa.array`` (to recognise pandas objects among its inputs):
~50 MB resident (31 MB of heap, 18 MB of code) and ~0.35 s of CPU (350 modules) that writing
Parquet never uses. When nothing has imported pandas yet, ``arrow_without_pandas`` makes that
first look while ``import pandas`` fails, and pyarrow settles on "no pandas" for the process
(converting tables to pandas is then unavailable there): call it only in a process that never
converts to pandas.
"""

from __future__ import annotations

import sys


class _RefusePandas:
    """An import finder under which ``import pandas`` fails (ModuleNotFoundError)."""

    @staticmethod
    def find_spec(name: str, path=None, target=None):
        if name == "pandas":
            raise ModuleNotFoundError("pandas is not imported by this process", name=name)
        return None


def arrow_without_pandas() -> None:
    """pyarrow's pandas probe made with pandas refused (module doc); nothing when pandas is
    imported already."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    sys.meta_path.insert(0, _RefusePandas)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(_RefusePandas)
