"""Byline on Discord: a discord.py client with slash commands, mention/DM/reply listeners and a poster.

The adapter is thin: it turns Discord events into ``Service`` calls (run in a worker thread so the
gateway heartbeat never stalls behind retrieval) and sends what ``discord_render`` builds. Every
send carries ``AllowedMentions.none()``, so article text such as ``@everyone`` never pings.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import aiohttp
import discord
import yarl
from discord import app_commands
from discord.ext import commands

from bot.asking import Asker
from bot.commands.autoreply import is_question
from bot.delivery import DeliveryError
from bot.limits import handler_threads, place_in_line
from bot.platforms.discord.cogs import cogs_for
from bot.platforms.discord.render import render
from bot.platforms.discord.shards import ShardPlan, shard_plan
from bot.platforms.discord.views import (
    DYNAMIC_ITEMS,
    NO_MENTIONS,
    SORRY,
    discord_roles,
    tell_user,
    thread_parent,
    view_for,
)
from bot.replies import Reply
from bot.service import Service
from bot.settings import Settings
from bot.tenancy import discord_tenant
from retrieval.errors import BylineError

log = logging.getLogger("byline.discord")

# Only what Byline uses: guild and channel data (permissions), messages in guilds and DMs, and
# message content, which is privileged: without it, a reply to Byline that does not mention it
# arrives with empty text, so follow-ups in a reply chain or thread could not be read.
INTENTS = discord.Intents.none()
INTENTS.guilds = True
INTENTS.guild_messages = True
INTENTS.dm_messages = True
INTENTS.message_content = True

# View Channels, Send Messages, Send Messages in Threads, Embed Links, Read Message History, and
# Create Public Threads (a question channel's answers go in a thread under each question).
PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    send_messages_in_threads=True,
    embed_links=True,
    read_message_history=True,
    create_public_threads=True,
)
# Discord's limit on a thread's name; an auto-reply thread is named after its question.
THREAD_NAME_LIMIT = 100
# Only people's own posts are auto-answered: not joins, pins, boosts or "thread started" notices.
USER_MESSAGE_TYPES = (discord.MessageType.default, discord.MessageType.reply)
CONVERSATION_MEMORY = 5000
# Gateway close codes that mean the token itself is no good (4004: authentication failed).
BAD_TOKEN_CLOSE = 4004
BAD_TOKEN = (
    "Discord rejected DISCORD_TOKEN: {why}; reset it in the Developer Portal "
    "(Applications → your app → Bot → Reset Token) and put the new token in DISCORD_TOKEN."
)


class DiscordStartError(BylineError):
    """Discord refused to start the bot (bad token, missing intent, unreachable API)."""


def configure_endpoints(settings: Settings) -> None:
    """Point discord.py at a REST/gateway proxy (or a test fake) when configured.

    Both are process-wide in discord.py (class attributes), which suits one bot per process.
    """
    if settings.discord_api_url:
        discord.http.Route.BASE = settings.discord_api_url.rstrip("/")
    if settings.discord_gateway_url:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(settings.discord_gateway_url)


def invite_url(application_id: int | str) -> str:
    """The invite link with exactly the scopes and permissions Byline uses."""
    return discord.utils.oauth_url(
        int(application_id), permissions=PERMISSIONS, scopes=("bot", "applications.commands")
    )


class BylineClient(commands.Bot):
    """The Discord client: slash commands (one cog per command family, ``cogs/``) on ``tree``,
    message listeners, and ``poster``.

    A ``commands.Bot`` for its cogs only: Byline has no prefix commands (``on_message`` below
    replaces the bot's own, so no message is ever parsed as one, and there is no help command)."""

    def __init__(self, service: Service, settings: Settings, **options: Any) -> None:
        options.setdefault("intents", INTENTS)
        super().__init__(
            command_prefix=commands.when_mentioned, help_command=None, allowed_mentions=NO_MENTIONS, **options
        )
        self.service = service
        self.settings = settings
        self.tree.on_error = self._on_app_command_error  # type: ignore[method-assign]
        self.poster: DiscordPoster | None = None
        # Bot message id -> conversation key, so a long reply chain keeps its first question as
        # context. After a restart, the chain is recovered one level up from message references.
        self.conversations: OrderedDict[int, str] = OrderedDict()

    async def setup_hook(self) -> None:
        # asyncio.to_thread's default pool has cpu+4 threads; questions beyond that would wait in
        # its unbounded queue, unseen. With enough threads they wait in the service's bounded
        # queue instead, which tells them their place in line and refuses when full.
        executor = ThreadPoolExecutor(handler_threads(self.service.limits), thread_name_prefix="byline-discord")
        asyncio.get_running_loop().set_default_executor(executor)
        self.add_dynamic_items(*DYNAMIC_ITEMS)
        for cog in cogs_for(self.service, self.remember_conversation):
            await self.add_cog(cog)
        self.poster = DiscordPoster(self, asyncio.get_running_loop())
        register_poster(self.service, self.poster)
        if not self.syncs_commands:
            log.info("Slash commands are synced by the process that runs Discord shard 0, not this one.")
        elif self.settings.discord_guild_id:
            # A guild sync is instant, which is what development wants; a global one can take an hour.
            guild = discord.Object(int(self.settings.discord_guild_id))
            self.tree.copy_global_to(guild=guild)
            synced = await self.tree.sync(guild=guild)
            log.info("Synced %d slash commands to guild %s.", len(synced), guild.id)
        else:
            synced = await self.tree.sync()
            log.info("Synced %d slash commands globally.", len(synced))

    @property
    def syncs_commands(self) -> bool:
        """Whether this process registers the slash commands: unsharded, it is the only one."""
        return True

    async def on_ready(self) -> None:
        log.info(
            "Discord: logged in as %s (%s) in %d servers.", self.user, getattr(self.user, "id", "?"), len(self.guilds)
        )

    async def on_error(self, event_method: str, /, *args: Any, **kwargs: Any) -> None:
        log.exception("Discord event %s failed", event_method)

    async def _on_app_command_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError
    ) -> None:
        log.error("Slash command failed", exc_info=error)
        await tell_user(interaction, SORRY)

    # -- messages: mentions, DMs, replies to Byline, Byline's threads ------------------------

    def remember_conversation(self, message_id: int, key: str) -> None:
        self.conversations[message_id] = key
        while len(self.conversations) > CONVERSATION_MEMORY:
            self.conversations.popitem(last=False)

    async def on_message(self, message: discord.Message) -> None:
        if message.author.bot or message.webhook_id is not None or self.user is None:
            return  # other bots, webhooks and Byline itself: never answer, never loop
        try:
            trigger = await self._trigger(message)
            if trigger is None:
                await self._autoreply(message)
                return
            question, key = trigger
            asker = self._asker(message, str(message.channel.id), key, thread_parent(message.channel))
            queued = self._queue_notice(message, message.channel)
            async with message.channel.typing():
                reply = await asyncio.to_thread(answer_message, self.service, question, asker, queued)
            sent = await send_to_channel(message.channel, reply, reference=message)
            for bot_message in sent:
                self.remember_conversation(bot_message.id, key)
        except Exception:
            log.exception("Discord message handler failed (message %s)", message.id)
            try:
                await message.channel.send(
                    SORRY, reference=message.to_reference(fail_if_not_exists=False), allowed_mentions=NO_MENTIONS
                )
            except discord.HTTPException:
                log.exception("Could not tell the user about the error")

    def _queue_notice(self, message: discord.Message, target: discord.abc.Messageable) -> Callable[[int], None]:
        """``on_queued`` for a message: "You're #n in line" from the worker thread, posted where
        the answer will go (``target``): a reply to the message in its own channel, or into the
        thread opened for it, so a question channel stays free of Byline's notices."""
        loop = asyncio.get_running_loop()

        async def send(position: int) -> None:
            text = place_in_line(position)
            try:
                if target is message.channel:
                    reference = message.to_reference(fail_if_not_exists=False)
                    await target.send(text, reference=reference, allowed_mentions=NO_MENTIONS)
                else:
                    await target.send(text, allowed_mentions=NO_MENTIONS)
            except discord.HTTPException:
                log.warning("Discord: could not post a place-in-line notice in channel %s.", message.channel.id)

        def queued(position: int) -> None:
            # Not waited on: the worker goes straight back to waiting for its turn.
            asyncio.run_coroutine_threadsafe(send(position), loop)

        return queued

    async def _trigger(self, message: discord.Message) -> tuple[str, str] | None:
        """(question, conversation key) when the message is for Byline, else None."""
        assert self.user is not None
        me = self.user.id
        question = re.sub(rf"<@!?{me}>", " ", message.content).strip()
        replied = await self._replied_bot_message(message)
        channel = message.channel
        if replied is not None:
            return question, self._chain_key(replied)
        if message.guild is None:
            return question, f"discord:{channel.id}:dm"
        in_own_thread = isinstance(channel, discord.Thread) and channel.owner_id == me
        if in_own_thread:
            return question, f"discord:{channel.id}:{channel.id}"
        if me in message.raw_mentions:
            root = channel.id if isinstance(channel, discord.Thread) else message.id
            return question, f"discord:{channel.id}:{root}"
        return None

    async def _autoreply(self, message: discord.Message) -> None:
        """A question posted in a question channel, or a new post in a question forum, answered in
        a thread without a mention; anything that is not a question gets no reply at all."""
        channel = message.channel
        if message.guild is None or message.type not in USER_MESSAGE_TYPES:
            return
        # A forum post is a thread whose first message has the thread's own id.
        forum_post = isinstance(channel, discord.Thread) and message.id == channel.id
        if isinstance(channel, discord.Thread) and not forum_post:
            return
        marked = channel.parent_id if isinstance(channel, discord.Thread) else channel.id
        tenant = discord_tenant(message.guild.id if message.guild else None, message.author.id)
        state = self.service.state
        if marked is None or not await asyncio.to_thread(state.is_autoreply, "discord", str(marked), tenant):
            return
        assert self.user is not None
        body = re.sub(rf"<@!?{self.user.id}>", " ", message.content).strip()
        # A forum post's title is its question; the body may only add detail.
        title = channel.name if isinstance(channel, discord.Thread) else ""
        question = title if is_question(title) else body
        if not is_question(question):
            return
        # The rate limit is spent before any public side effect: a flood opens no threads.
        asker = self._asker(message, str(marked), "")
        if await asyncio.to_thread(self.service.admit, asker) is not None:
            log.info("Discord: question channel %s: a question over the rate limit was left alone.", marked)
            return
        # The conversation key is the thread's, as for any thread Byline answers in, so a
        # follow-up there has this question as context.
        thread = channel if forum_post else await self._open_thread(message, question)
        target: discord.abc.Messageable = thread or channel
        key = f"discord:{thread.id}:{thread.id}" if thread else f"discord:{channel.id}:{message.id}"
        asker = replace(asker, conversation=key)
        queued = self._queue_notice(message, target)
        async with target.typing():
            reply = await asyncio.to_thread(self.service.ask, question, asker, queued, False, True)
        # In a new thread the question is right above; elsewhere the answer replies to it.
        reference = message if forum_post or thread is None else None
        sent = await send_to_channel(target, reply, reference=reference)
        for bot_message in sent:
            self.remember_conversation(bot_message.id, key)

    async def _open_thread(self, message: discord.Message, question: str) -> discord.Thread | None:
        """A thread under the question for its answer; None when Byline may not make one."""
        name = " ".join(question.split())
        name = name if len(name) <= THREAD_NAME_LIMIT else name[: THREAD_NAME_LIMIT - 1] + "…"
        try:
            return await message.create_thread(name=name)
        except discord.HTTPException as error:
            log.warning(
                "Discord: cannot start a thread in question channel %s (%s %s); answering in the channel. "
                "Give Byline the Create Public Threads permission there.",
                message.channel.id,
                error.status,
                error.text or "",
            )
            return None

    async def _replied_bot_message(self, message: discord.Message) -> discord.Message | None:
        reference = message.reference
        if reference is None or reference.message_id is None:
            return None
        resolved = reference.resolved if isinstance(reference.resolved, discord.Message) else reference.cached_message
        if resolved is None:
            try:
                resolved = await message.channel.fetch_message(reference.message_id)
            except discord.HTTPException:
                return None
        assert self.user is not None
        return resolved if resolved.author.id == self.user.id else None

    def _chain_key(self, bot_message: discord.Message) -> str:
        known = self.conversations.get(bot_message.id)
        if known:
            return known
        # Byline's answer replies to the question that started the chain, so that is the root.
        parent = bot_message.reference.message_id if bot_message.reference else None
        return f"discord:{bot_message.channel.id}:{parent or bot_message.id}"

    def _asker(self, message: discord.Message, channel: str, key: str, parent_channel: str = "") -> Asker:
        """The author of a message, with their tenant (the message's server) and roles there."""
        author = message.author
        perms = author.guild_permissions if isinstance(author, discord.Member) and message.guild else None
        guild_id = message.guild.id if message.guild else None
        tenant, is_admin, is_operator = discord_roles(self.settings, str(author.id), guild_id, perms)
        return Asker(
            "discord",
            str(author.id),
            channel,
            is_admin,
            key,
            parent_channel=parent_channel,
            tenant=tenant,
            is_operator=is_operator,
        )


class ShardedBylineClient(BylineClient, commands.AutoShardedBot):
    """The Discord client for one process of a sharded bot: one gateway connection per shard in
    ``plan``, each receiving only its guilds' events; everything else is ``BylineClient``'s."""

    def __init__(self, service: Service, settings: Settings, plan: ShardPlan, **options: Any) -> None:
        super().__init__(service, settings, shard_ids=list(plan.ids), shard_count=plan.count, **options)
        self.plan = plan

    @property
    def syncs_commands(self) -> bool:
        return self.plan.syncs_commands

    async def on_ready(self) -> None:
        log.info(
            "Discord: logged in as %s (%s) in %d servers on shards %s of %d.",
            self.user,
            getattr(self.user, "id", "?"),
            len(self.guilds),
            ",".join(str(shard) for shard in self.plan.ids),
            self.plan.count,
        )


def make_client(service: Service, settings: Settings, **options: Any) -> BylineClient:
    """The client the settings ask for: sharded when BYLINE_DISCORD_SHARD_COUNT is set, else the
    plain one. A shard pair Discord would not serve raises ``ShardSettingsError`` here, before
    anything connects."""
    plan = shard_plan(settings)
    if plan is None:
        return BylineClient(service, settings, **options)
    return ShardedBylineClient(service, settings, plan, **options)


def answer_message(
    service: Service, question: str, asker: Asker, on_queued: Callable[[int], None] | None = None
) -> Reply:
    """A message's text as a service call: empty -> help, "/cmd ..." -> command, else a question."""
    if not question:
        return service.help()
    if question.startswith("/"):
        return service.run_command(question, asker, on_queued)
    return service.ask(question, asker, on_queued)


async def send_to_channel(
    channel: discord.abc.Messageable, reply: Reply, reference: discord.Message | None = None
) -> list[discord.Message]:
    """Send a reply as one or more messages; the first replies to ``reference``, buttons go last."""
    messages = render(reply)
    view = view_for(reply)
    sent = []
    for index, message in enumerate(messages):
        kwargs: dict[str, Any] = {"allowed_mentions": NO_MENTIONS}
        if index == 0 and reference is not None:
            kwargs["reference"] = reference.to_reference(fail_if_not_exists=False)
        if index == len(messages) - 1 and view is not None:
            kwargs["view"] = view
        sent.append(await channel.send(content=message.content or None, embeds=message.embeds, **kwargs))
    return sent


# -- posting from other threads (digests, feed notices) ------------------------------------


class DiscordPoster:
    """Posts a reply to a channel from any thread (the scheduler's), via the client's loop."""

    platform = "discord"

    def __init__(self, client: BylineClient, loop: asyncio.AbstractEventLoop, timeout: float = 60.0) -> None:
        self.client, self.loop, self.timeout = client, loop, timeout

    def post(self, channel_id: str, reply: Reply) -> None:
        if not channel_id.isdigit():
            raise DeliveryError(f"Not a Discord channel id: {channel_id!r}")
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            raise RuntimeError("DiscordPoster.post blocks; call it from another thread, not the client's event loop")
        future = asyncio.run_coroutine_threadsafe(self._post(int(channel_id), reply), self.loop)
        try:
            future.result(self.timeout)
        except discord.Forbidden as error:
            raise DeliveryError(
                f"Byline may not post in Discord channel {channel_id} (403: {error.text or 'Missing Permissions'})"
            ) from None
        except discord.NotFound as error:
            raise DeliveryError(
                f"Discord channel {channel_id} no longer exists (404: {error.text or 'Unknown Channel'})"
            ) from None

    async def _post(self, channel_id: int, reply: Reply) -> None:
        await send_to_channel(self.client.get_partial_messageable(channel_id), reply)


def register_poster(service: Service, poster: DiscordPoster) -> None:
    """Hand the poster to the digest scheduler, wherever the service keeps it (if it has one)."""
    for owner in (service, getattr(service, "scheduler", None)):
        add_poster = getattr(owner, "add_poster", None)
        if callable(add_poster):
            add_poster(poster)
            return


# -- start and stop ------------------------------------------------------------------------


async def _close_when_set(stop: threading.Event, client: discord.Client) -> None:
    while not stop.is_set():
        await asyncio.sleep(0.25)
    await client.close()


async def run_client(client: BylineClient, token: str, stop: threading.Event) -> None:
    """Log in, sync commands, and serve until ``stop`` is set; start-up failures become one line."""
    async with client:
        watcher = asyncio.create_task(_close_when_set(stop, client))
        try:
            await client.start(token)
        except discord.LoginFailure:
            raise DiscordStartError(BAD_TOKEN.format(why="401 Unauthorized")) from None
        except discord.PrivilegedIntentsRequired:
            raise DiscordStartError(
                "Discord refused the Message Content intent: turn it on under Bot → Privileged Gateway "
                "Intents (Byline needs it to read follow-up replies that do not mention it)."
            ) from None
        except discord.ConnectionClosed as error:
            # discord.py raises a gateway close it must not resume from; 4004 (the token was
            # reset or revoked while running) is the one a user can fix, so it gets one line.
            if error.code != BAD_TOKEN_CLOSE:
                raise
            why = "the gateway closed with 4004 (authentication failed)"
            raise DiscordStartError(BAD_TOKEN.format(why=why)) from None
        except (aiohttp.ClientConnectionError, discord.GatewayNotFound) as error:
            raise DiscordStartError(
                f"Could not reach Discord ({type(error).__name__}); "
                "check DISCORD_API_URL / DISCORD_GATEWAY_URL and the network."
            ) from None
        finally:
            watcher.cancel()


def run(service: Service, settings: Settings, stop: threading.Event) -> None:
    """``byline serve``'s Discord adapter: blocks until ``stop`` is set or the client fails."""
    client = make_client(service, settings)
    configure_endpoints(settings)
    asyncio.run(run_client(client, settings.discord_token, stop))
