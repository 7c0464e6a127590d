"""The house style holds: ruff lint and format, and mypy, over the whole project."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import PROJECT

PACKAGES = ["retrieval", "bot", "bench", "tests"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=PROJECT, capture_output=True, text=True, timeout=600)


def test_ruff_lint_and_format() -> None:
    lint = _run("ruff", "check", *PACKAGES)
    assert lint.returncode == 0, lint.stdout[-4000:]
    formatted = _run("ruff", "format", "--check", *PACKAGES)
    assert formatted.returncode == 0, formatted.stdout[-4000:]


def test_mypy() -> None:
    result = _run("mypy", "retrieval", "bot", "bench")
    assert result.returncode == 0, result.stdout[-4000:]
