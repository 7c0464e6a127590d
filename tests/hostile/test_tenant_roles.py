"""Issue 32, probes 1–4: one tenant can neither see nor change another's, through the real
adapters (discord.py against the local fake, the bolt app receiving signed requests).

1. The owner of a second Discord server (Manage Server there, not an operator) runs /gaps: she
   sees her server's unanswered questions only. 2. She runs /remove and /ingest: refused, the
   shared library is the operator's. 3. A Slack workspace's admin runs /byline gaps: no other
   workspace's question. 4. /ask private then a public /ask in the same channel: the public
   answer is not read in the light of the private question.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.replies import AnswerReply
from bot.service import Asker, Service
from retrieval.models import Answer
from tests.bot.test_discord import callback, followups, settings_for, start_bot, text_of
from tests.fakes.discord_fake import GUILD_ID, HUMAN, DiscordFake, running_fake
from tests.platform_helpers import checked_bolt

OTHER_GUILD, OTHER_CHANNEL = 900000000000000555, 900000000000000556
MANAGE_SERVER = 1024 | 2048 | 32
SECRET_QUESTION = "When is the Acme layoff announcement going out?"
MINE = "Who won the Champions League in 2005?"


def abstain(service: Service, question: str, asker: Asker) -> None:
    reply = service.ask(question, asker)
    assert isinstance(reply, AnswerReply) and not reply.answer.answered, reply


def test_a_second_servers_owner_sees_only_her_gaps_and_cannot_change_the_library(seed_service: Service) -> None:
    # The first server, and a Slack workspace, each asked something Byline could not answer.
    abstain(seed_service, SECRET_QUESTION, Asker("discord", "7", "900", tenant=f"discord:{GUILD_ID}"))
    abstain(seed_service, SECRET_QUESTION + " (Slack)", Asker("slack", "U1", "C1", tenant="slack:T0001"))
    abstain(seed_service, MINE, Asker("discord", "8", str(OTHER_CHANNEL), tenant=f"discord:{OTHER_GUILD}"))
    articles = seed_service.library.store.article_count()
    fake: DiscordFake
    with running_fake() as fake:
        fake.other_guilds[OTHER_GUILD] = [OTHER_CHANNEL]
        bot = start_bot(fake, seed_service)
        try:
            gaps = fake.command(
                "gaps",
                [{"name": "since", "type": 3, "value": "7d"}],
                permissions=MANAGE_SERVER,
                channel_id=OTHER_CHANNEL,
            )
            fake.dispatch("INTERACTION_CREATE", gaps)
            callback(fake, gaps)
            text = text_of(followups(fake, gaps)[0])
            assert "Champions League" in text
            assert "Acme" not in text and "C1" not in text and "900" not in text.replace(str(OTHER_CHANNEL), "")
            for name, options in (
                ("remove", [{"name": "articles", "type": 3, "value": "1"}]),
                ("ingest", [{"name": "url", "type": 3, "value": "https://example.org/planted"}]),
            ):
                attempt = fake.command(name, options, permissions=MANAGE_SERVER, channel_id=OTHER_CHANNEL)
                fake.dispatch("INTERACTION_CREATE", attempt)
                callback(fake, attempt)
                assert "Only Byline's operators" in text_of(followups(fake, attempt)[0])
        finally:
            bot.close()
    assert seed_service.library.store.article_count() == articles


def test_an_operator_may_change_the_library_from_any_server(seed_service: Service) -> None:
    fake: DiscordFake
    with running_fake() as fake:
        fake.other_guilds[OTHER_GUILD] = [OTHER_CHANNEL]
        operator_id = str(HUMAN["id"])
        settings = settings_for(fake, seed_service.library.data_dir, discord_admins=frozenset({operator_id}))
        bot = start_bot(fake, seed_service, settings)
        try:
            attempt = fake.command(
                "remove", [{"name": "articles", "type": 3, "value": "999999"}], channel_id=OTHER_CHANNEL
            )
            fake.dispatch("INTERACTION_CREATE", attempt)
            callback(fake, attempt)
            text = text_of(followups(fake, attempt)[0])
            assert "operators" not in text and "999999" in text  # it ran: no such article
        finally:
            bot.close()


def test_a_workspace_admin_sees_only_that_workspaces_gaps(seed_service: Service, tmp_path: Path, caplog: Any) -> None:
    abstain(seed_service, SECRET_QUESTION, Asker("slack", "UB", "CB", tenant="slack:TB"))
    abstain(seed_service, MINE, Asker("slack", "U1", "C1", tenant="slack:T0001"))
    with checked_bolt(seed_service, tmp_path, caplog) as bolt:
        listed = bolt.response(bolt.command("/byline", "gaps 30d", user="UADMIN"))
    text = json.dumps(listed, ensure_ascii=False)
    assert "Champions League" in text
    assert "Acme" not in text and "CB" not in text


def test_a_private_question_never_colours_a_public_follow_up(seed_service: Service) -> None:
    asker = Asker("slack", "U1", "C1", conversation="slack:C1:U1:commands", tenant="slack:T0001")
    private = seed_service.run_command("/ask private what did Mourinho say about the referee?", asker)
    assert isinstance(private, AnswerReply) and private.private
    public = seed_service.run_command("/ask and what did Guardiola say?", asker)
    assert isinstance(public, AnswerReply) and not public.private
    answer: Answer = public.answer
    assert "referee" not in (answer.standalone_question + answer.interpreted_as).lower()
    # The private conversation still has its own context: the same follow-up, asked privately,
    # is read in the light of the private question (so the public one above could have been).
    again = seed_service.run_command("/ask private and what did Guardiola say?", asker)
    assert isinstance(again, AnswerReply)
    assert "referee" in (again.answer.standalone_question + again.answer.interpreted_as).lower()
