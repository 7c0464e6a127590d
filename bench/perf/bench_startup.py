"""Start-up: the wall time of ``byline ask`` on a built data dir against ``python -c "import torch"``.

Both are measured in the same run, interleaved (torch, ask, torch, ask, ...), so that a busy
machine slows both alike; the report is the medians and their ratio (target: at most 2).

    .venv/bin/python bench/perf/bench_startup.py [--runs 7] [--data DIR]

Without ``--data`` a data dir is built from ``seeds/`` in a temporary folder. One untimed ask
first writes the cached query encoder (``~/.cache/byline``), as any first ask on a machine does.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Run as a script (python bench/perf/bench_startup.py), so the path is worked out here.
PROJECT = Path(__file__).resolve().parents[2]
QUESTION = "what did Mourinho say about the referee?"
TARGET = 2.0


def _timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, cwd=PROJECT, check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each (default: 7)")
    parser.add_argument("--data", type=Path, help="a built data dir (default: the seeds, ingested into a temp dir)")
    args = parser.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "DISCORD_"))}
    with tempfile.TemporaryDirectory() as scratch:
        data = args.data or Path(scratch) / "data"
        env["BYLINE_DATA_DIR"] = str(data)
        byline = [sys.executable, "-m", "bot.cli.main"]
        if args.data is None:
            subprocess.run([*byline, "ingest", str(PROJECT / "seeds")], env=env, cwd=PROJECT, check=True)
        _timed([*byline, "ask", QUESTION], env)  # untimed: caches the query encoder once
        torch_times, ask_times = [], []
        for _ in range(args.runs):
            torch_times.append(_timed([sys.executable, "-c", "import torch"], env))
            ask_times.append(_timed([*byline, "ask", QUESTION], env))
    torch_median, ask_median = statistics.median(torch_times), statistics.median(ask_times)
    ratio = ask_median / torch_median
    print(f"python -c 'import torch': median {torch_median:.2f} s  ({', '.join(f'{t:.2f}' for t in torch_times)})")
    print(f"byline ask:               median {ask_median:.2f} s  ({', '.join(f'{t:.2f}' for t in ask_times)})")
    print(f"ratio: {ratio:.2f} (target <= {TARGET:.1f}) on {os.cpu_count()} cores, {args.runs} runs each")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
