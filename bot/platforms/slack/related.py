"""Slack: a click on a related question under an answer.

The follow-up is answered where the answer is, for everyone who saw it: in the answer's thread
(a new thread under it when it was a top-level message), headed "Asked by @clicker: “…”" like a
shared answer. Under a private (ephemeral) answer, only the clicker saw the button, so the
follow-up stays private too, with its own Share button. When Byline may not post in the channel
(a slash command answered where Byline is not a member) the click's response URL posts it instead.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from slack_bolt import Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.asking import Asker
from bot.commands.related import ask_related
from bot.platforms.slack.post import post_message
from bot.platforms.slack.render import render
from bot.replies import AnswerReply, Reply
from bot.service import Service

log = logging.getLogger("byline.slack")


class SlackAdapter(Protocol):
    """What a related-question click needs of the adapter (``app.SlackAdapter``)."""

    service: Service
    client: WebClient

    def asker(self, user_id: str, channel_id: str, conversation: str = "") -> Asker: ...

    def respond_with(self, respond: Respond, reply: Reply, force_private: bool = False) -> None: ...


def on_related(adapter: SlackAdapter, body: dict[str, Any], respond: Respond) -> None:
    action = body["actions"][0]
    answer_id, _, number = str(action.get("value", "")).rpartition(":")
    user = body.get("user", {}).get("id", "")
    container = body.get("container") or {}
    message = body.get("message") or {}
    channel = (body.get("channel") or {}).get("id", "") or container.get("channel_id", "")
    private = bool(container.get("is_ephemeral"))
    # The thread the answer is in, or the answer itself as the root of a new one.
    root = message.get("thread_ts") or container.get("thread_ts") or container.get("message_ts") or message.get("ts")
    # A private answer's follow-ups go on in the slash command's conversation, as in on_command.
    conversation = f"slack:{channel}:{user}:commands" if private or not root else f"slack:{channel}:{root}"
    asker = adapter.asker(user, channel, conversation)
    reply = ask_related(adapter.service, answer_id, int(number) if number.isdigit() else -1, asker)
    if isinstance(reply, AnswerReply) and private:
        reply.private = True
    if not isinstance(reply, AnswerReply) or reply.private or not root:
        adapter.respond_with(respond, reply)
        return
    posted = 0
    try:
        for part in render(reply):
            post_message(adapter.client, channel, part, root)
            posted += 1
    except SlackApiError as error:
        log.info(
            "Slack: cannot post a related answer in channel %s (%s)%s.",
            channel,
            error.response.get("error"),
            "" if posted else "; sent through the response URL",
        )
        if not posted:  # a reply half posted is not sent again
            adapter.respond_with(respond, reply)
