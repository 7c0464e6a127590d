"""Issue 32, probe 5: a question that is Markdown ("[Reset your password](https://evil.example)")
comes back in `/gaps` as text, never as a clickable masked link: on Discord through the real
discord.py client against the fake, and on Slack through the real bolt app (`/byline gaps`)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

from bot.service import Asker, Service
from bot.state.gaps import GapStore
from tests.bot.test_discord import callback, followups, start_bot, text_of
from tests.fakes.discord_fake import GUILD_ID, DiscordFake, running_fake
from tests.platform_helpers import Bolt

PHISH = "[Reset your password](https://evil.example)"
TENANT = f"discord:{GUILD_ID}"
MANAGE_SERVER = 1 << 5
VIEW_AND_SEND = 1024 | 2048
# A masked link as Discord reads one: "[label](url)" with no backslash before "[", "]" or "(".
MASKED_LINK = re.compile(r"(?<!\\)\[[^\]]*(?<!\\)\]\(\s*<?https?:")


def asked(service: Service, asker: Asker, *questions: str) -> None:
    """Questions the seed article (a Manchester derby) cannot answer: each is kept as a gap."""
    for question in questions:
        service.ask(question, asker)
    kept = GapStore(service.state).since(datetime.now(UTC) - timedelta(days=1), asker.tenant)
    assert sorted(gap.question for gap in kept) == sorted(questions)


def test_a_markdown_question_in_discord_gaps_is_escaped(seed_service: Service) -> None:
    service = seed_service
    asked(service, Asker("discord", "42", "900", tenant=TENANT), PHISH)
    fake: DiscordFake
    with running_fake() as fake:
        bot = start_bot(fake, service)
        try:
            # A Manage Server member of this server, not one of BYLINE_DISCORD_ADMINS.
            command = fake.command(
                "gaps", [{"name": "since", "type": 3, "value": "7d"}], permissions=VIEW_AND_SEND | MANAGE_SERVER
            )
            fake.dispatch("INTERACTION_CREATE", command)
            assert callback(fake, command)["data"]["flags"] & 64
            body = followups(fake, command)[0]
        finally:
            bot.close()
    shown = text_of(body)
    assert "Reset your password" in shown, shown  # the gap is listed...
    assert PHISH not in shown and not MASKED_LINK.search(shown), shown  # ...as text, not as a link
    assert "\\[Reset your password\\]" in shown, shown
    assert body["allowed_mentions"]["parse"] == []


def test_a_markdown_question_in_slack_gaps_is_no_link(seed_service: Service, bolt: Bolt) -> None:
    # The same text, and Slack's own link syntax, asked in the fake's workspace (T0001).
    slack_link = "<https://evil.example|Reset your password>"
    asked(seed_service, Asker("slack", "U1", "C1", tenant="slack:T0001"), PHISH, slack_link)
    listed = bolt.response(bolt.command("/byline", "gaps 30d", user="UADMIN"))
    shown = json.dumps([listed.get("text", ""), listed.get("blocks", [])], ensure_ascii=False)
    assert "Reset your password" in shown, shown
    assert not re.search(r"<https?://[^>|]*\|", shown), shown  # no <url|label> link
    assert "&lt;https" in shown  # Slack's own syntax arrives escaped
