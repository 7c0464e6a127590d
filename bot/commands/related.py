"""A click on a related question, for any platform: ask it as it was checked, attributed to the clicker.

The buttons carry only the answer id and the question's number, never its text: the question is
read back from the stored answer, so a forged or replayed click can only ask one of the questions
that ``retrieval/features/related.py`` checked, and a button keeps working after a restart.
"""

from __future__ import annotations

from dataclasses import replace

from bot.asking import Asker
from bot.replies import AnswerReply, Reply, TextReply
from bot.service import Service

EXPIRED = "That answer has expired, so its related questions are no longer known. Ask the question in your own words."


def related_question(service: Service, answer_id: str, index: int, tenant: str | None = None) -> str:
    """The ``index``-th related question of a stored answer (given in ``tenant``); "" when either
    is unknown."""
    stored = service.state.answer(answer_id, tenant)
    related = stored.get("related") if stored else None
    if not isinstance(related, list) or not 0 <= index < len(related) or not isinstance(related[index], str):
        return ""
    return related[index]


def ask_related(service: Service, answer_id: str, index: int, asker: Asker) -> Reply:
    """The answer to a related question, ``asked_by`` the clicker.

    It is asked without the conversation, exactly as it was checked: in a thread about the referee,
    "What did Pep Guardiola say?" would otherwise be read as "… say about the referee?", which
    was not what was checked (and may have no answer). It is then remembered in the conversation,
    so a reply to its answer follows up on it like on any other question.
    """
    question = related_question(service, answer_id, index, asker.tenant)
    if not question:
        return TextReply(EXPIRED, private=True, error=True)
    reply = service.ask(question, replace(asker, conversation=""))
    if isinstance(reply, AnswerReply):
        reply.asked_by, reply.follow_up = asker.user_id, True
        if asker.conversation:
            service.state.remember(asker.conversation, reply.answer.standalone_question or question, asker.tenant)
    return reply
