"""The weekly admin report of what Byline couldn't answer, posted to a configured channel.

Off unless ``BYLINE_GAPS_DIGEST_CHANNEL`` names one or more admin channels
(``slack:C0123ABC,discord:123456789012345678``); it runs on ``BYLINE_GAPS_DIGEST_SCHEDULE``
(default ``weekly mon 09:00``, in ``BYLINE_TIMEZONE``) and posts the top ten groups of gaps
(``bot/gap_groups.py``: abstentions and 👎 grouped by similar question) asked since the last report.

It is a job of the digest scheduler (``bot/jobs/digest_schedule.py``), so it shares its loop and
its restart rule: each run is claimed in the digest history before it is posted, keyed by its
due time, so a week is posted at most once, a restart never posts it again, and a week missed
while Byline was down is posted once at start, marked late. A week without gaps posts nothing.

Each channel gets the gaps of one tenant (``bot/tenancy.py``): the questions one workspace or
server asked are never shown in another's channel. An entry names its tenant as
``slack:TEAM/CHANNEL`` or ``discord:SERVER/CHANNEL``; an entry without one reports the gaps of
its platform only while they all come from a single tenant (a one-workspace install), and
otherwise posts nothing and logs which entry to complete.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from bot.delivery import DeliveryError
from bot.gap_groups import CHAT_GROUPS, Embed, gaps_text, group_gaps
from bot.jobs.digest_schedule import LATE_AFTER, DigestScheduler, RunOutcome
from bot.replies import TextReply
from bot.schedules import Schedule, ScheduleError, Target, parse_gaps_schedule, parse_targets
from bot.state.digests import EMPTY, FAILED, SENDING, SENT
from bot.state.gaps import Gap, GapStore
from retrieval.features.digest import added_at_text, parse_added_at, window_label

log = logging.getLogger("byline.gaps")


class GapsDigest:
    """The scheduled gaps report for ``targets``; added to a ``DigestScheduler`` with ``add_job``."""

    def __init__(
        self, scheduler: DigestScheduler, gaps: GapStore, embed: Embed | None, targets: list[Target], schedule: Schedule
    ) -> None:
        self.scheduler = scheduler
        self.gaps = gaps
        self.embed = embed
        self.targets = targets
        self.schedule = schedule
        # Without history the first report is the first fire time after Byline started: a
        # fresh install does not post a report the moment it starts.
        self.started = scheduler.clock()

    def _anchor(self, target: Target) -> datetime:
        last = self.scheduler.store.last_run(target.platform, target.history_key, "scheduled")
        return parse_added_at(last.due_at) if last is not None else self.started

    def next_run(self) -> datetime | None:
        upcoming = []
        for target in self.targets:
            try:
                upcoming.append(self.schedule.next_after(self._anchor(target)))
            except ScheduleError:
                continue
        return min(upcoming) if upcoming else None

    def run_due(self) -> list[RunOutcome]:
        outcomes = []
        for target in self.targets:
            try:
                outcome = self._run_one(target)
            except Exception as error:  # one channel's failure must not stop the other's report
                log.exception("Gaps report for %s:%s failed", target.platform, target.channel_id)
                outcome = RunOutcome(
                    target.platform, target.channel_id, self.scheduler.clock(), FAILED, False, 0, str(error)
                )
            if outcome is not None:
                outcomes.append(outcome)
        return outcomes

    def _since(self, target: Target, due: datetime) -> datetime:
        """After the last covered report; a failed one is covered again; else one period back."""
        store, key = self.scheduler.store, target.history_key
        covered = store.last_delivered(target.platform, key, "scheduled", (SENT, EMPTY, SENDING))
        if covered is not None:
            return parse_added_at(covered.until)
        failed = store.first_run(target.platform, key, "scheduled")
        if failed is not None:
            return parse_added_at(failed.since)
        previous = self.schedule.latest_at_or_before(due - timedelta(microseconds=1))
        return previous or due - timedelta(days=7)

    def _gaps_for(self, target: Target, since: datetime, now: datetime) -> list[Gap]:
        """The target tenant's gaps in the window (see the module docstring for unnamed tenants)."""
        until = added_at_text(now)
        found = [gap for gap in self.gaps.since(since) if gap.platform == target.platform and gap.created_at < until]
        if target.tenant:
            return [gap for gap in found if gap.tenant == target.tenant]
        tenants = {gap.tenant for gap in found}
        if len(tenants) > 1:
            log.warning(
                "Gaps report for %s:%s skipped: its questions come from %d workspaces or servers, and the entry "
                "names none. Set BYLINE_GAPS_DIGEST_CHANNEL to %s:TENANT/%s (docs/tenants.md).",
                target.platform,
                target.channel_id,
                len(tenants),
                target.platform,
                target.channel_id,
            )
            return []
        return found

    def _run_one(self, target: Target) -> RunOutcome | None:
        store, now = self.scheduler.store, self.scheduler.clock()
        due = self.schedule.next_after(self._anchor(target))
        if due > now:
            return None
        due = self.schedule.latest_at_or_before(now) or due  # several missed: one report covers them
        late = now - due > LATE_AFTER
        since = self._since(target, due)
        run_id = store.claim(
            target.platform,
            target.history_key,
            "scheduled",
            added_at_text(due),
            added_at_text(since),
            added_at_text(now),
            late,
        )
        if run_id is None:
            return None  # claimed already: never post a week twice
        found = self._gaps_for(target, since, now)
        if not found:
            store.finish(run_id, EMPTY)
            return RunOutcome(target.platform, target.channel_id, due, EMPTY, late, 0)
        groups = group_gaps(found, self.embed)
        label = window_label(since, now, self.schedule.zone)
        heading = "Weekly report" if self.schedule.describe().startswith("weekly") else "Scheduled report"
        note = " (late: Byline was offline when it was due)" if late else ""
        text = f"{heading}{note}. " + gaps_text(groups, label, CHAT_GROUPS)
        poster = self.scheduler.posters.get(target.platform)
        try:
            if poster is None:
                raise DeliveryError(f"{target.platform} is not connected")
            poster.post(target.channel_id, TextReply(text))
        except DeliveryError as error:
            log.warning("Gaps report for %s:%s not delivered: %s", target.platform, target.channel_id, error)
            store.finish(run_id, FAILED, len(found), str(error) or type(error).__name__)
            return RunOutcome(target.platform, target.channel_id, due, FAILED, late, len(found), str(error))
        store.finish(run_id, SENT, len(found))
        log.info("Gaps report posted to %s:%s (%d questions)", target.platform, target.channel_id, len(found))
        return RunOutcome(target.platform, target.channel_id, due, SENT, late, len(found))


def add_gaps_digest(
    scheduler: DigestScheduler, gaps: GapStore, embed: Embed | None, channels: str, schedule: str
) -> GapsDigest | None:
    """Schedule the report when ``channels`` is set (the settings validated both strings)."""
    targets = parse_targets(channels)
    if not targets:
        return None
    job = GapsDigest(scheduler, gaps, embed, targets, parse_gaps_schedule(schedule, scheduler.default_timezone))
    scheduler.add_job(job)
    log.info(
        "Gaps report: %s to %s.",
        job.schedule.describe(),
        ", ".join(f"{t.platform}:{t.channel_id}" for t in targets),
    )
    return job
