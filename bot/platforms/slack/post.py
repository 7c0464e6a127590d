"""Posting a rendered message to a Slack channel (or thread) with Byline's rules."""

from __future__ import annotations

from slack_sdk import WebClient

from bot.platforms.slack.render import SlackMessage


def post_message(client: WebClient, channel: str, message: SlackMessage, thread_ts: str | None = None) -> None:
    """``chat.postMessage`` with Byline's rules: no ``link_names``, no unfurls."""
    client.chat_postMessage(
        channel=channel,
        text=message.text,
        blocks=message.blocks,
        thread_ts=thread_ts,
        unfurl_links=False,
        unfurl_media=False,
    )
