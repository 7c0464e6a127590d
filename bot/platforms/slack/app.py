"""The Slack adapter: a slack-bolt app that parses events and commands, calls the service, and
posts the replies rendered by ``slack_render``.

Every listener acknowledges first and hands the work to Byline's own bounded thread pool.
Bolt runs acks on its listener executor; keeping retrieval off that executor means a burst of
slow answers can never delay the ack of the next request past Slack's 3 seconds (bolt's lazy
listeners would share one executor between acks and work).

Both transports are here: Socket Mode (the default, no public URL) and the HTTP Events API,
served by a threaded WSGI server at ``/slack/events``.
"""

from __future__ import annotations

import contextvars
import html
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any
from wsgiref.simple_server import WSGIServer

from slack_bolt import Ack, App, BoltContext, BoltRequest, BoltResponse, Respond
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.adapter.wsgi.http_request import WsgiHttpRequest
from slack_sdk import WebClient, WebhookClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry import RetryHandler
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.socket_mode.builtin import SocketModeClient

from bot.asking import Asker
from bot.commands.autoreply import is_question
from bot.delivery import DeliveryError
from bot.http_server import serve_in_thread
from bot.limits import handler_threads, place_in_line
from bot.logs import without_credentials
from bot.platforms.slack import SlackPlatform
from bot.platforms.slack.http_guard import SlackHttpGuard
from bot.platforms.slack.oauth import NOT_INSTALLED, SlackOAuth, Workspace, current_workspace, note_revocations, serving
from bot.platforms.slack.post import post_message
from bot.platforms.slack.related import on_related
from bot.platforms.slack.render import (
    ACTION_PASSAGES,
    ACTION_SHARE,
    ACTION_VOTE_DOWN,
    ACTION_VOTE_UP,
    RELATED_ACTIONS,
    render,
)
from bot.replies import Reply, TextReply
from bot.service import Service
from bot.settings import Settings
from bot.state.event_dedupe import SIGNATURE_PREFIX, EventDedupe, RecentIds
from bot.tenancy import is_listed_admin, slack_body_tenant
from retrieval.errors import BylineError

log = logging.getLogger("byline.slack")

PLATFORM = "slack"
# The workspace (tenant key, bot/tenancy.py) of the request a pool thread is handling.
_REQUEST_TENANT: contextvars.ContextVar[str] = contextvars.ContextVar("byline_slack_tenant", default="slack:")
EVENTS_PATH = "/slack/events"
WORKING_REACTION = "eyes"
WORKING_AFTER_S = 1.0
ACK_WORKERS = 8
# Commands that go straight to the service under their own name; /byline takes a subcommand.
ROUTED_COMMANDS = ("ask", "search", "sources", "digest", "ingest", "remove")
_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
# Errors that mean "Byline cannot post there", with what the operator can do about it.
_CHANNEL_HINTS = {
    "not_in_channel": "invite Byline to the channel (/invite @Byline)",
    "channel_not_found": "the channel was deleted, or Byline cannot see it",
    "is_archived": "the channel is archived",
    "restricted_action": "the workspace does not let Byline post there",
    "missing_scope": "reinstall the app from slack/manifest.yml to grant its scopes",
    NOT_INSTALLED: "no workspace Byline is installed in has that channel (uninstalled there, or not heard from since)",
}


Work = Callable[[dict[str, Any], Respond], None]


class SlackSetupError(BylineError):
    """Slack could not be started as configured; the message names the setting to fix."""


def retry_handlers() -> list[RetryHandler]:
    """Connection errors, 429s (after ``Retry-After``) and 500/503s are retried.

    Retrying a 5xx can in principle post twice if Slack stored the message before failing; Slack
    documents 500/503 as "not processed, retry", and an answer lost for good is the worse outcome.
    """
    return [
        ConnectionErrorRetryHandler(max_retry_count=2),
        RateLimitErrorRetryHandler(max_retry_count=3),
        ServerErrorRetryHandler(max_retry_count=2),
    ]


def make_client(settings: Settings) -> WebClient:
    """A Web API client at ``SLACK_API_URL`` with Byline's ``retry_handlers``."""
    base_url = settings.slack_api_url if settings.slack_api_url.endswith("/") else settings.slack_api_url + "/"
    return WebClient(
        token=settings.slack_bot_token or None,
        base_url=base_url,
        timeout=30,
        retry_handlers=retry_handlers(),
    )


def _channel_problem(error: SlackApiError) -> str:
    code = str(error.response.get("error", "unknown_error"))
    hint = _CHANNEL_HINTS.get(code)
    return f"{code}: {hint}" if hint else code


class SlackPoster:
    """Posts replies (digests, feed notices) to Slack channels for the scheduler."""

    platform = PLATFORM

    def __init__(self, client: WebClient) -> None:
        self.client = client

    @classmethod
    def from_settings(cls, settings: Settings) -> SlackPoster:
        return cls(make_client(settings))

    def post(self, channel_id: str, reply: Reply) -> None:
        for message in render(reply):
            try:
                post_message(self.client, channel_id, message)
            except SlackApiError as error:
                raise DeliveryError(
                    f"Slack: cannot post to channel {channel_id} ({_channel_problem(error)})."
                ) from error


def question_text(text: str) -> str:
    """A message's text as a question: mentions removed, Slack's escapes undone."""
    return html.unescape(_MENTION.sub(" ", text or "")).strip()


class SlackAdapter:
    """The bolt app wired to the service: mentions, DMs, thread follow-ups, commands, buttons."""

    def __init__(
        self,
        service: Service,
        settings: Settings,
        working_after: float = WORKING_AFTER_S,
        workers: int | None = None,
        seen_events: EventDedupe | None = None,
    ) -> None:
        self.service = service
        # Enough work threads that questions wait in the service's bounded queue, which tells them
        # their place in line and refuses when full, not unseen in this executor's queue.
        if workers is None:
            workers = handler_threads(service.limits)
        self.settings = settings
        self.working_after = working_after
        # Many workspaces (SLACK_CLIENT_ID): each request is answered with its workspace's token.
        self.oauth = SlackOAuth(settings, service.state, make_client(settings)) if settings.slack_oauth else None
        self.client = self.oauth.client if self.oauth else make_client(settings)
        self._bot_user_id = self._check_token() if self.oauth is None else ""
        self.work = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="byline-slack-work")
        self.acks = ThreadPoolExecutor(max_workers=ACK_WORKERS, thread_name_prefix="byline-slack-ack")
        self.app = App(
            client=self.client,
            signing_secret=settings.slack_signing_secret,
            # Over HTTP, SlackHttpGuard has checked the signature before this sees the body; bolt's
            # own check stays on as a second one.
            request_verification_enabled=settings.slack_mode == "http",
            # Checked above with a clearer error; bolt would raise a long one with the response.
            token_verification_enabled=False,
            listener_executor=self.acks,
            # With this on, bolt waits for the listener to finish before replying over HTTP.
            process_before_response=False,
            **(self.oauth.app_options() if self.oauth else {}),
        )
        if self.oauth:
            self.oauth.attach(self.app)
        else:
            note_revocations(self.app)
        self.poster = SlackPoster(self.client)
        # Redelivered event ids: this process's memory, or Redis when many workers share the app.
        self.seen_events: EventDedupe = seen_events if seen_events is not None else RecentIds()
        self._register()

    def _check_token(self) -> str:
        try:
            result = self.client.auth_test()
        except SlackApiError as error:
            code = error.response.get("error", "unknown_error")
            raise SlackSetupError(
                f"Slack rejected SLACK_BOT_TOKEN ({code}): set it to the app's Bot User OAuth Token (xoxb-…)."
            ) from None
        except OSError as error:
            raise SlackSetupError(
                f"Cannot reach the Slack API at {without_credentials(self.settings.slack_api_url)} "
                f"({type(error).__name__}): "
                "check SLACK_API_URL."
            ) from None
        return str(result.get("user_id", ""))

    @property
    def bot_user_id(self) -> str:
        """Byline's user id in the workspace being answered (one per workspace when installed in many)."""
        workspace = current_workspace()
        return workspace.bot_user_id if workspace is not None else self._bot_user_id

    def close(self) -> None:
        self.work.shutdown(wait=False, cancel_futures=True)
        self.acks.shutdown(wait=False, cancel_futures=True)

    # -- wiring --------------------------------------------------------------------------

    def _register(self) -> None:
        app = self.app
        app.event("app_mention")(self._acked(lambda body, respond: self.on_mention(body["event"])))
        app.event("message")(self._acked(lambda body, respond: self.on_message(body["event"])))
        for name in (*ROUTED_COMMANDS, "byline"):
            app.command(f"/{name}")(self._acked(self.on_command))
        app.action(ACTION_PASSAGES)(self._acked(self.on_show_passages))
        app.action(ACTION_VOTE_UP)(self._acked(self.on_vote))
        app.action(ACTION_VOTE_DOWN)(self._acked(self.on_vote))
        app.action(ACTION_SHARE)(self._acked(self.on_share))
        app.action(RELATED_ACTIONS)(self._acked(lambda body, respond: on_related(self, body, respond)))
        app.error(self._on_error)

    def _acked(self, work: Work) -> Callable[..., None]:
        """A bolt listener that acks at once and queues ``work(body, respond)`` on the work pool."""

        def listener(
            ack: Ack, body: dict[str, Any], respond: Respond, request: BoltRequest, context: BoltContext
        ) -> None:
            ack()
            # Slack redelivers an event it thinks timed out; we acked the first one at once and
            # are answering it, so a second answer would only be a duplicate.
            # Over Socket Mode a redelivery carries no header, only the same event_id (and over HTTP
            # after any other retry reason), so ids seen lately are skipped too.
            event_id = str(body.get("event_id") or "")
            # Among workers sharing event ids, the header says only that the first delivery timed
            # out, perhaps at a worker that was stopping and never read it: the shared ids decide.
            timed_out = _first(request.headers.get("x-slack-retry-reason")) == "http_timeout"
            redelivered = timed_out and not self.seen_events.shared
            if redelivered or (event_id and not self.seen_events.first_time(event_id)):
                log.info("Slack: skipped a redelivered event (%s).", event_id or "?")
                return
            workspace = self.oauth.workspace(context) if self.oauth else None
            self.work.submit(self._run, work, body, respond, workspace)

        return listener

    def _run(self, work: Work, body: dict[str, Any], respond: Respond, workspace: Workspace | None = None) -> None:
        found = slack_body_tenant(body, *((workspace.team_id, workspace.enterprise_id) if workspace else ()))
        tenant = _REQUEST_TENANT.set(found)
        try:
            with serving(workspace):
                work(body, respond)
        except Exception:
            # A future swallows exceptions; log it so a failing handler is never silent.
            log.exception("Slack: handling a %s failed.", body.get("type") or body.get("command") or "request")
        finally:
            _REQUEST_TENANT.reset(tenant)

    def _on_error(self, error: Exception, body: dict[str, Any]) -> None:
        log.error("Slack: a handler failed on a %s: %s", body.get("type", "request"), error, exc_info=error)

    def asker(self, user_id: str, channel_id: str, conversation: str = "") -> Asker:
        """The asker of the request being handled, with its workspace (tenant) and roles there
        (bot/tenancy.py): operators are ``BYLINE_SLACK_ADMINS``; a workspace's admins are whoever
        installed Byline there and whoever ``BYLINE_TENANT_ADMINS`` lists for it."""
        tenant = _REQUEST_TENANT.get()
        is_operator = user_id in self.settings.slack_admins
        team = tenant.removeprefix("slack:")
        installer = self.oauth is not None and bool(team) and self.oauth.installations.is_installer(team, user_id)
        listed = is_listed_admin(self.settings.tenant_admins, tenant, user_id)
        return Asker(
            PLATFORM,
            user_id,
            channel_id,
            is_admin=is_operator or installer or listed,
            conversation=conversation,
            tenant=tenant,
            is_operator=is_operator,
        )

    # -- events --------------------------------------------------------------------------

    def _from_a_bot(self, event: dict[str, Any]) -> bool:
        return bool(event.get("bot_id")) or event.get("user") == self.bot_user_id or not event.get("user")

    def on_mention(self, event: dict[str, Any]) -> None:
        """A mention in a channel: answer in a thread under the question."""
        if self._from_a_bot(event):
            return
        channel, thread_ts = event["channel"], event.get("thread_ts") or event["ts"]
        self._answer(event, f"slack:{channel}:{thread_ts}", thread_ts)

    def on_message(self, event: dict[str, Any]) -> None:
        """DMs, replies in a thread Byline is part of (follow-ups need no mention), and questions
        posted in a question channel (``/byline autoreply on``), answered in a thread."""
        # Edits, deletions, joins, file shares and bot posts all carry a subtype: not questions.
        if event.get("subtype") or self._from_a_bot(event):
            return
        channel, thread_ts = event.get("channel", ""), event.get("thread_ts")
        if event.get("channel_type") == "im":
            conversation = f"slack:{channel}:{thread_ts}" if thread_ts else f"slack:{channel}"
            self._answer(event, conversation, thread_ts)
            return
        if f"<@{self.bot_user_id}>" in event.get("text", ""):
            return  # an app_mention, which on_mention answers
        if not thread_ts:
            # A top-level message: answered only in a question channel, and only if it asks something.
            tenant = _REQUEST_TENANT.get()
            if self.service.state.is_autoreply(PLATFORM, channel, tenant) and is_question(
                question_text(event.get("text", ""))
            ):
                self._answer(event, f"slack:{channel}:{event['ts']}", event["ts"])
            return
        conversation = f"slack:{channel}:{thread_ts}"
        if self.service.state.history(conversation, _REQUEST_TENANT.get()):
            self._answer(event, conversation, thread_ts)

    def _answer(self, event: dict[str, Any], conversation: str, thread_ts: str | None) -> None:
        channel, user = event["channel"], event["user"]
        question = question_text(event.get("text", ""))
        asker = self.asker(user, channel, conversation)
        # The 👀 stays until the answer is posted, so the user never sees a gap; a question
        # that has to queue for the retrieval pool shows it at once.
        with self._working(channel, event["ts"]) as show_now:

            def queued(position: int) -> None:
                show_now()
                self.send(channel, TextReply(place_in_line(position), private=True), user=user, thread_ts=thread_ts)

            reply = self.service.ask(question, asker, on_queued=queued) if question else self.service.help()
            self.send(channel, reply, user=user, thread_ts=thread_ts)

    @contextmanager
    def _working(self, channel: str, ts: str) -> Iterator[Callable[[], None]]:
        """Shows 👀 on the question if the work takes longer than ``working_after``.

        Yields a function that shows it at once (for work known to be slow).
        """
        lock = threading.Lock()
        state = {"done": False, "added": False}

        def add() -> None:
            with lock:
                if state["done"] or state["added"]:
                    return
                state["added"] = self._react("reactions_add", channel, ts)

        # The timer's thread sees this request's workspace too (its token, for the reaction).
        timer = threading.Timer(self.working_after, contextvars.copy_context().run, (add,))
        timer.daemon = True
        timer.start()
        try:
            yield add
        finally:
            timer.cancel()
            with lock:
                state["done"] = True
                if state["added"]:
                    self._react("reactions_remove", channel, ts)

    def _react(self, method: str, channel: str, ts: str) -> bool:
        try:
            getattr(self.client, method)(channel=channel, timestamp=ts, name=WORKING_REACTION)
            return True
        except SlackApiError as error:
            # A missing reaction is cosmetic; never let it lose the answer.
            log.debug("Slack: %s failed: %s", method, error.response.get("error"))
            return False

    def send(self, channel: str, reply: Reply, user: str = "", thread_ts: str | None = None) -> None:
        """Posts a reply in a channel (ephemeral to ``user`` when private); logs what fails."""
        for message in render(reply):
            try:
                if reply.private and user:
                    self.client.chat_postEphemeral(
                        channel=channel, user=user, text=message.text, blocks=message.blocks, thread_ts=thread_ts
                    )
                else:
                    post_message(self.client, channel, message, thread_ts)
            except SlackApiError as error:
                log.warning("Slack: cannot reply in channel %s (%s).", channel, _channel_problem(error))
                return

    # -- commands and buttons ------------------------------------------------------------

    def on_command(self, command: dict[str, Any], respond: Respond) -> None:
        """A slash command, answered through its response URL (works in any channel)."""
        name = command.get("command", "").lstrip("/").lower()
        text = command.get("text", "").strip()
        user, channel = command.get("user_id", ""), command.get("channel_id", "")
        asker = self.asker(user, channel, f"slack:{channel}:{user}:commands")

        def queued(position: int) -> None:
            self.respond_with(respond, TextReply(place_in_line(position), private=True))

        # "/byline" alone or "/byline help" is the help; "/byline ask ..." routes like "/ask ...".
        line = f"/{name} {text}" if name != "byline" else "" if text.lower() in {"", "help"} else f"/{text}"
        reply = self.service.run_command(line, asker, on_queued=queued) if line else self.service.help()
        self.respond_with(respond, reply)

    def on_show_passages(self, body: dict[str, Any], respond: Respond) -> None:
        answer_id = body["actions"][0].get("value", "")
        user = body.get("user", {}).get("id", "")
        channel = (body.get("channel") or {}).get("id", "")
        self.respond_with(respond, self.service.passages(answer_id, self.asker(user, channel)), force_private=True)

    def on_vote(self, body: dict[str, Any], respond: Respond) -> None:
        action = body["actions"][0]
        vote = 1 if action.get("action_id") == ACTION_VOTE_UP else -1
        user = body.get("user", {}).get("id", "")
        channel = (body.get("channel") or {}).get("id", "")
        reply = self.service.feedback(action.get("value", ""), self.asker(user, channel), vote)
        self.respond_with(respond, reply, force_private=True)

    def on_share(self, body: dict[str, Any], respond: Respond) -> None:
        """ "Share with channel" under a private answer: the same answer, public, "Asked by" the asker.

        Posted through the click's response URL as ``in_channel``, which works in any channel
        the slash command worked in, whether or not Byline is a member.
        """
        user = body.get("user", {}).get("id", "")
        channel = (body.get("channel") or {}).get("id", "")
        reply = self.service.share(body["actions"][0].get("value", ""), self.asker(user, channel))
        self.respond_with(respond, reply)

    def respond_with(self, respond: Respond, reply: Reply, force_private: bool = False) -> None:
        private = force_private or reply.private
        # bolt's respond() has no retry handlers, so one 5xx from the response URL would lose the
        # reply; the same URL through a WebhookClient with ours retries like every other call.
        url = respond.response_url
        webhook = WebhookClient(url, timeout=30, retry_handlers=retry_handlers()) if url else None
        for message in render(reply):
            kind = "ephemeral" if private else "in_channel"
            if webhook is not None:
                response = webhook.send(
                    text=message.text, blocks=message.blocks, response_type=kind, replace_original=False
                )
            else:
                response = respond(text=message.text, blocks=message.blocks, response_type=kind, replace_original=False)
            if response.status_code != 200:
                log.warning(
                    "Slack: the response URL refused a reply (HTTP %s: %s).", response.status_code, response.body
                )
                return

    # -- transports ----------------------------------------------------------------------

    def start_http(self, host: str, port: int) -> WSGIServer:
        """Serves ``/slack/events`` on ``host:port`` in a background thread; returns the server.

        Requests pass ``SlackHttpGuard`` (length, timestamp, signature, replay, shape) before bolt;
        ``/healthz`` and ``/metrics`` are answered beside it.
        """
        guarded = SlackHttpGuard(
            _BoltWsgi(self.app, EVENTS_PATH),
            self.settings.slack_signing_secret,
            EVENTS_PATH,
            browser_paths=self.oauth.paths if self.oauth else (),
            shared_signatures=self.seen_events.with_prefix(SIGNATURE_PREFIX),
        )
        from bot.health import HEALTH  # /healthz and /metrics share this port (the same BYLINE_HTTP_PORT)

        server = serve_in_thread(host, port, HEALTH.routes(guarded), "byline-slack-http")
        log.info("Slack: HTTP Events API listening on http://%s:%s%s", host, server.server_port, EVENTS_PATH)
        return server

    def start_socket_mode(self) -> SocketModeHandler:
        """Connects over Socket Mode (needs ``SLACK_APP_TOKEN``); returns the connected handler."""
        handler = SocketModeHandler(self.app, self.settings.slack_app_token, web_client=self.client)
        client = handler.client
        client.on_close_listeners.append(lambda code, reason: reconnect_after_close(client))
        try:
            handler.connect()
        except SlackApiError as error:
            code = error.response.get("error", "unknown_error")
            raise SlackSetupError(
                f"Slack rejected SLACK_APP_TOKEN ({code}): "
                "set it to an app-level token (xapp-…) with the connections:write scope."
            ) from None
        log.info("Slack: connected over Socket Mode.")
        return handler


RECONNECT_WAIT_S = 5.0


def reconnect_after_close(client: SocketModeClient) -> None:
    """Reconnect as soon as a dropped Socket Mode connection is marked closed.

    slack_sdk calls its close listeners *before* it marks the connection closed, so its own
    reconnect-on-close sees a live connection and does nothing; its monitor reconnects only
    ``ping_interval`` (10 s in bolt) later, and events pushed meanwhile are not received. This
    waits in a thread for the close to land, then reconnects; ``connect_to_new_endpoint`` checks
    again under its lock, so racing the monitor cannot open two connections.
    """

    def run() -> None:
        deadline = time.monotonic() + RECONNECT_WAIT_S
        while client.is_connected() and time.monotonic() < deadline:
            time.sleep(0.05)
        if client.closed or client.is_connected():
            return  # shut down on purpose, or replaced by a new connection already
        try:
            client.connect_to_new_endpoint()
        except Exception as error:  # noqa: BLE001 - the monitor keeps trying; say why this failed
            log.warning("Slack: reconnecting over Socket Mode failed (%s); retrying shortly.", type(error).__name__)

    threading.Thread(target=run, name="byline-slack-reconnect", daemon=True).start()


def _first(values: Sequence[str] | None) -> str:
    return values[0] if values else ""


class _BoltWsgi(SlackRequestHandler):
    """bolt's WSGI adapter, answering 400 to a signed body bolt cannot read.

    ``SlackHttpGuard`` refuses bodies that are not JSON objects; bolt also assumes the types of some
    fields (``team``, ``user``, ``channel``) while building a request, and a body that breaks that
    assumption would otherwise be a 500 with a traceback.
    """

    def dispatch(self, request: WsgiHttpRequest) -> BoltResponse:
        try:
            bolt_request = BoltRequest(
                body=request.get_body(), query=request.query_string, headers=request.get_headers()
            )
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            log.warning("Slack HTTP: a signed request bolt cannot read (%s); answered 400.", type(error).__name__)
            return BoltResponse(status=400, body="signed, but not a request Slack sends\n")
        return self.app.dispatch(bolt_request)


def check_settings(settings: Settings) -> None:
    """The settings each transport needs, named in the error when missing."""
    if settings.slack_mode not in {"socket", "http"}:
        raise SlackSetupError(f"BYLINE_SLACK_MODE must be 'socket' or 'http', not {settings.slack_mode!r}.")
    if settings.slack_mode == "socket" and not settings.slack_app_token:
        raise SlackSetupError(
            "Socket Mode needs SLACK_APP_TOKEN (an xapp-… app-level token), or set BYLINE_SLACK_MODE=http."
        )
    if settings.slack_mode == "http" and not settings.slack_signing_secret:
        raise SlackSetupError("BYLINE_SLACK_MODE=http needs SLACK_SIGNING_SECRET (Basic Information → Signing Secret).")


def register_poster(service: Service, poster: SlackPoster) -> None:
    """Hand the poster to the digest scheduler, wherever the service keeps it (if it has one)."""
    for owner in (service, getattr(service, "scheduler", None)):
        add_poster = getattr(owner, "add_poster", None)
        if callable(add_poster):
            add_poster(poster)
            return


def run(service: Service, settings: Settings, stop: threading.Event) -> None:
    """Runs the Slack adapter on the configured transport until ``stop`` is set (``serve`` starts
    and stops it through ``bot.platforms.slack``, which this only wraps)."""
    platform = SlackPlatform()
    platform.start(service, settings, stop)
    try:
        assert platform.adapter is not None
        register_poster(service, platform.adapter.poster)
        while not stop.wait(1.0):
            pass
    finally:
        platform.stop()


__all__ = ["SlackAdapter", "SlackPoster", "SlackSetupError", "check_settings", "make_client", "register_poster", "run"]
