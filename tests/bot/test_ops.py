"""Running Byline as a service: SIGTERM, /healthz and /metrics, JSON logs, retention.

The serve tests start the real ``byline serve`` in a subprocess against the local Slack fake and
talk to it over 127.0.0.1 only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.health import Health
from bot.logs import configure_logging
from bot.state.store import BotState
from tests.conftest import PROJECT
from tests.fakes.slack_fake import FakeSlack

SLACK_TOKEN = "xoxb-1234567890-OPSSECRETTOKEN"
SIGNING_SECRET = "signing-OPS-SECRET-0123456789"
APP_TOKEN = "xapp-1-OPSSECRETAPPTOKEN"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def _wait(predicate, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _env(data_dir: Path, port: int, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BYLINE_", "SLACK_", "DISCORD_"))}
    return (
        env | {"BYLINE_DATA_DIR": str(data_dir), "BYLINE_HTTP_PORT": str(port), "BYLINE_FEED_INTERVAL": "3600"} | extra
    )


def _serve(env: dict[str, str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    with open(log, "w") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "bot.cli.main", "serve"],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )


def _signed_mention(port: int, text: str, event_id: str) -> int:
    body = json.dumps({
        "token": "legacy", "team_id": "T0001", "api_app_id": "A0001", "type": "event_callback",
        "event_id": event_id, "event_time": int(time.time()),
        "event": {"type": "app_mention", "user": "U1", "text": f"<@UBOT> {text}", "ts": "1700000001.000100",
                  "channel": "C1", "event_ts": "1700000001.000100"},
    })  # fmt: skip
    ts = str(int(time.time()))
    digest = hmac.new(SIGNING_SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/slack/events", data=body.encode(), headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status


def _stop(process: subprocess.Popen[bytes]) -> tuple[int, float]:
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        code = process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return -9, time.monotonic() - started
    return code, time.monotonic() - started


def test_headless_serve_reports_health_and_metrics_and_exits_0_on_sigterm(seed_data_dir: Path, tmp_path: Path) -> None:
    """No token and no terminal (a container): serve stays up with /healthz and /metrics."""
    data_dir = tmp_path / "data"
    shutil.copytree(seed_data_dir, data_dir)
    port = _free_port()
    log = tmp_path / "serve.log"
    process = _serve(_env(data_dir, port), tmp_path, log)
    try:
        _wait(lambda: _get(f"http://127.0.0.1:{port}/healthz")[0] in {200, 503}, 60, "the health endpoint")
        _wait(lambda: _get(f"http://127.0.0.1:{port}/healthz")[0] == 200, 120, "the model to be warm")
        status, body = _get(f"http://127.0.0.1:{port}/healthz")
        assert json.loads(body) == {"status": "ready", "model_warm": True, "library_open": True, "leader": True}
        status, metrics = _get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200
        for name in (
            "byline_questions_total",
            "byline_answer_seconds_bucket",
            "byline_queue_depth",
            "byline_feed_errors",
        ):
            assert name in metrics or name.removesuffix("_total") in metrics, name
        assert process.poll() is None, log.read_text()  # still running: no stdin does not end it
    finally:
        code, seconds = _stop(process)
    assert code == 0 and seconds < 10, (code, seconds, log.read_text()[-2000:])
    assert "Traceback" not in log.read_text()


def test_sigterm_finishes_the_answer_in_flight_then_exits_0(seed_data_dir: Path, tmp_path: Path) -> None:
    """Slack HTTP mode: health shares the events port; a question asked just before SIGTERM is
    still answered and posted; JSON log lines never contain a secret."""
    data_dir = tmp_path / "data"
    shutil.copytree(seed_data_dir, data_dir)
    slack = FakeSlack()
    port = _free_port()
    log = tmp_path / "serve.log"
    env = _env(
        data_dir,
        port,
        SLACK_BOT_TOKEN=SLACK_TOKEN,
        SLACK_APP_TOKEN=APP_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        BYLINE_SLACK_MODE="http",
        SLACK_API_URL=slack.api_url,
        BYLINE_LOG_FORMAT="json",
        BYLINE_LOG_LEVEL="DEBUG",
    )
    process = _serve(env, tmp_path, log)
    try:
        _wait(lambda: _get(f"http://127.0.0.1:{port}/healthz")[0] == 200, 120, "ready on the Slack port")
        assert _signed_mention(port, "what did Mourinho say about the referee?", "EvOps1") == 200
        code, seconds = _stop(process)
        posted = [c for c in slack.calls_to("chat.postMessage") if "Mourinho" in c.dump()]
    finally:
        if process.poll() is None:
            process.kill()
        slack.close()
    output = log.read_text()
    assert code == 0 and seconds < 10, (code, seconds, output[-2000:])
    assert posted, output[-3000:]
    lines = [line for line in output.splitlines() if line.strip()]
    assert lines and all(json.loads(line)["level"] for line in lines), output[-2000:]
    assert any("SIGTERM" in json.loads(line)["message"] for line in lines)
    for secret in (SLACK_TOKEN, APP_TOKEN, SIGNING_SECRET):
        assert secret not in output


def test_healthz_is_503_until_the_model_is_warm_and_the_library_open() -> None:
    health = Health()
    server = health.serve("127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        assert _get(f"{base}/healthz")[0] == 503
        health.library_open = True
        status, body = _get(f"{base}/healthz")
        assert status == 503 and json.loads(body)["status"] == "starting"
        health.model_warm = True
        assert _get(f"{base}/healthz")[0] == 200
        health.stopping = True
        assert _get(f"{base}/healthz") == (
            503,
            json.dumps({"status": "stopping", "model_warm": True, "library_open": True, "leader": False}),
        )
        health.feed_errors.inc()
        health.abstentions.labels(refused_by="names_absent").inc()
        status, metrics = _get(f"{base}/metrics")
        assert status == 200 and "byline_feed_errors_total 1.0" in metrics
        assert 'byline_abstentions_total{refused_by="names_absent"} 1.0' in metrics
        assert _get(f"{base}/other")[0] == 404
    finally:
        server.shutdown()
        server.server_close()


def test_metrics_count_questions_answers_and_abstentions(seed_service) -> None:  # type: ignore[no-untyped-def]
    from bot.service import Asker

    health = Health()
    health.instrument(seed_service)
    health.watch_queue(seed_service)
    asker = Asker("slack", "U1", "C1")
    seed_service.ask("what did Mourinho say about the referee?", asker)
    seed_service.ask("Who won the Champions League in 2005?", asker)
    text = __import__("prometheus_client").generate_latest(health.registry).decode()
    assert 'byline_questions_total{platform="slack"} 2.0' in text
    assert "byline_answers_total 1.0" in text
    assert "byline_abstentions_total{refused_by=" in text
    assert "byline_answer_seconds_count 2.0" in text and "byline_queue_depth 0.0" in text


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_retention_prunes_old_questions_and_user_ids(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    """On both state stores: the cluster backend's PostgreSQL once failed every prune."""
    location = tmp_path / "state.sqlite3" if backend == "sqlite" else request.getfixturevalue("postgres_url")
    state = BotState(location)
    try:
        old = state.save_answer("slack", "UOLD", "an old question", {"answered": True})
        assert state.mark_shared(old, "slack", "C1", "UOLD")
        state.vote(old, "slack", "UVOTER", 1)
        state.remember("slack:C1", "an old question")
        # 100 days later the old rows are past a 90-day retention; a new one is not.
        later = datetime.now(UTC) + timedelta(days=100)
        assert state.prune(90, now=later) >= 3
        assert state.answer(old) is None and state.votes(old) == {} and state.history("slack:C1") == []
        new = state.save_answer("slack", "UNEW", "a new question", {"answered": True})
        assert state.prune(90) == 0 and state.answer(new) is not None
        assert state.prune(0, now=later + timedelta(days=1000)) == 0  # 0 keeps everything
    finally:
        state.close()


def test_json_log_lines_redact_secrets(capsys) -> None:  # type: ignore[no-untyped-def]
    import logging

    configure_logging("INFO", [SLACK_TOKEN], "json")
    try:
        try:
            raise RuntimeError(f"token {SLACK_TOKEN} refused")
        except RuntimeError:
            logging.getLogger("byline.test").exception("calling Slack with %s", SLACK_TOKEN)
    finally:
        logging.getLogger().handlers = []
    line = capsys.readouterr().err.strip()
    entry = json.loads(line)
    assert entry["level"] == "ERROR" and entry["logger"] == "byline.test"
    assert "***" in entry["message"] and "RuntimeError" in entry["exception"]
    assert SLACK_TOKEN not in line


def test_the_project_ships_a_container_and_a_unit() -> None:
    dockerfile = (PROJECT / "Dockerfile").read_text()
    assert "download.pytorch.org/whl/cpu" in dockerfile and "USER " in dockerfile and "VOLUME" in dockerfile
    assert "healthz" in (PROJECT / "docker-compose.yml").read_text()
    assert "KillSignal=SIGTERM" in (PROJECT / "deploy" / "byline.service").read_text()


def test_the_compose_cluster_profile_runs_the_engines_two_bot_workers_and_an_embedder(tmp_path: Path) -> None:
    import yaml

    from bot.settings import Settings

    services = yaml.safe_load((PROJECT / "docker-compose.yml").read_text())["services"]
    cluster = {name for name, service in services.items() if "cluster" in service.get("profiles", [])}
    assert cluster == {"qdrant", "postgres", "redis", "byline-1", "byline-2", "embedder", "balancer"}
    assert "profiles" not in services["byline"]  # the default stays the one embedded service
    shards = []
    for name in ("byline-1", "byline-2", "embedder"):
        environment = {key: str(value) for key, value in services[name]["environment"].items()}
        environment["BYLINE_DATABASE_URL"] = "postgresql://byline:pw@postgres:5432/byline"
        environment["BYLINE_DATA_DIR"] = str(tmp_path / name)  # /data exists in the container only
        settings = Settings.from_env(environment)  # every value is one Byline accepts
        assert (settings.backend, settings.qdrant_url, settings.redis_url) == (
            "cluster",
            "http://qdrant:6333",
            "redis://redis:6379/0",
        )
        shards.append(settings.discord_shard_ids)
    assert shards[:2] == [(0,), (1,)] and services["embedder"]["command"] == ["worker"]
    balancer = (PROJECT / "deploy" / "nginx-cluster.conf").read_text()
    assert "server byline-1:3000" in balancer and "server byline-2:3000" in balancer


def test_a_taken_port_stops_a_headless_serve_with_one_line(seed_data_dir: Path, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    shutil.copytree(seed_data_dir, data_dir)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "bot.cli.main", "serve"],
            cwd=tmp_path,
            env=_env(data_dir, port),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
    lines = [line for line in result.stderr.splitlines() if line.strip() and " INFO " not in line]
    assert result.returncode == 1 and len(lines) == 1 and "BYLINE_HTTP_PORT" in lines[0], result.stderr
    assert "Traceback" not in result.stderr
