"""The import contracts in pyproject.toml's ``[tool.importlinter]``: bench above bot above
retrieval, retrieval's layers, and no import cycles beyond the listed exceptions (issue 33).

Runs ``lint-imports`` as a user would (``.venv/bin/lint-imports`` from the checkout gives the same
report), in a child process: it puts the working directory on ``sys.path`` (``bench`` is not
installed) and sets up its own logging, neither of which should leak into the test session.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
LINT_IMPORTS = "from importlinter.cli import lint_imports_command; lint_imports_command()"


def test_import_contracts_are_kept() -> None:
    # No cache: lint-imports would otherwise write .import_linter_cache/ into the checkout.
    command = [sys.executable, "-c", LINT_IMPORTS, "--config", str(ROOT / "pyproject.toml"), "--no-cache", "--no-logo"]
    # Wide lines, so a contract's name or a broken import is not wrapped in the report.
    env = {**os.environ, "COLUMNS": "200"}
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    report = result.stdout + result.stderr
    if result.returncode != 0:
        pytest.fail(f"lint-imports found broken import contracts (exit {result.returncode}):\n{report}", pytrace=False)
    # An exception (ignore_imports) that no longer matches an import: the cycle it excused is gone,
    # so the exception should go too. Reported, not failed, so that removing a cycle never breaks
    # the build of whoever removed it.
    if "Warnings" in report:
        warnings.warn(f"lint-imports: stale import-contract exceptions:\n{report}", stacklevel=1)
