"""Discord buttons and interaction replies.

Buttons are ``DynamicItem``s: the ``custom_id`` carries everything a click needs (the answer id,
the page), and discord.py routes any click whose id matches a template, so buttons on messages
sent before a restart keep working without re-attaching views to message ids. An answer id the
store no longer knows gets a clear "expired" notice from the service.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import discord

from bot.asking import Asker
from bot.commands.related import ask_related
from bot.limits import place_in_line
from bot.platforms.discord.render import DiscordMessage, render
from bot.replies import AnswerReply, Reply, SourcesReply, TextReply
from bot.tenancy import discord_tenant, is_listed_admin

if TYPE_CHECKING:
    from bot.service import Service

log = logging.getLogger("byline.discord")

NO_MENTIONS = discord.AllowedMentions.none()
EPHEMERAL = 64
SORRY = "Sorry — something went wrong on Byline's side while handling that. It has been logged; please try again."

# Answer ids are uuid4 hex prefixes (bot/state/store.py); the template rejects anything else.
ANSWER_ID = r"(?P<id>[0-9a-f]{6,40})"


def service_of(interaction: discord.Interaction[Any]) -> Service:
    return cast("Service", interaction.client.service)  # type: ignore[attr-defined]


def interaction_asker(interaction: discord.Interaction[Any], conversation: str = "") -> Asker:
    """The asker of an interaction, with their tenant (this server) and roles (bot/tenancy.py)."""
    user_id = str(interaction.user.id)
    perms = interaction.permissions if interaction.guild_id is not None else None
    settings = interaction.client.settings  # type: ignore[attr-defined]
    tenant, is_admin, is_operator = discord_roles(settings, user_id, interaction.guild_id, perms)
    channel = str(interaction.channel_id or "")
    return Asker(
        "discord",
        user_id,
        channel,
        is_admin,
        conversation,
        parent_channel=thread_parent(interaction.channel),
        tenant=tenant,
        is_operator=is_operator,
    )


def discord_roles(
    settings: Any, user_id: str, guild_id: int | None, perms: discord.Permissions | None
) -> tuple[str, bool, bool]:
    """(tenant, tenant admin, operator) of a Discord user. Manage Channels, Manage Server or
    Administrator make an admin of *this* server only; only ``BYLINE_DISCORD_ADMINS`` are operators."""
    tenant = discord_tenant(guild_id, user_id)
    is_operator = user_id in settings.discord_admins
    server_admin = perms is not None and bool(perms.manage_channels or perms.manage_guild or perms.administrator)
    listed = is_listed_admin(settings.tenant_admins, tenant, user_id)
    return tenant, is_operator or server_admin or listed, is_operator


def thread_parent(channel: object) -> str:
    """The channel a thread belongs to ("" for a channel): a thread answers with its channel's scope."""
    parent = getattr(channel, "parent_id", None) if isinstance(channel, discord.Thread) else None
    return str(parent) if parent else ""


# -- buttons -------------------------------------------------------------------------------


class PassagesButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=rf"byline:passages:{ANSWER_ID}"):
    """ "Show passages": the paragraphs an answer cites, shown only to whoever clicks."""

    def __init__(self, answer_id: str) -> None:
        super().__init__(
            discord.ui.Button(
                label="Show passages",
                emoji="📄",
                style=discord.ButtonStyle.secondary,
                custom_id=f"byline:passages:{answer_id}",
            )
        )
        self.answer_id = answer_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> PassagesButton:
        return cls(match["id"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        async with guarded(interaction, "Show passages"):
            asker = interaction_asker(interaction)
            reply = await asyncio.to_thread(service_of(interaction).passages, self.answer_id, asker)
            await send_reply(interaction, reply, private=True)


class VoteButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=rf"byline:vote:(?P<vote>up|down):{ANSWER_ID}"
):
    """👍 / 👎 feedback: one vote per user per answer; clicking again changes it."""

    def __init__(self, answer_id: str, vote: str) -> None:
        super().__init__(
            discord.ui.Button(
                emoji="👍" if vote == "up" else "👎",
                style=discord.ButtonStyle.secondary,
                custom_id=f"byline:vote:{vote}:{answer_id}",
            )
        )
        self.answer_id, self.vote = answer_id, vote

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> VoteButton:
        return cls(match["id"], match["vote"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        async with guarded(interaction, "feedback"):
            service = service_of(interaction)
            reply = await asyncio.to_thread(
                service.feedback, self.answer_id, interaction_asker(interaction), 1 if self.vote == "up" else -1
            )
            await send_reply(interaction, reply, private=True)


class ShareButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=rf"byline:share:{ANSWER_ID}"):
    """ "Share with channel", under a private answer: posts the same answer publicly, "Asked by" its asker.

    The public post is this click's interaction response, so it needs no channel permission
    beyond what the slash command had; like every send, it carries ``AllowedMentions.none()``, so
    the attribution shows the asker without pinging them.
    """

    def __init__(self, answer_id: str) -> None:
        super().__init__(
            discord.ui.Button(
                label="Share with channel",
                emoji="📣",
                style=discord.ButtonStyle.primary,
                custom_id=f"byline:share:{answer_id}",
            )
        )
        self.answer_id = answer_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ShareButton:
        return cls(match["id"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        async with guarded(interaction, "share"):
            service = service_of(interaction)
            reply = await asyncio.to_thread(service.share, self.answer_id, interaction_asker(interaction))
            await send_reply(interaction, reply)


class RelatedButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=rf"byline:related:(?P<n>[0-9]):{ANSWER_ID}"
):
    """A related question under an answer: a click asks it and answers in the same channel or
    thread, "Asked by" the clicker (a mention sent with no pings; the embed's title is the question).

    The ``custom_id`` holds the answer id and the question's number, not its text (Discord allows
    100 characters): the question is read back from the stored answer. Under a private answer
    the follow-up is private too."""

    def __init__(self, answer_id: str, index: int, question: str = "Related question") -> None:
        super().__init__(
            discord.ui.Button(
                # The label is plain text to Discord (no Markdown, no mentions); 80 characters at most.
                label=question[:80],
                style=discord.ButtonStyle.secondary,
                custom_id=f"byline:related:{index}:{answer_id}",
                row=1,
            )
        )
        self.answer_id, self.index = answer_id, index

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> RelatedButton:
        return cls(match["id"], int(match["n"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        async with guarded(interaction, "related question"):
            private = bool(interaction.message is not None and interaction.message.flags.ephemeral)
            # Answering is retrieval, so defer first (the 3-second rule), as /ask does.
            await interaction.response.defer(ephemeral=private, thinking=True)
            service = service_of(interaction)
            asker = interaction_asker(interaction)
            reply = await asyncio.to_thread(ask_related, service, self.answer_id, self.index, asker)
            if private and isinstance(reply, AnswerReply):
                reply.private = True
            sent = await send_reply(interaction, reply, deferred_private=private)
            if isinstance(reply, AnswerReply):
                await remember_answer(interaction, sent, reply.answer.standalone_question or reply.answer.question)


async def remember_answer(interaction: discord.Interaction[Any], sent: list[discord.Message], question: str) -> None:
    """A reply to these messages follows up on ``question`` (as after ``/ask``)."""
    remember = getattr(interaction.client, "remember_conversation", None)
    tenant = interaction_asker(interaction).tenant
    for message in sent:
        key = f"discord:{interaction.channel_id}:{message.id}"
        if callable(remember):
            remember(message.id, key)
        await asyncio.to_thread(service_of(interaction).state.remember, key, question, tenant)


class SourcesPageButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"byline:sources:(?P<dir>prev|next):(?P<page>[0-9]{1,6})"
):
    """Previous / next page of /sources; the click edits the list in place."""

    def __init__(self, direction: str, page: int, disabled: bool = False) -> None:
        label = "◀ Previous" if direction == "prev" else "Next ▶"
        super().__init__(
            discord.ui.Button(
                label=label,
                style=discord.ButtonStyle.primary,
                custom_id=f"byline:sources:{direction}:{page}",
                disabled=disabled,
            )
        )
        self.page = page

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> SourcesPageButton:
        return cls(match["dir"], int(match["page"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        async with guarded(interaction, "sources page"):
            reply = await asyncio.to_thread(service_of(interaction).sources, self.page)
            message = render(reply)[0]
            await interaction.response.edit_message(
                content=message.content or None,
                embeds=message.embeds,
                view=view_for(reply),
                allowed_mentions=NO_MENTIONS,
            )


DYNAMIC_ITEMS = (PassagesButton, VoteButton, ShareButton, RelatedButton, SourcesPageButton)


def answer_view(reply: AnswerReply) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    if reply.private:
        view.add_item(ShareButton(reply.answer_id))
    if reply.answer.citations:
        view.add_item(PassagesButton(reply.answer_id))
    view.add_item(VoteButton(reply.answer_id, "up"))
    view.add_item(VoteButton(reply.answer_id, "down"))
    # On a row of their own, under the answer's own buttons.
    for index, question in enumerate(reply.answer.related[:3]):
        view.add_item(RelatedButton(reply.answer_id, index, question))
    return view


def sources_view(reply: SourcesReply) -> discord.ui.View | None:
    if reply.pages <= 1:
        return None
    view = discord.ui.View(timeout=None)
    # Both ids always differ (page-1 vs page+1 with different prefixes), as Discord requires.
    view.add_item(SourcesPageButton("prev", max(1, reply.page - 1), disabled=reply.page <= 1))
    view.add_item(SourcesPageButton("next", min(reply.pages, reply.page + 1), disabled=reply.page >= reply.pages))
    return view


def view_for(reply: Reply) -> discord.ui.View | None:
    """The buttons that go under a reply's last message."""
    if isinstance(reply, AnswerReply):
        return answer_view(reply)
    if isinstance(reply, SourcesReply):
        return sources_view(reply)
    return None


# -- replying to interactions -------------------------------------------------------------


def _kwargs(message: DiscordMessage, view: discord.ui.View | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"allowed_mentions": NO_MENTIONS}
    if message.content:
        kwargs["content"] = message.content
    if message.embeds:
        kwargs["embeds"] = message.embeds
    if view is not None:
        kwargs["view"] = view
    return kwargs


async def send_reply(
    interaction: discord.Interaction[Any], reply: Reply, *, private: bool | None = None, deferred_private: bool = False
) -> list[discord.Message]:
    """Send a reply as the interaction response, or as followups once deferred.

    After a public defer, Discord turns the first followup into that public message whatever
    its flags say; a private reply (an error, a usage notice) therefore deletes the public
    "thinking…" message first and follows up ephemerally.
    """
    private = reply.private if private is None else private
    messages = render(reply)
    view = view_for(reply)
    sent: list[discord.Message] = []
    response = cast("discord.InteractionResponse[Any]", interaction.response)
    if not response.is_done():
        first = messages.pop(0)
        callback = await response.send_message(ephemeral=private, **_kwargs(first, None if messages else view))
        if isinstance(callback.resource, discord.Message):
            sent.append(callback.resource)
    elif private and not deferred_private:
        try:
            await interaction.delete_original_response()
        except discord.HTTPException:
            log.debug("Could not delete the deferred response; following up anyway.", exc_info=True)
    for index, message in enumerate(messages):
        last = index == len(messages) - 1
        sent.append(
            await interaction.followup.send(ephemeral=private, wait=True, **_kwargs(message, view if last else None))
        )
    return sent


def interaction_queue_notice(interaction: discord.Interaction[Any]) -> Callable[[int], None]:
    """``on_queued`` for a deferred slash command: "You're #n in line" in its "thinking…" message.

    Called from the worker thread. It edits the deferred original rather than following up: after
    a public defer, the first followup would *become* the public message, and the answer after it.
    """
    loop = asyncio.get_running_loop()

    async def show(position: int) -> None:
        try:
            await interaction.edit_original_response(content=place_in_line(position), allowed_mentions=NO_MENTIONS)
        except discord.HTTPException:
            log.warning("Discord: could not show a place-in-line notice for an interaction.")

    def queued(position: int) -> None:
        asyncio.run_coroutine_threadsafe(show(position), loop)  # not waited on: the worker waits its turn

    return queued


class guarded:  # noqa: N801 - used like a function: ``async with guarded(interaction, what):``
    """Turns an exception in a handler into a short message for the user and a logged traceback."""

    def __init__(self, interaction: discord.Interaction[Any], what: str) -> None:
        self.interaction, self.what = interaction, what

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: Any) -> bool:
        if error is None or not isinstance(error, Exception):
            return False
        log.error("Discord %s failed for user %s", self.what, self.interaction.user.id, exc_info=error)
        await tell_user(self.interaction, SORRY)
        return True


async def tell_user(interaction: discord.Interaction[Any], text: str) -> None:
    """A short private notice, whatever state the interaction is in; never raises."""
    try:
        await send_reply(interaction, TextReply(text, private=True, error=True))
    except Exception:
        log.exception("Could not tell the user about an error")
