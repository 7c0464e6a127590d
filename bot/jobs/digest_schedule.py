"""Digest schedules and the scheduler loop that posts them.

A schedule is ``daily 09:00 [TZ]``, ``weekly mon 09:00 [TZ]`` or a five-field cron expression
(``0 9 * * 1-5 [TZ]``), stored as cron plus an IANA timezone. Fire times are computed in the
channel's local wall-clock time with croniter and only then turned into UTC with zoneinfo, so
"09:00 Europe/London" stays 09:00 on both sides of a daylight-saving change.

The loop is restart-safe: each run is claimed in the history (``bot/state/digests.py``) before
it is posted, keyed by its due time, so it is posted at most once; a run missed while Byline
was down is posted once at start, marked late; a channel whose post fails is logged and
reported in ``/digest status`` and never holds up the others.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

from bot.delivery import DeliveryError, Poster
from bot.replies import DigestReply
from bot.schedules import (
    Clock,
    Schedule,
    ScheduleError,
    parse_timezone,
    utc_clock,
)
from bot.state.channel_scopes import scope_of_channel
from bot.state.digests import EMPTY, FAILED, SENDING, SENT, DigestStore, Subscription
from retrieval.features.digest import added_at_text, build_digest, parse_added_at
from retrieval.library import Library
from retrieval.models import Digest
from retrieval.scope import ResolvedScope

log = logging.getLogger("byline.digest")

# A run this much after its due time says it is late (the loop wakes within seconds otherwise).
LATE_AFTER = timedelta(minutes=5)
# The loop never sleeps longer than this, so a new subscription is picked up promptly.
MAX_SLEEP = 30.0


def schedule_of(subscription: Subscription) -> Schedule:
    return Schedule(subscription.schedule, subscription.timezone)


@dataclass(frozen=True)
class RunOutcome:
    """What one scheduled run did, for logs and tests."""

    platform: str
    channel_id: str
    due_at: datetime
    status: str
    late: bool
    article_count: int
    error: str = ""


class ScheduledJob(Protocol):
    """Another scheduled post the loop runs beside the channel digests (the weekly gaps report)."""

    def run_due(self) -> list[RunOutcome]:
        """Post whatever is due now, each run claimed in the history first; safe to repeat."""
        ...

    def next_run(self) -> datetime | None:
        """When it is next due (aware UTC), or None when it never is."""
        ...


class DigestScheduler:
    """Posts each subscribed channel's digest when it is due; call ``run_due`` or ``run``.

    ``posters`` maps a platform name to the adapter's ``Poster``; ``clock`` returns the current
    aware time (tests pass a controllable one).
    """

    def __init__(
        self,
        library: Library,
        store: DigestStore,
        posters: Mapping[str, Poster] | None = None,
        clock: Clock = utc_clock,
        default_timezone: str = "UTC",
    ) -> None:
        self.library = library
        self.store = store
        self.posters: dict[str, Poster] = dict(posters or {})
        self.clock = clock
        self.default_timezone = parse_timezone(default_timezone)
        self.jobs: list[ScheduledJob] = []
        self._lock = threading.Lock()

    def subscribe(
        self, platform: str, channel_id: str, schedule: Schedule, always: bool, user_id: str, tenant: str = ""
    ) -> Subscription | None:
        """Store the channel's subscription; its first run is the first fire time after now.
        None when another tenant owns this channel's subscription."""
        return self.store.subscribe(
            platform, channel_id, schedule.cron, schedule.timezone, always, user_id, added_at_text(self.clock()), tenant
        )

    def add_job(self, job: ScheduledJob) -> None:
        """Run ``job`` in this loop too: one thread, one history, one restart rule for every post."""
        self.jobs.append(job)

    def add_poster(self, poster: Poster) -> None:
        """Adapters that connect later (after the scheduler started) register here."""
        self.posters[poster.platform] = poster

    # -- when ----------------------------------------------------------------------------

    def anchor(self, subscription: Subscription) -> datetime:
        """The moment after which the next run falls: the last scheduled run or the (re)subscription."""
        last = self.store.last_run(subscription.platform, subscription.channel_id, "scheduled")
        moments = [parse_added_at(subscription.updated_at)]
        if last is not None:
            moments.append(parse_added_at(last.due_at))
        return max(moments)

    def next_run(self, subscription: Subscription) -> datetime:
        return schedule_of(subscription).next_after(self.anchor(subscription))

    def window_start(self, subscription: Subscription, due: datetime) -> datetime:
        """Where the next scheduled window starts, so that no article is skipped.

        After the last covered window (posted, empty, or interrupted mid-post: that one may
        have been posted, and posting it again is worse than a gap); failed runs before it are
        covered again. Without history, one schedule period back.
        """
        platform, channel = subscription.platform, subscription.channel_id
        covered = self.store.last_delivered(platform, channel, "scheduled", (SENT, EMPTY, SENDING))
        if covered is not None:
            return parse_added_at(covered.until)
        failed = self.store.first_run(platform, channel, "scheduled")
        if failed is not None:
            return parse_added_at(failed.since)
        previous = schedule_of(subscription).latest_at_or_before(due - timedelta(microseconds=1))
        return previous or due - timedelta(days=1)

    # -- runs ----------------------------------------------------------------------------

    def run_due(self) -> list[RunOutcome]:
        """One pass: post every digest that is due now. Safe to call repeatedly and concurrently."""
        outcomes: list[RunOutcome] = []
        with self._lock:
            for subscription in self.store.subscriptions():
                try:
                    outcome = self._run_one(subscription)
                except Exception as error:  # one channel's bug must not stop the others
                    log.exception("Digest for %s:%s failed", subscription.platform, subscription.channel_id)
                    outcome = RunOutcome(
                        subscription.platform, subscription.channel_id, self.clock(), FAILED, False, 0, str(error)
                    )
                if outcome is not None:
                    outcomes.append(outcome)
            for job in self.jobs:
                try:
                    outcomes.extend(job.run_due())
                except Exception:  # a job's bug must not stop the digests either
                    log.exception("Scheduled job %s failed", type(job).__name__)
        return outcomes

    def _run_one(self, subscription: Subscription) -> RunOutcome | None:
        now = self.clock()
        schedule = schedule_of(subscription)
        due = schedule.next_after(self.anchor(subscription))
        if due > now:
            return None
        # Several runs missed while down: post only the latest one, once, covering them all.
        due = schedule.latest_at_or_before(now) or due
        late = now - due > LATE_AFTER
        since = self.window_start(subscription, due)
        platform, channel = subscription.platform, subscription.channel_id
        run_id = self.store.claim(
            platform, channel, "scheduled", added_at_text(due), added_at_text(since), added_at_text(now), late
        )
        if run_id is None:
            return None  # claimed already (another pass or process): never post twice
        scope = self._scope(platform, channel, subscription.tenant)
        digest = build_digest(self.library, channel, since, now, now, zone=schedule.zone, late=late, scope=scope)
        if not digest.stories and not subscription.always:
            self.store.finish(run_id, EMPTY)
            return RunOutcome(platform, channel, due, EMPTY, late, 0)
        poster = self.posters.get(platform)
        try:
            if poster is None:
                raise DeliveryError(f"{platform} is not connected")
            poster.post(channel, DigestReply(digest))
        except DeliveryError as error:
            log.warning("Digest for %s:%s not delivered: %s", platform, channel, error)
            self.store.finish(run_id, FAILED, digest.article_count, str(error) or type(error).__name__)
            return RunOutcome(platform, channel, due, FAILED, late, digest.article_count, str(error))
        self.store.finish(run_id, SENT, digest.article_count)
        log.info(
            "Digest posted to %s:%s (%d articles%s)", platform, channel, digest.article_count, ", late" if late else ""
        )
        return RunOutcome(platform, channel, due, SENT, late, digest.article_count)

    def on_demand(self, platform: str, channel_id: str, since: datetime | None = None, tenant: str = "") -> Digest:
        """A digest now, since ``since`` or the channel's last digest (else the last 24 hours),
        with the channel's scope in ``tenant``."""
        now = self.clock()
        subscription = self.store.subscription(platform, channel_id, tenant)
        zone = ZoneInfo(subscription.timezone if subscription else self.default_timezone)
        if since is None:
            last = self.store.last_delivered(platform, channel_id)
            since = parse_added_at(last.until) if last else now - timedelta(days=1)
        scope = self._scope(platform, channel_id, tenant)
        digest = build_digest(self.library, channel_id, since, now, now, zone=zone, scope=scope)
        # Recorded so that the next `/digest now` continues from here (the caller posts it).
        run_id = self.store.claim(platform, channel_id, "on_demand", added_at_text(now), digest.since, digest.until)
        if run_id is not None:
            self.store.finish(run_id, SENT if digest.stories else EMPTY, digest.article_count)
        return digest

    def _scope(self, platform: str, channel_id: str, tenant: str) -> ResolvedScope | None:
        """The channel's scope (``/scope``) in its tenant: its digest holds only the scope's articles."""
        return self.library.resolve_scope(scope_of_channel(self.store.state, platform, channel_id, tenant))

    # -- the loop ------------------------------------------------------------------------

    def seconds_until_next(self) -> float:
        now = self.clock()
        upcoming = []
        for subscription in self.store.subscriptions():
            try:
                upcoming.append(self.next_run(subscription))
            except ScheduleError:
                continue  # a stored schedule that never fires (saved before it was refused)
        for job in self.jobs:
            moment = job.next_run()
            if moment is not None:
                upcoming.append(moment)
        if not upcoming:
            return MAX_SLEEP
        return min(MAX_SLEEP, max(0.5, (min(upcoming) - now).total_seconds()))

    def run(self, stop: threading.Event) -> None:
        """Post due digests until ``stop`` is set; missed runs go out on the first pass."""
        log.info("Digest scheduler started (%d subscriptions).", len(self.store.subscriptions()))
        while not stop.is_set():
            try:
                self.run_due()
                delay = self.seconds_until_next()
            except Exception:  # a broken store read: keep the loop alive and try again
                log.exception("Digest scheduler pass failed")
                delay = MAX_SLEEP
            stop.wait(delay)

    def start(self, stop: threading.Event) -> threading.Thread:
        """Run the loop in a daemon thread; it ends once ``stop`` is set (after any pass in progress)."""
        thread = threading.Thread(target=self.run, args=(stop,), name="byline-digests", daemon=True)
        thread.start()
        return thread
