"""Issue 32, probe 8: a `.env` holding a NUL byte or bytes that are not UTF-8, a data dir that
cannot be created, and a full disk. Each is one line on stderr naming the file or setting and
what to do, a non-zero exit and no traceback; `byline` runs in process (``bot.cli.main.main``)."""

from __future__ import annotations

import errno
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.settings import environment_problem


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A working directory of its own (its `.env` is the one read), no platform tokens, and the
    root logger put back afterwards (``main`` sets up Byline's own)."""
    monkeypatch.chdir(tmp_path)
    for name in ("SLACK_BOT_TOKEN", "DISCORD_TOKEN", "BYLINE_DATA_DIR", "BYLINE_SEEDS_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BYLINE_DATA_DIR", str(tmp_path / "data"))
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield tmp_path
    root.handlers[:] = handlers
    root.setLevel(level)


def one_line(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """Runs `byline ARGV`: its exit code and its one stderr line (more than one fails the test)."""
    capsys.readouterr()
    code = main(list(argv))
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return code, lines[0]


def test_a_nul_byte_in_env_is_one_line_naming_the_file_and_line(
    clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (clean_env / ".env").write_bytes(b"BYLINE_LOG_LEVEL=INFO\nBYLINE_TIMEZONE=Europe/Lon\x00don\n")
    code, line = one_line(capsys, "sources")
    assert code != 0
    assert str(clean_env / ".env") in line and "line 2" in line and "NUL" in line and "delete it" in line, line


def test_env_that_is_not_utf8_is_one_line_naming_the_file_and_line(
    clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (clean_env / ".env").write_bytes(b"# settings\nBYLINE_LOG_LEVEL=INFO\nBYLINE_TIMEZONE=Europe/L\xf6ndon\n")
    code, line = one_line(capsys, "sources")
    assert code != 0
    assert str(clean_env / ".env") in line and "line 3" in line and "UTF-8" in line, line
    assert "save the file as UTF-8" in line, line


def test_a_data_dir_that_cannot_be_created_is_one_line_naming_the_setting(
    clean_env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BYLINE_DATA_DIR", "/proc/x")
    for command in (["sources"], ["ask", "what did Mourinho say?"]):
        code, line = one_line(capsys, *command)
        assert code != 0
        assert "/proc/x" in line and "BYLINE_DATA_DIR" in line, line


def test_a_full_disk_says_so_and_that_what_was_stored_is_intact(tmp_path: Path) -> None:
    # A real ENOSPC from the kernel: /dev/full refuses every write with it.
    with pytest.raises(OSError) as full, open("/dev/full", "wb") as device:
        device.write(b"x" * 4096)
        device.flush()
    assert full.value.errno == errno.ENOSPC
    line = environment_problem(full.value, tmp_path / "data")
    assert "\n" not in line
    assert str(tmp_path / "data") in line and "full" in line and "Free some space" in line, line
    assert "intact" in line, line
