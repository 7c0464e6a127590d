"""The ``/digest`` command: now, since, subscribe, unsubscribe, status.

``now`` and ``since`` are for anyone; ``subscribe`` and ``unsubscribe`` need ``Asker.is_admin``
(adapters decide it: Discord Manage Channels, Slack admins from the config). A subscription
belongs to one channel, keyed by (platform, channel_id).
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo

from bot.asking import Asker, Command, shown
from bot.jobs.digest_schedule import DigestScheduler, schedule_of
from bot.replies import DigestReply, Reply, TextReply
from bot.schedules import ScheduleError, parse_schedule
from bot.service import Service
from bot.state.digests import EMPTY, FAILED, SENDING, SENT
from bot.tenancy import ANOTHER_TENANT
from retrieval.features.digest import parse_added_at, window_label

USAGE = "/digest now | since TIME | subscribe SCHEDULE [--always] | unsubscribe | status"
SINCE_EXAMPLES = "`/digest since 2h`, `/digest since yesterday`, `/digest since 2026-11-30` or `/digest since 09:00`"
ALWAYS_FLAGS = {"--always", "always", "even-if-empty", "--even-if-empty"}
# ASCII digits only: \d also matches other scripts' digits, and int() of thousands of them raises.
_DURATION = re.compile(r"^([0-9]+)\s*(m|min|mins|minutes?|h|hr|hrs|hours?|d|days?|w|weeks?)$")
_UNIT_MINUTES = {"m": 1, "h": 60, "d": 60 * 24, "w": 60 * 24 * 7}
# How far back `/digest since` may reach. Byline has no article added longer ago than it has run,
# and a bound keeps every date in datetime's range (`99999999999h` would overflow it).
MAX_LOOKBACK = timedelta(days=3650)
LOOKBACK_RANGE = "from 1 minute up to 10 years back (`1m` to `3650d` or `521w`)"
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def parse_since(text: str, now: datetime, zone: tzinfo) -> datetime:
    """``2h``, ``30m``, ``3d``, ``yesterday``, ``today``, ``monday``, ``2026-11-30 [HH:MM]``, ``09:00``.

    Dates and times are read in the channel's timezone; a bare time later than now means that
    time yesterday. Raises ``ScheduleError`` with examples for anything else.
    """
    value = " ".join(text.lower().split())
    local_now = now.astimezone(zone)
    today = local_now.date()
    match = _DURATION.match(value)
    if match:
        digits = match.group(1).lstrip("0") or "0"
        minutes = int(digits) * _UNIT_MINUTES[match.group(2)[0]] if len(digits) <= 12 else None
        if minutes is None or not 1 <= minutes <= MAX_LOOKBACK / timedelta(minutes=1):
            raise ScheduleError(f"`{shown(text)}` is out of range: `/digest since` goes {LOOKBACK_RANGE}.")
        return now - timedelta(minutes=minutes)
    if value in {"today", "yesterday"}:
        return _midnight(today - timedelta(days=1 if value == "yesterday" else 0), zone)
    for index, name in enumerate(_WEEKDAYS):
        if len(value) >= 3 and name.startswith(value):
            back = (today.weekday() - index) % 7 or 7
            return _midnight(today - timedelta(days=back), zone)
    if re.fullmatch(r"[0-9]{1,2}:[0-9]{2}", value):
        hour, minute = (int(part) for part in value.split(":"))
        if hour < 24 and minute < 60:
            moment = datetime.combine(today, time(hour, minute), zone)
            return moment if moment <= now else moment - timedelta(days=1)
    try:
        parsed = datetime.fromisoformat(value.replace(" ", "T"))
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=zone)
        # Comparing reads the UTC offset, which overflows for a zone east of UTC on 0001-01-01.
        future, too_old = parsed > now, parsed < now - MAX_LOOKBACK
    except (ValueError, OverflowError):
        raise ScheduleError(f"I can't read `{shown(text)}` as a time. Try {SINCE_EXAMPLES}.") from None
    if future:
        raise ScheduleError(f"`{shown(text)}` is in the future. Try {SINCE_EXAMPLES}.")
    if too_old:
        raise ScheduleError(f"`{shown(text)}` is out of range: `/digest since` goes {LOOKBACK_RANGE}.")
    return parsed


def _midnight(day: date, zone: tzinfo) -> datetime:
    return datetime.combine(day, time(0, 0), zone)


class DigestCommand:
    """Parses ``/digest`` arguments and runs them against the scheduler."""

    def __init__(self, scheduler: DigestScheduler) -> None:
        self.scheduler = scheduler

    def __call__(self, args: str, asker: Asker) -> Reply:
        verb, _, rest = args.strip().partition(" ")
        verb, rest = verb.lower(), rest.strip()
        try:
            if verb in {"", "now"}:
                return DigestReply(self.scheduler.on_demand(asker.platform, asker.channel_id))
            if verb == "since":
                if not rest:
                    return _error(f"Say since when, e.g. {SINCE_EXAMPLES}.")
                since = parse_since(rest, self.scheduler.clock(), self._zone(asker))
                return DigestReply(self.scheduler.on_demand(asker.platform, asker.channel_id, since, asker.tenant))
            if verb == "subscribe":
                return self._subscribe(rest, asker)
            if verb == "unsubscribe":
                return self._unsubscribe(asker)
            if verb == "status":
                return self._status(asker)
        except ScheduleError as error:
            return _error(str(error))
        return _error(f"Usage: `{USAGE}`, e.g. `/digest subscribe daily 09:00 Europe/London`.")

    def _zone(self, asker: Asker) -> ZoneInfo:
        subscription = self.scheduler.store.subscription(asker.platform, asker.channel_id, asker.tenant)
        return ZoneInfo(subscription.timezone if subscription else self.scheduler.default_timezone)

    def _subscribe(self, rest: str, asker: Asker) -> Reply:
        if not asker.is_admin:
            return _error(
                "Only this channel's admins can subscribe it to digests (Discord: Manage Channels in this server)."
            )
        words = rest.split()
        always = any(word.lower() in ALWAYS_FLAGS for word in words)
        schedule = parse_schedule(
            " ".join(w for w in words if w.lower() not in ALWAYS_FLAGS), self.scheduler.default_timezone
        )
        subscription = self.scheduler.subscribe(
            asker.platform, asker.channel_id, schedule, always, asker.user_id, asker.tenant
        )
        if subscription is None:
            return _error(ANOTHER_TENANT)
        when = self._local(self.scheduler.next_run(subscription), schedule.timezone)
        quiet = "even when nothing is new" if always else "only when there is something new"
        return TextReply(f"Subscribed: digests {schedule.describe()}, posted {quiet}. Next: {when}.")

    def _unsubscribe(self, asker: Asker) -> Reply:
        if not asker.is_admin:
            return _error(
                "Only this channel's admins can unsubscribe it from digests (Discord: Manage Channels in this server)."
            )
        if self.scheduler.store.unsubscribe(asker.platform, asker.channel_id, asker.tenant):
            return TextReply("Unsubscribed: this channel gets no more scheduled digests.")
        return TextReply("This channel has no digest subscription.", private=True)

    def _status(self, asker: Asker) -> Reply:
        store = self.scheduler.store
        subscription = store.subscription(asker.platform, asker.channel_id, asker.tenant)
        timezone = subscription.timezone if subscription else self.scheduler.default_timezone
        lines: list[str] = []
        if subscription is None:
            lines.append(
                "No scheduled digest here. An admin can add one: `/digest subscribe daily 09:00 Europe/London`."
            )
        else:
            schedule = schedule_of(subscription)
            extra = ", posted even when nothing is new" if subscription.always else ""
            lines.append(f"Scheduled: {schedule.describe()}{extra}.")
            try:
                lines.append(f"Next run: {self._local(self.scheduler.next_run(subscription), timezone)}.")
            except ScheduleError as error:  # stored before impossible schedules were refused
                lines.append(f"Next run: none: {error}")
        last = store.last_run(asker.platform, asker.channel_id)
        if last is not None:
            start, end = (self._local(parse_added_at(moment), timezone) for moment in (last.since, last.until))
            covers = f"{start} to {end}"
            outcome = {
                SENT: f"posted, {last.article_count} article{'s' if last.article_count != 1 else ''}",
                EMPTY: "nothing new, so nothing posted",
                FAILED: f"FAILED: {last.error}",
                SENDING: "interrupted (Byline stopped while posting; it is not re-sent)",
            }.get(last.status, last.status)
            kind = "scheduled" if last.kind == "scheduled" else "on demand"
            late = ", late" if last.late else ""
            lines.append(f"Last digest ({kind}{late}): {outcome}; covered {covers}.")
        failed = next((r for r in reversed(store.runs(asker.platform, asker.channel_id)) if r.status == FAILED), None)
        if failed is not None and (last is None or failed.id != last.id):
            lines.append(f"Last failure: {self._local(parse_added_at(failed.due_at), timezone)}: {failed.error}.")
        return TextReply("\n".join(lines), private=True)

    def _local(self, moment: datetime, timezone: str) -> str:
        return window_label(moment, self.scheduler.clock(), ZoneInfo(timezone))


def _error(text: str) -> TextReply:
    return TextReply(text, private=True, error=True)


def register_digest(service: Service, scheduler: DigestScheduler) -> None:
    """Add ``/digest`` to the service (permissions are checked per verb, not per command)."""
    service.register(
        Command("digest", USAGE, "news digests: on demand, or scheduled for this channel", DigestCommand(scheduler))
    )
