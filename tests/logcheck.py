"""Failures that are only logged (in worker threads, reconnect loops) should fail the test."""

from __future__ import annotations

import logging

import pytest


def logged_errors(caplog: pytest.LogCaptureFixture, loggers: tuple[str, ...]) -> list[str]:
    """The ERROR (or worse) messages logged by loggers whose names start with ``loggers``."""
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith(loggers)]
