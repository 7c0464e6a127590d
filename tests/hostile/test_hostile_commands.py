"""Hostile arguments to every command (issue 16, attacks 10, 11 and 13's Discord 4004), and the
Discord ``/ingest file:`` upload path.

Each argument a user types (a duration, a date, a page, a schedule, a question) either works or
gets a one-line reply that says the allowed range; none reaches the generic "something went
wrong". The property tests drive the real service and the real terminal chat over the seed
article; the Discord tests drive the real discord.py client against tests/fakes/discord_fake.py.
"""

from __future__ import annotations

import io
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.app import add_features
from bot.cli.main import main
from bot.commands.ingest import register_ingest
from bot.jobs.digest_schedule import MAX_SLEEP
from bot.limits import LimitSettings
from bot.platforms.discord.app import DiscordStartError
from bot.platforms.terminal.chat import chat, render
from bot.replies import DigestReply, Reply, TextReply
from bot.schedules import Schedule
from bot.service import Asker, Service
from bot.state.store import STATE_FILE, BotState
from retrieval.index.embedder import Embedder
from retrieval.ingest.fetch import Fetcher
from retrieval.library import Library
from tests.bot.test_discord import Bot, ErrorLog, callback, followups, settings_for, start_bot, text_of
from tests.fakes.discord_fake import GOOD_TOKEN, HUMAN, DiscordFake, running_fake

ADMIN = Asker(
    "terminal", "local", "terminal", is_admin=True, conversation="terminal", tenant="operator", is_operator=True
)
GENERIC = ("something went wrong", "Sorry —")
# Characters that broke or could break a line: lone surrogates, NUL and other controls, bidi
# overrides and isolates, zero-width and BOM, other scripts, combining marks.
HOSTILE = ["\ud800", "\udfff", "\x00", "\x1b[31m", "\x07", "\u202e", "\u2066", "\u200b", "\ufeff", "\u0301"]
HOSTILE += ["مورينيو", "穆里尼奥", "Ωμέγα", "\U0001f600", "²", "١٢", "\r", "\t"]


# -- a small library shared by the property tests ------------------------------------------


@pytest.fixture(scope="module")
def service(seed_data_dir: Path, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Service]:
    """The full service (digests, ingest) over a copy of the seed data, for this module."""
    copy = tmp_path_factory.mktemp("hostile") / "data"
    shutil.copytree(seed_data_dir, copy)
    library = Library.open(copy, embedder)
    limits = LimitSettings(user_burst=1_000_000, channel_burst=1_000_000)
    running = add_features(Service(library, BotState(copy / STATE_FILE), limits))
    # No allowlist and no retries: every generated URL is refused or fails at once, offline.
    register_ingest(running, Fetcher(retries=0, timeout=0.5, deadline=1.0))
    yield running
    running.state.close()
    library.close()


def assert_clear(reply: Reply) -> str:
    """A reply a user can read: rendered, encodable, not the generic error, short if a notice."""
    text = render(reply)
    text.encode("utf-8")  # no lone surrogate reaches a platform or the terminal
    assert not any(phrase in text for phrase in GENERIC), text
    if isinstance(reply, TextReply):
        assert text.strip() and len(text) < 3000, text[:300]
    return text


# -- attack 10: durations, dates, pages and schedules out of range -------------------------


@pytest.mark.parametrize(
    "when", ["99999999999h", "999999999d", "99999w", "0m", "1" + "0" * 5000 + "h", "0001-01-01", "1900-01-01 09:00"]
)
def test_digest_since_out_of_range_says_the_allowed_range(service: Service, when: str) -> None:
    reply = service.run_command(f"/digest since {when}", ADMIN)
    assert isinstance(reply, TextReply) and reply.error
    assert "10 years" in reply.text and "\n" not in reply.text and len(reply.text) < 300


def test_digest_since_in_range_still_works(service: Service) -> None:
    for when in ("1m", "2h", "3650d", "521w", "yesterday", "09:00"):
        assert isinstance(service.run_command(f"/digest since {when}", ADMIN), DigestReply), when


@pytest.mark.parametrize("page", ["²", "١", "1" * 5000, "0", "2", "99999999999999999999", "-1"])
def test_sources_page_out_of_range_says_the_range(service: Service, page: str) -> None:
    reply = service.run_command(f"/sources {page}", ADMIN)
    assert isinstance(reply, TextReply) and reply.error
    assert "from 1 to 1" in reply.text and len(reply.text) < 300


@pytest.mark.parametrize(
    ("schedule", "says"),
    [
        ("0 9 31 2 *", "never fires"),
        ("0 9 30 2 * Europe/London", "never fires"),
        ("daily 09:00 " + "A" * 5000, "Unknown timezone"),
        ("daily ²:00", "not a time of day"),
        ("weekly mon ١:٠٠", "not a time of day"),
    ],
)
def test_impossible_schedules_are_refused_with_the_reason(service: Service, schedule: str, says: str) -> None:
    reply = service.run_command(f"/digest subscribe {schedule}", ADMIN)
    assert isinstance(reply, TextReply) and reply.error, reply
    assert says in reply.text and len(reply.text) < 400, reply.text
    status = service.run_command("/digest status", ADMIN)
    assert_clear(status)


def test_a_stored_schedule_that_never_fires_breaks_neither_status_nor_the_loop(service: Service) -> None:
    # Saved before such schedules were refused (or written straight to the store).
    scheduler = service.scheduler
    assert scheduler is not None
    channel = Asker("terminal", "local", "never-fires", is_admin=True, tenant="operator", is_operator=True)
    scheduler.subscribe(channel.platform, channel.channel_id, Schedule("0 9 31 2 *", "UTC"), False, "local")
    try:
        assert 0 < scheduler.seconds_until_next() <= MAX_SLEEP
        status = assert_clear(service.run_command("/digest status", channel))
        assert "never fires" in status
    finally:
        service.run_command("/digest unsubscribe", channel)


def test_cli_digest_and_sources_refuse_out_of_range_arguments(
    seed_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "data"
    shutil.copytree(seed_data_dir, copy)
    monkeypatch.setenv("BYLINE_DATA_DIR", str(copy))
    monkeypatch.chdir(tmp_path)  # no .env here
    assert main(["digest", "--since", "99999999999h"]) == 2
    assert "10 years" in capsys.readouterr().err
    assert main(["sources", "5"]) == 1
    assert "from 1 to 1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main(["sources", "0"])
    assert usage.value.code == 2 and "pages are numbered from 1" in capsys.readouterr().err


# -- attack 11: hostile lines in `byline chat` ---------------------------------------------


def chat_lines(service: Service, *lines: str) -> str:
    out = io.StringIO()
    chat(service, io.StringIO("".join(line.replace("\n", " ") + "\n" for line in lines)), out)
    return out.getvalue()


@pytest.mark.parametrize(
    "line",
    [
        "\ud800\udfff what did Mourinho say?",
        "what\x00 did \u202eMourinho\u202c say about the \x1b[31mreferee\x07?",
        "/ask \ud800 Mourinho",
        "/search \udcff Kompany",
        "/ingest http://\ud800/",
        "/sources \ud800",
        "/\ud800",
        "\u202e\u2066",
        "Mourinho " * 30_000,
    ],
)
def test_hostile_chat_line_gets_a_reply_not_the_generic_error(service: Service, line: str) -> None:
    output = chat_lines(service, line)
    assert not any(phrase in output for phrase in GENERIC), output[:500]
    output.encode("utf-8")
    assert len(output.splitlines()) >= 2  # the banner, then a reply


def test_undecodable_bytes_on_stdin_do_not_end_the_chat(service: Service) -> None:
    # A real text stream, decoding strictly as stdin does under a UTF-8 locale.
    stdin = io.TextIOWrapper(io.BytesIO(b"caf\xe9 \xff\xfe Mourinho?\n/sources\n"), encoding="utf-8")
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="ascii")  # a terminal that cannot show “
    chat(service, stdin, stdout)
    stdout.flush()
    shown = stdout.buffer.getvalue().decode("ascii")  # type: ignore[attr-defined]
    assert "Articles, newest first" in shown and "went wrong" not in shown


# -- the property test: every command, generated arguments ----------------------------------

hostile_text = st.lists(
    st.one_of(st.characters(), st.sampled_from(HOSTILE), st.sampled_from(list(" :/-0123456789"))), max_size=30
).map("".join)
numbers = st.integers(min_value=-(10**30), max_value=10**30).map(str)
units = st.sampled_from(["m", "h", "d", "w", "min", " minutes", "hours", "days", " weeks", ""])
durations = st.builds(lambda n, u: f"{n}{u}", st.integers(min_value=-1, max_value=10**15), units)
dates = st.builds(
    lambda y, m, d, rest: f"{y:04d}-{m:02d}-{d:02d}{rest}",
    st.integers(1, 9999),
    st.integers(0, 13),
    st.integers(0, 32),
    st.sampled_from(["", " 09:00", "T23:59", "T00:00+14:00", "T12:00-12:00", " 25:61"]),
)
clock_times = st.builds(lambda h, m: f"{h}:{m:02d}", st.integers(-5, 10**6), st.integers(0, 99))
cron_field = st.one_of(
    st.sampled_from(["*", "*/0", "*/5", "1-5", "mon", "L", "?"]), numbers, st.integers(0, 60).map(str)
)
crons = st.builds(lambda *f: " ".join(f), cron_field, cron_field, cron_field, cron_field, cron_field)
zones = st.one_of(
    st.sampled_from(["", "UTC", "Europe/London", "Pacific/Kiritimati", "../../etc", "A" * 300]), hostile_text
)
schedules = st.one_of(
    st.builds(lambda t, z: f"daily {t} {z}", clock_times, zones),
    st.builds(
        lambda d, t, z: f"weekly {d} {t} {z}", st.sampled_from(["mon", "sunday", "xyz", "²"]), clock_times, zones
    ),
    st.builds(lambda c, z, a: f"{c} {z}{a}", crons, zones, st.sampled_from(["", " --always"])),
    hostile_text,
)
urls = st.one_of(
    st.builds(lambda p: f"http://10.0.0.1/{p}", hostile_text),
    st.builds(lambda p: f"https://[::1]:{p}", hostile_text),
    hostile_text.filter(lambda t: ":" not in t),  # no scheme: refused before any lookup
)
command_lines = st.one_of(
    st.builds(lambda a: f"/digest since {a}", st.one_of(durations, dates, clock_times, numbers, hostile_text)),
    st.builds(lambda a: f"/digest subscribe {a}", schedules),
    st.builds(lambda v: f"/digest {v}", st.one_of(st.sampled_from(["now", "status", "unsubscribe", ""]), hostile_text)),
    st.builds(lambda a: f"/sources {a}", st.one_of(numbers, hostile_text)),
    st.builds(lambda a: f"/ingest {a}", urls),
    st.builds(lambda a: f"/search {a}", hostile_text),
    st.builds(lambda a: f"/ask {a}", hostile_text),
    st.builds(lambda n, a: f"/{n} {a}", hostile_text, hostile_text),
    hostile_text,  # a question
)
PROPERTY = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


@PROPERTY
@given(line=command_lines)
def test_every_command_answers_generated_arguments_clearly(service: Service, line: str) -> None:
    reply = service.run_command(line, ADMIN) if line.startswith("/") else service.ask(line, ADMIN)
    assert_clear(reply)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=command_lines)
def test_the_terminal_chat_answers_generated_lines_clearly(service: Service, line: str) -> None:
    output = chat_lines(service, line)
    output.encode("utf-8")
    assert not any(phrase in output for phrase in GENERIC), output[:500]


# -- Discord: /ingest file:, slash arguments, a 4004 close -----------------------------------

DERBY = "Cup final in Ashford ends in a draw\n\nThe mayor said the replay would be on Tuesday.\n"
DERBY_MD = "---\ntitle: Marlow harbour reopens\n---\n\nThe **harbour master** said: “We are open again.”\n"


@pytest.fixture
def fake() -> Iterator[DiscordFake]:
    with running_fake() as started:
        yield started


@pytest.fixture
def discord_bot(fake: DiscordFake, seed_service: Service) -> Iterator[Bot]:
    handler = ErrorLog()
    loggers = [logging.getLogger("byline.discord"), logging.getLogger("discord")]
    for logger in loggers:
        logger.addHandler(handler)
    # Adding articles is for Byline's operators (bot/tenancy.py): the fake's member is one here.
    operator = settings_for(fake, seed_service.library.data_dir, discord_admins=frozenset({str(HUMAN["id"])}))
    running = start_bot(fake, seed_service, operator)
    yield running
    running.close()
    for logger in loggers:
        logger.removeHandler(handler)
    assert not handler.records, [r.getMessage() for r in handler.records]


@pytest.mark.parametrize(
    ("filename", "body", "title"),
    [("ashford.txt", DERBY, "Cup final in Ashford"), ("marlow.md", DERBY_MD, "Marlow harbour reopens")],
)
def test_discord_ingest_file_adds_a_text_or_markdown_attachment(
    fake: DiscordFake, discord_bot: Bot, seed_service: Service, filename: str, body: str, title: str
) -> None:
    attachment = fake.attachment(filename, body.encode())
    payload = fake.command_with_file("ingest", "file", attachment, permissions=1 << 4)
    fake.dispatch("INTERACTION_CREATE", payload)
    assert callback(fake, payload)["type"] == 5
    reply = text_of(followups(fake, payload)[0])
    assert f"Added “{title}" in reply, reply
    assert fake.find("GET", f"/attachments/{attachment['id']}/")  # downloaded from the CDN URL
    titles = [a.title for a in seed_service.library.store.list_articles(offset=0, limit=10)]
    assert any(t.startswith(title) for t in titles), titles


def test_discord_ingest_file_that_vanished_says_so(fake: DiscordFake, discord_bot: Bot) -> None:
    attachment = fake.attachment("gone.txt", DERBY.encode())
    fake.files.clear()  # deleted from the CDN before Byline fetched it
    payload = fake.command_with_file("ingest", "file", attachment, permissions=1 << 4)
    fake.dispatch("INTERACTION_CREATE", payload)
    reply = text_of(followups(fake, payload)[0])
    assert "gone.txt" in reply and "Attach it again" in reply, reply


def test_discord_slash_arguments_out_of_range_get_the_range(fake: DiscordFake, discord_bot: Bot) -> None:
    since = fake.command(
        "digest", [{"name": "since", "type": 1, "options": [{"name": "when", "type": 3, "value": "99999999999h"}]}]
    )
    fake.dispatch("INTERACTION_CREATE", since)
    assert "10 years" in text_of(followups(fake, since)[0])
    sources = fake.command("sources", [{"name": "page", "type": 4, "value": 7}])
    fake.dispatch("INTERACTION_CREATE", sources)
    assert "from 1 to 1" in text_of(callback(fake, sources)["data"])


def test_discord_4004_while_running_is_one_clear_line(fake: DiscordFake, seed_service: Service) -> None:
    running = start_bot(fake, seed_service)
    try:
        fake.revoke_token()
        running.thread.join(30)
        assert not running.thread.is_alive(), "the client kept running after a 4004 close"
    finally:
        running.stop.set()
    [failure] = running.failures
    assert isinstance(failure, DiscordStartError), repr(failure)
    message = str(failure)
    assert message.startswith("Discord rejected DISCORD_TOKEN") and "Developer Portal" in message
    assert "\n" not in message and GOOD_TOKEN not in message and fake.token not in message
