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
from typing import Any, Literal

import aiohttp
import discord
import yarl
from discord import app_commands

from bot.commands.autoreply import is_question
from bot.commands.ingest import ingest_upload, upload_refusal
from bot.config import Settings
from bot.delivery import DeliveryError
from bot.limits import handler_threads, place_in_line
from bot.platforms.discord.quotes import register_quote_commands
from bot.platforms.discord.render import render
from bot.platforms.discord.shards import ShardPlan, shard_plan
from bot.platforms.discord.verify import register_verify_command
from bot.platforms.discord.views import (
    DYNAMIC_ITEMS,
    NO_MENTIONS,
    SORRY,
    discord_roles,
    guarded,
    interaction_asker,
    interaction_queue_notice,
    send_reply,
    thread_parent,
    view_for,
)
from bot.replies import AnswerReply, Reply, TextReply
from bot.service import Asker, Service
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
# An attachment that takes longer than this to come from Discord's CDN is given up on.
DOWNLOAD_TIMEOUT = 60.0
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


class BylineClient(discord.Client):
    """The Discord client: slash commands on ``tree``, message listeners, and ``poster``."""

    def __init__(self, service: Service, settings: Settings, **options: Any) -> None:
        options.setdefault("intents", INTENTS)
        super().__init__(allowed_mentions=NO_MENTIONS, **options)
        self.service = service
        self.settings = settings
        self.tree = app_commands.CommandTree(self)
        self.tree.on_error = self._on_app_command_error  # type: ignore[method-assign]
        self.poster: DiscordPoster | None = None
        # Bot message id -> conversation key, so a long reply chain keeps its first question as
        # context. After a restart, the chain is recovered one level up from message references.
        self.conversations: OrderedDict[int, str] = OrderedDict()
        register_commands(self)

    async def setup_hook(self) -> None:
        # asyncio.to_thread's default pool has cpu+4 threads; questions beyond that would wait in
        # its unbounded queue, unseen. With enough threads they wait in the service's bounded
        # queue instead, which tells them their place in line and refuses when full.
        executor = ThreadPoolExecutor(handler_threads(self.service.limits), thread_name_prefix="byline-discord")
        asyncio.get_running_loop().set_default_executor(executor)
        self.add_dynamic_items(*DYNAMIC_ITEMS)
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
        from bot.platforms.discord.views import tell_user

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
            queued = self._queue_notice(message)
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

    def _queue_notice(self, message: discord.Message) -> Callable[[int], None]:
        """``on_queued`` for a message: replies "You're #n in line" from the worker thread."""
        loop = asyncio.get_running_loop()

        async def send(position: int) -> None:
            try:
                await message.channel.send(
                    place_in_line(position),
                    reference=message.to_reference(fail_if_not_exists=False),
                    allowed_mentions=NO_MENTIONS,
                )
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
        queued = self._queue_notice(message)
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


class ShardedBylineClient(BylineClient, discord.AutoShardedClient):
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


# -- slash commands --------------------------------------------------------------------------


async def slash(
    interaction: discord.Interaction[Any],
    name: str,
    work: Callable[[Asker], Reply],
    *,
    defer: bool,
    private: bool = False,
    remember: str = "",
) -> None:
    """Run a slash command: defer if asked, work in a thread, reply, and never fail silently.

    /ask, /search, /digest and /ingest always defer: retrieval is usually well under a second,
    but on a busy two-core host a cold query or an ingest can pass Discord's 3-second limit, and a
    defer costs one request and shows "Byline is thinking…", which is the typing indicator here.
    """
    async with guarded(interaction, f"/{name}"):
        if defer:
            await interaction.response.defer(ephemeral=private, thinking=True)
        asker = interaction_asker(interaction)
        reply = await asyncio.to_thread(work, asker)
        if private and isinstance(reply, AnswerReply):
            reply.private = True
        sent = await send_reply(interaction, reply, deferred_private=private)
        client = interaction.client
        if remember and isinstance(reply, AnswerReply) and isinstance(client, BylineClient):
            # A reply to this answer is a follow-up: give it this question as context.
            for message in sent:
                key = f"discord:{interaction.channel_id}:{message.id}"
                client.remember_conversation(message.id, key)
                await asyncio.to_thread(client.service.state.remember, key, remember, asker.tenant)


def register_commands(client: BylineClient) -> None:
    """Every slash command, each a short function over the service."""
    tree, service = client.tree, client.service

    @tree.command(name="ask", description="Answer a question with verbatim, cited quotes from the articles")
    @app_commands.describe(
        question="What you want to know, e.g. what did Mourinho say about the referee?",
        private="Only you see the answer (default: off)",
    )
    async def ask(
        interaction: discord.Interaction[Any], question: app_commands.Range[str, 1, 1000], private: bool = False
    ) -> None:
        queued = interaction_queue_notice(interaction)
        await slash(
            interaction,
            "ask",
            lambda asker: service.ask(question, asker, queued, private=private),
            defer=True,
            private=private,
            # A private answer is ephemeral: nobody can reply to it, and its question must not
            # become the context of a public follow-up.
            remember="" if private else question,
        )

    @tree.command(name="search", description="The article passages that best match a query")
    @app_commands.describe(query="Words to look for, e.g. Kompany injury")
    async def search(interaction: discord.Interaction[Any], query: app_commands.Range[str, 1, 500]) -> None:
        await slash(interaction, "search", lambda asker: service.search(query, asker), defer=True)

    @tree.command(name="sources", description="The articles Byline knows, newest first")
    @app_commands.describe(page="Page number (default 1)")
    async def sources(interaction: discord.Interaction[Any], page: app_commands.Range[int, 1, 100000] = 1) -> None:
        await slash(interaction, "sources", lambda asker: service.sources_page(page, asker), defer=False)

    @tree.command(name="help", description="What Byline can do and how to ask")
    async def help_(interaction: discord.Interaction[Any]) -> None:
        await slash(interaction, "help", lambda asker: service.help(), defer=False)

    @tree.command(name="ingest", description="Add an article to Byline from a URL or an uploaded file")
    @app_commands.describe(url="The article's web address", file="An article file (text or HTML) instead of a URL")
    async def ingest(
        interaction: discord.Interaction[Any], url: str | None = None, file: discord.Attachment | None = None
    ) -> None:
        loop = asyncio.get_running_loop()

        def work(asker: Asker) -> Reply:
            if file is None or url:
                return service.run_command(f"/ingest {url or ''}".strip(), asker)
            # An attachment's name and size are known before anything is downloaded.
            refusal = upload_refusal(asker, file.filename, file.size)
            if refusal is not None:
                return refusal
            downloaded = asyncio.run_coroutine_threadsafe(download_attachment(file), loop).result()
            if isinstance(downloaded, TextReply):
                return downloaded
            return ingest_upload(service, file.filename, downloaded, asker)

        await slash(interaction, "ingest", work, defer=True)

    @tree.command(name="remove", description="Remove articles by URL, key or id (Byline's operators only; logged)")
    @app_commands.describe(articles="One or more article URLs, keys or ids, separated by spaces")
    async def remove(interaction: discord.Interaction[Any], articles: app_commands.Range[str, 1, 1000]) -> None:
        await slash(
            interaction,
            "remove",
            lambda asker: service.run_command(f"/remove {articles}", asker),
            defer=True,
            private=True,
        )

    @tree.command(
        name="autoreply", description="Answer every question posted in a channel or forum, no mention needed (admins)"
    )
    @app_commands.describe(mode="on, off, or status (default)", channel="A text or forum channel (default: this one)")
    async def autoreply(
        interaction: discord.Interaction[Any],
        mode: Literal["on", "off", "status"] = "status",
        channel: discord.TextChannel | discord.ForumChannel | None = None,
    ) -> None:
        def work(asker: Asker) -> Reply:
            # A forum has no message box to run a command in, so it is named instead.
            if channel is not None:
                asker = replace(asker, channel_id=str(channel.id))
            return service.run_command(f"/autoreply {mode}", asker)

        await slash(interaction, "autoreply", work, defer=False, private=True)

    @tree.command(name="gaps", description="What Byline couldn't answer (abstentions and 👎), grouped (admins)")
    @app_commands.describe(since="7d, 24h, yesterday or 2026-11-30 (default: 7d)")
    async def gaps(interaction: discord.Interaction[Any], since: app_commands.Range[str, 1, 100] = "7d") -> None:
        await slash(
            interaction, "gaps", lambda asker: service.run_command(f"/gaps {since}", asker), defer=True, private=True
        )

    digest = app_commands.Group(name="digest", description="News digests for this channel")

    def run_digest(interaction: discord.Interaction[Any], args: str, private: bool) -> Any:
        return slash(
            interaction,
            "digest",
            lambda asker: service.run_command(f"/digest {args}".strip(), asker),
            defer=True,
            private=private,
        )

    @digest.command(name="now", description="A digest of what is new since this channel's last digest")
    async def digest_now(interaction: discord.Interaction[Any]) -> None:
        await run_digest(interaction, "now", False)

    @digest.command(name="since", description="A digest of the articles added since a time")
    @app_commands.describe(when="yesterday, 2h, 3d or a date like 2026-11-30")
    async def digest_since(interaction: discord.Interaction[Any], when: app_commands.Range[str, 1, 100]) -> None:
        await run_digest(interaction, f"since {when}", False)

    @digest.command(name="subscribe", description="Post digests here on a schedule (needs Manage Channels)")
    @app_commands.describe(schedule="daily 09:00 [Europe/London], weekly mon 09:00, or a cron expression")
    async def digest_subscribe(
        interaction: discord.Interaction[Any], schedule: app_commands.Range[str, 1, 200]
    ) -> None:
        await run_digest(interaction, f"subscribe {schedule}", True)

    @digest.command(name="unsubscribe", description="Stop this channel's scheduled digests (needs Manage Channels)")
    async def digest_unsubscribe(interaction: discord.Interaction[Any]) -> None:
        await run_digest(interaction, "unsubscribe", True)

    @digest.command(name="status", description="This channel's digest schedule: next run, last run, what it covers")
    async def digest_status(interaction: discord.Interaction[Any]) -> None:
        await run_digest(interaction, "status", True)

    tree.add_command(digest)

    scope = app_commands.Group(name="scope", description="Which sources answer in this channel")

    def run_scope(interaction: discord.Interaction[Any], args: str) -> Any:
        work = lambda asker: service.run_command(f"/scope {args}", asker)  # noqa: E731
        return slash(interaction, "scope", work, defer=False, private=True)

    @scope.command(name="add", description="Answer here only from these sources (needs Manage Channels)")
    @app_commands.describe(entries="feed:URL, outlet:NAME, tag:NAME or since:30d; several: outlet:BBC Sport since:30d")
    async def scope_add(interaction: discord.Interaction[Any], entries: app_commands.Range[str, 1, 1000]) -> None:
        await run_scope(interaction, f"add {entries}")

    @scope.command(name="show", description="What this channel follows, and how many articles that is")
    async def scope_show(interaction: discord.Interaction[Any]) -> None:
        await run_scope(interaction, "show")

    @scope.command(name="clear", description="Answer here from every source again (needs Manage Channels)")
    async def scope_clear(interaction: discord.Interaction[Any]) -> None:
        await run_scope(interaction, "clear")

    tree.add_command(scope)
    # /quotes, /reactions, /alerts (issue 35): bot/platforms/discord/quotes.py.
    register_quote_commands(tree, service, slash)
    # /verify: is this quote real? (issue 35, part 1): bot/platforms/discord/verify.py.
    register_verify_command(tree, service, slash)


async def download_attachment(file: discord.Attachment) -> bytes | TextReply:
    """The attachment's bytes (through discord.py's session), or a reply saying why not."""
    name = file.filename
    try:
        return await asyncio.wait_for(file.read(), DOWNLOAD_TIMEOUT)
    except discord.NotFound:
        why = "Discord no longer has it (deleted?)"
    except (discord.HTTPException, aiohttp.ClientError, OSError) as error:
        why = f"downloading it from Discord failed ({type(error).__name__})"
    except TimeoutError:
        why = f"downloading it from Discord took over {DOWNLOAD_TIMEOUT:.0f} s"
    log.warning("Discord: attachment %s not downloaded: %s", name, why)
    return TextReply(f"{name}: could not add it: {why}. Attach it again.", private=True, error=True)


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
