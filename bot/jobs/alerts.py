"""Quote alerts: the job that posts a subscribed person's new quotes to the channel (the
``/alerts add|show|remove`` command that subscribes is ``bot/commands/alerts.py``).

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

from bot.delivery import DeliveryError, Poster
from bot.jobs.digest_schedule import RunOutcome
from bot.replies import DigestReply, TextReply
from bot.state.alerts import FAILED, SENT, AlertStore, QuoteAlert, SentQuote
from retrieval.citations import CitationNumbers
from retrieval.features.digest import added_at_text, render_digest
from retrieval.features.quote_pages import quote_span, user_words
from retrieval.features.quote_timeline import TimelineQuote, article_date, newest_first, speaker_timeline
from retrieval.library import Library
from retrieval.models import Digest, DigestStory
from retrieval.render import format_date

if TYPE_CHECKING:
    pass

log = logging.getLogger("byline.alerts")

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


def _error(text: str) -> TextReply:
    return TextReply(text, private=True, error=True)
