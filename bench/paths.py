"""Where the benches find the project, their data and the shared corpora."""

from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
BENCH = PROJECT / "bench"
DATA = BENCH / "data"
SHARED_DATA = PROJECT.parent / "shared" / "data"
