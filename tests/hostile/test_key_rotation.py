"""Issue 32, probe 11: rotating BYLINE_TOKEN_KEY. Installations sealed with the old key, one
start with ``new,old`` seals them again with the new key, and from then on ``new`` alone opens
every one of them: the old key can be dropped and the rotation completes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from bot.service import Service
from bot.state.slack_installations import SlackInstallations
from bot.state.store import BotState
from bot.token_crypto import TokenCipher, TokenKeyError
from tests.bot.test_slack_oauth import Served, oauth_settings, restarted
from tests.fakes.slack_fake import CLIENT_ID, Call, FakeSlack

OLD = Fernet.generate_key().decode()
NEW = Fernet.generate_key().decode()
TEAMS = {"TAAA": "Acme", "TBBB": "Bravo", "TCCC": "Charlie"}


def sealed_rows(state: BotState) -> list[tuple[str, str]]:
    rows = state._connect().execute("SELECT team_id, sealed FROM slack_installations ORDER BY team_id")
    return [(str(team), str(sealed)) for team, sealed in rows]


def in_channel(channel: str) -> Callable[[Call], bool]:
    return lambda call: call.params["channel"] == channel


def test_a_start_with_new_and_old_reseals_so_new_alone_opens_everything(
    seed_service: Service, slack: FakeSlack, tmp_path: Path
) -> None:
    settings = oauth_settings(slack, tmp_path, token_key=OLD)
    first = Served(seed_service, slack, settings)
    for team, name in TEAMS.items():
        assert first.install(team, name)[0] == 200
    first.close()
    before = sealed_rows(seed_service.state)
    assert [team for team, _ in before] == sorted(TEAMS)
    with pytest.raises(TokenKeyError):  # the new key alone cannot open them yet
        SlackInstallations(seed_service.state, TokenCipher(NEW), CLIENT_ID).check_key()

    # One start with the new key first and the old one after it: every row is sealed again.
    assert SlackInstallations(seed_service.state, TokenCipher(f"{NEW},{OLD}"), CLIENT_ID).check_key() == len(TEAMS)
    after = sealed_rows(seed_service.state)
    assert [team for team, _ in after] == [team for team, _ in before]
    new_alone = TokenCipher(NEW)
    for (team, old_sealed), (_, new_sealed) in zip(before, after, strict=True):
        assert new_sealed != old_sealed
        assert new_alone.open(new_sealed) == TokenCipher(OLD).open(old_sealed), team
    # A second start with both keys has nothing left to do.
    SlackInstallations(seed_service.state, TokenCipher(f"{NEW},{OLD}"), CLIENT_ID).check_key()
    assert sealed_rows(seed_service.state) == after

    # The old key dropped: the app starts, and answers in each workspace with that one's token.
    service, rotated = restarted(seed_service, slack, replace(settings, token_key=NEW))
    try:
        for number, team in enumerate(TEAMS):
            assert rotated.mention(team, f"C{team}", f"1700000100.00010{number}")[0] == 200
            answer = slack.wait_call("chat.postMessage", in_channel(f"C{team}"))
            assert answer.token == slack.workspace(team).bot_token
    finally:
        rotated.close()
        service.state.close()


def test_a_value_no_key_opens_is_refused_and_one_already_new_is_left_alone() -> None:
    other = TokenCipher(Fernet.generate_key().decode())
    sealed = other.seal("xoxb-a-token")
    with pytest.raises(TokenKeyError):
        TokenCipher(f"{NEW},{OLD}").resealed(sealed)
    assert TokenCipher(f"{NEW},{OLD}").resealed(TokenCipher(NEW).seal("x")) is None  # already new
    assert TokenCipher(NEW).open(TokenCipher(f"{NEW},{OLD}").resealed(TokenCipher(OLD).seal("x")) or "") == "x"
