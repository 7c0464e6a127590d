"""Quote alerts: ``/alerts add|show|remove`` and the job that posts a subscribed person's new
quotes to the channel.

An admin of a channel (the same check as ``/digest subscribe`` and ``/scope add``:
``Asker.is_admin``) subscribes it to a person, or a person on a topic. When an article added after
that (from a feed, a URL or an upload: they all end in the store) quotes them, the job posts each
new quote with its citation, once (``alert_store``), at most ``PER_HOUR`` quotes an hour per
channel; quotes over the limit wait for the next hour, none is dropped. The job runs in the
digest scheduler's loop (``DigestScheduler.add_job``), so only the leader of the workers runs it
and it uses the same posters.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from bot.commands.quotes import ArgumentError, parse_pairs
from bot.delivery import DeliveryError, Poster
from bot.jobs.digest_schedule import RunOutcome
from bot.replies import DigestReply, Reply, TextReply
from bot.service import Asker, Command, Service
from bot.state.alerts import FAILED, SENT, AlertStore, QuoteAlert, SentQuote
from retrieval.citations import CitationNumbers
from retrieval.features.digest import added_at_text, render_digest
from retrieval.features.quote_pages import quote_span, user_words
from retrieval.features.quote_timeline import TimelineQuote, article_date, newest_first, speaker_timeline
from retrieval.library import Library
from retrieval.models import Digest, DigestStory
from retrieval.render import format_date

if TYPE_CHECKING:
    from bot.jobs.digest_schedule import DigestScheduler

log = logging.getLogger("byline.alerts")

USAGE = "/alerts add speaker:NAME [topic:WORDS] | show | remove ID"
# Quotes posted per channel per hour at most: a prolific speaker on a busy news day must not
# flood a channel. The rest wait (unclaimed) for the next pass after the hour.
PER_HOUR = 10
# How often the job looks for new quotes.
POLL_SECONDS = 30.0
Clock = Callable[[], datetime]


def utc_clock() -> datetime:
    return datetime.now(UTC)


def alert_label(alert: QuoteAlert) -> str:
    """ "Mourinho on “referees”", as typed, with no formatting characters (``user_words``)."""
    return user_words(alert.speaker) + (f" on “{user_words(alert.topic)}”" if alert.topic else "")


class AlertsCommand:
    """``/alerts``: subscriptions of the asker's channel, in the asker's tenant."""

    def __init__(self, library: Library, store: AlertStore) -> None:
        self.library = library
        self.store = store

    def __call__(self, args: str, asker: Asker) -> Reply:
        return self.run(args, asker, asker.tenant)

    def run(self, args: str, asker: Asker, tenant: str) -> Reply:
        verb, _, rest = args.strip().partition(" ")
        verb, rest = verb.lower() or "show", rest.strip()
        usage = "/byline alerts" if asker.platform == "slack" else "/alerts"
        if verb not in {"add", "show", "list", "remove", "delete"}:
            return _error(f"Usage: `{USAGE}`, e.g. `{usage} add speaker:Mourinho topic:referees`.")
        channel = asker.parent_channel or asker.channel_id
        if asker.platform == "terminal" and verb not in {"show", "list"}:
            # The terminal is no channel anyone reads later; the CLI names the channel to post to.
            return _error(
                "Alerts post to a Slack or Discord channel: `byline alerts add --channel slack:C0123 "
                "--speaker NAME [--topic WORDS]`."
            )
        if not tenant or not channel:
            return _error(f"Alerts belong to a channel: run `{usage} {verb}` in the channel that should get them.")
        if verb in {"show", "list"}:
            return self._show(tenant, asker.platform, channel, usage)
        if not asker.is_admin:
            return _error(
                f"Only this channel's admins can change its quote alerts (`{usage} {verb}`); "
                f"`{usage} show` lists them. (Discord: Manage Channels in this server.)"
            )
        if verb == "add":
            return self._add(tenant, asker, channel, rest, usage)
        return self._remove(tenant, asker.platform, channel, rest, usage)

    def _add(self, tenant: str, asker: Asker, channel: str, rest: str, usage: str) -> Reply:
        try:
            pairs = parse_pairs(rest)
        except ArgumentError as error:
            return _error(str(error))
        speaker, topic = pairs.get("speaker", ""), pairs.get("topic", "")
        if not speaker:
            return _error(f"Name the person: `{usage} add speaker:NAME [topic:WORDS]`.")
        timeline = speaker_timeline(self.library, speaker, group=False)
        alert = self.store.add(tenant, asker.platform, channel, speaker, topic, f"{asker.platform}:{asker.user_id}")
        if alert is None:
            return TextReply(f"This channel already has an alert for {user_words(speaker)}.", private=True)
        known = (
            f"Byline has {timeline.total_quotes} quote{'s' if timeline.total_quotes != 1 else ''} of "
            f"{user_words(', '.join(timeline.speakers[:3]))} so far"
            if timeline.speakers
            else f"nobody called {user_words(speaker)} is quoted yet"
        )
        return TextReply(
            f"Alert {alert.id} added: new quotes of {alert_label(alert)} from articles added from now on will be "
            f"posted here, each once ({known}). At most {PER_HOUR} quotes an hour; `{usage} show` lists alerts."
        )

    def _remove(self, tenant: str, platform: str, channel: str, rest: str, usage: str) -> Reply:
        if not rest.isascii() or not rest.isdigit() or len(rest) > 12:
            return _error(f"Give the alert's number, as `{usage} show` lists it: `{usage} remove 3`.")
        if self.store.remove(tenant, int(rest), platform, channel):
            return TextReply(f"Alert {int(rest)} removed: no more of its quotes will be posted here.")
        return _error(f"This channel has no alert {int(rest)}; `{usage} show` lists its alerts.")

    def _show(self, tenant: str, platform: str, channel: str, usage: str) -> Reply:
        alerts = self.store.of_channel(tenant, platform, channel)
        if not alerts:
            return TextReply(
                f"This channel has no quote alerts. An admin can add one: `{usage} add speaker:NAME [topic:WORDS]`.",
                private=True,
            )
        lines = ["Quote alerts of this channel:"]
        for alert in alerts:
            counts = self.store.history(tenant, alert.id)
            sent = counts.get(SENT, 0)
            extra = "".join(
                f", {counts[status]} {label}"
                for status, label in ((FAILED, "failed"), ("sending", "interrupted"))
                if counts.get(status)
            )
            lines.append(
                f"{alert.id}. {alert_label(alert)}, since {format_date(alert.created_at)}: "
                f"{sent} quote{'s' if sent != 1 else ''} posted{extra}"
            )
        lines.append(f"Remove one with `{usage} remove ID`.")
        return TextReply("\n".join(lines), private=True)


@dataclass(frozen=True)
class _Due:
    alert: QuoteAlert
    quotes: list[TimelineQuote]


class AlertJob:
    """Posts new quotes for every subscription; a ``ScheduledJob`` of the digest scheduler."""

    def __init__(
        self,
        library: Library,
        store: AlertStore,
        posters: Mapping[str, Poster],
        clock: Clock = utc_clock,
        per_hour: int = PER_HOUR,
    ) -> None:
        self.library = library
        self.store = store
        self.posters = posters  # the scheduler's dict: adapters that connect later appear in it
        self.clock = clock
        self.per_hour = per_hour
        self._last_run: datetime | None = None
        # The store generation and subscriptions last read, with nothing held back: while neither
        # moves, a pass has nothing new to look at and skips the reading.
        self._settled: tuple[int, tuple[int, ...]] | None = None
        self._held_back = False

    def next_run(self) -> datetime | None:
        last = self._last_run
        return self.clock() if last is None else last + timedelta(seconds=POLL_SECONDS)

    def run_due(self) -> list[RunOutcome]:
        """Post what is new now; safe to repeat, from any number of processes."""
        now = self.clock()
        self._last_run = now
        self.library.catch_up()
        alerts = self.store.every_alert()
        state = (self.library.store.generation(), tuple(alert.id for alert in alerts))
        if state == self._settled:
            return []
        outcomes: list[RunOutcome] = []
        self._held_back = False
        for due in self._due(alerts):
            outcomes += self._deliver(due, now)
        self._settled = None if self._held_back else state
        return outcomes

    def _due(self, alerts: list[QuoteAlert]) -> list[_Due]:
        found = []
        for alert in alerts:
            timeline = speaker_timeline(self.library, alert.speaker, alert.topic, group=False)
            new = [q for q in timeline.quotes if q.article.added_at > alert.created_at]
            if new:
                found.append(_Due(alert, list(reversed(newest_first(new)))))  # oldest first: in the order they came
        return found

    def _deliver(self, due: _Due, now: datetime) -> list[RunOutcome]:
        alert = due.alert
        poster = self.posters.get(alert.platform)
        outcomes: list[RunOutcome] = []
        if poster is None:
            self._held_back = True
            return outcomes  # that platform is not connected in this process: its quotes wait
        hour_ago = added_at_text(now - timedelta(hours=1))
        by_article: dict[int, list[tuple[TimelineQuote, SentQuote]]] = {}
        for item in due.quotes:
            sent = self._sent_quote(item)
            if sent is None or self.store.already_sent(alert, sent):
                continue
            if self.store.sent_since(alert.platform, alert.channel_id, hour_ago) >= self.per_hour:
                self._held_back = True
                break  # this channel's hour is full: the rest wait for a later pass
            if self.store.claim(alert, sent):
                by_article.setdefault(item.article.id, []).append((item, sent))
        for claimed in by_article.values():
            outcomes.append(self._post(alert, poster, claimed, now))
        return outcomes

    def _post(
        self, alert: QuoteAlert, poster: Poster, claimed: list[tuple[TimelineQuote, SentQuote]], now: datetime
    ) -> RunOutcome:
        reply = DigestReply(alert_digest(alert, [item for item, _ in claimed]))
        status, error = SENT, ""
        try:
            poster.post(alert.channel_id, reply)
        except DeliveryError as failure:
            status, error = FAILED, str(failure)
            log.warning("Quote alert %s: could not post in %s: %s", alert.id, alert.channel_id, failure)
        except Exception as failure:  # a passing network fault: release the claims, retry next pass
            log.warning("Quote alert %s: posting failed (%s); will retry.", alert.id, type(failure).__name__)
            for _, sent in claimed:
                self.store.release(alert, sent)
            self._held_back = True
            return RunOutcome(alert.platform, alert.channel_id, now, "retry", False, len(claimed), str(failure))
        for _, sent in claimed:
            self.store.finish(alert, sent, status, error)
        return RunOutcome(alert.platform, alert.channel_id, now, status, False, len(claimed), error)

    def _sent_quote(self, item: TimelineQuote) -> SentQuote | None:
        found = self.library.store.find_by_key(item.article.key)
        if found is None:
            return None  # removed since the timeline was read
        return SentQuote(item.article.id, found[1], item.quote.start, item.quote.end, item.quote.text)


def alert_digest(alert: QuoteAlert, quotes: list[TimelineQuote]) -> Digest:
    """The post for new quotes of one article: the person, the quotes, the citation."""
    numbers = CitationNumbers()
    spans = [quote_span(item, numbers) for item in quotes]
    article = quotes[0].article
    story = DigestStory(f"{article.title} ({format_date(article_date(article))})", [article], spans, spans[0].citation)
    count = len(quotes)
    header = f"New quote{'s' if count != 1 else ''} from {alert_label(alert)} (alert {alert.id})"
    digest = Digest("", "", "", 1, [story], numbers.citations, header)
    digest.text = render_digest(digest)
    return digest


def register_alerts(service: Service, scheduler: DigestScheduler | None) -> AlertsCommand:
    """Add ``/alerts`` to the service and its job to the scheduler's loop (when there is one)."""
    store = AlertStore(service.state)
    command = AlertsCommand(service.library, store)
    service.register(
        Command(
            "alerts",
            USAGE,
            "post a person's new quotes here as articles arrive, each once (Slack: /byline alerts; "
            "changing them is for admins)",
            command,
        )
    )
    if scheduler is not None:
        scheduler.add_job(AlertJob(service.library, store, scheduler.posters, clock=scheduler.clock))
    return command


def _error(text: str) -> TextReply:
    return TextReply(text, private=True, error=True)
