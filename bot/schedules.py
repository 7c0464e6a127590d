"""When and where scheduled posts go: schedules (daily, weekly or cron, in a timezone) and the
admin channels the gaps report posts to.

Pure parsing, with nothing of the service or the jobs, so that the settings can check
``BYLINE_GAPS_DIGEST_*`` when they are read, and the commands and jobs can share it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterError, croniter

from bot.asking import shown

Clock = Callable[[], datetime]
DAYS = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6}
EXAMPLES = "`daily 09:00 Europe/London`, `weekly mon 09:00 America/New_York` or `0 9 * * 1-5 Europe/Paris`"
# The longest IANA timezone name is about 30 characters; a longer one is refused before
# ZoneInfo turns it into a file path (a 5,000-character name raises OSError there).
MAX_TIMEZONE_NAME = 64
NEVER_FIRES = "never fires (a date such as 31 February does not exist)"


class ScheduleError(ValueError):
    """A schedule or timezone the user must correct; the message says how, with an example."""


def utc_clock() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Schedule:
    """When a channel's digest runs: a cron expression read in an IANA timezone."""

    cron: str
    timezone: str

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    def describe(self) -> str:
        minute, hour, day, month, weekday = self.cron.split()
        if minute.isdigit() and hour.isdigit() and day == month == "*":
            at = f"{int(hour):02d}:{int(minute):02d}"
            if weekday == "*":
                return f"daily at {at} ({self.timezone})"
            if weekday in DAYS:
                return f"weekly on {weekday.capitalize()} at {at} ({self.timezone})"
        return f"cron `{self.cron}` ({self.timezone})"

    def next_after(self, moment: datetime) -> datetime:
        """The first fire time strictly after ``moment`` (aware), as an aware UTC datetime."""
        zone = self.zone
        local = moment.astimezone(zone).replace(tzinfo=None)
        # Wall-clock iteration: croniter never sees an offset, zoneinfo resolves it afterwards.
        # A time in the spring-forward gap resolves (fold=0) to the hour after; an autumn time
        # that occurs twice fires on its first occurrence only, since the next wall-clock time
        # after it is a day later.
        runs = croniter(self.cron, local)
        try:
            for _ in range(1000):
                candidate = runs.get_next(datetime).replace(tzinfo=zone).astimezone(UTC)
                if candidate > moment:
                    return candidate
        except (CroniterError, OverflowError):
            # croniter gives up on a date that never comes (CroniterBadDateError), or runs
            # past year 9999: either way this schedule has no next run.
            pass
        raise ScheduleError(f"`{self.cron}` {NEVER_FIRES}. Try {EXAMPLES}.")

    def latest_at_or_before(self, moment: datetime) -> datetime | None:
        """The last fire time at or before ``moment``, or None within the first period."""
        zone = self.zone
        local = moment.astimezone(zone).replace(tzinfo=None) + timedelta(microseconds=1)
        runs = croniter(self.cron, local)
        try:
            for _ in range(1000):
                candidate = runs.get_prev(datetime).replace(tzinfo=zone).astimezone(UTC)
                if candidate <= moment:
                    return candidate
        except (CroniterError, OverflowError):
            pass  # no earlier fire time croniter can find: as within the first period
        return None


def parse_timezone(name: str) -> str:
    """A valid IANA timezone name, or ScheduleError with an example."""
    try:
        if len(name) > MAX_TIMEZONE_NAME:
            raise ValueError(name)
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ScheduleError(
            f"Unknown timezone `{shown(name)}`. Use an IANA name such as `Europe/London`, `America/New_York` or `UTC`."
        ) from None
    return name


def parse_schedule(text: str, default_timezone: str = "UTC") -> Schedule:
    """``daily 09:00 [TZ]``, ``weekly mon 09:00 [TZ]`` or ``MIN HOUR DAY MONTH WEEKDAY [TZ]``."""
    words = text.split()
    if not words:
        raise ScheduleError(f"Say when, e.g. {EXAMPLES}.")
    kind = words[0].lower()
    if kind in {"daily", "weekly"}:
        rest = words[1:]
        weekday = "*"
        if kind == "weekly":
            if not rest or rest[0].lower()[:3] not in DAYS:
                raise ScheduleError(f"Weekly needs a day, e.g. `weekly mon 09:00 Europe/London` (not `{shown(text)}`).")
            weekday, rest = rest[0].lower()[:3], rest[1:]
        if not rest:
            raise ScheduleError(f"Say the time, e.g. `{kind} {'mon ' if kind == 'weekly' else ''}09:00 Europe/London`.")
        hour, minute = _clock_time(rest[0], kind)
        timezone = parse_timezone(rest[1]) if len(rest) > 1 else default_timezone
        if len(rest) > 2:
            raise ScheduleError(f"Too many words in `{shown(text)}`. Try {EXAMPLES}.")
        return Schedule(f"{minute} {hour} * * {weekday}", timezone)
    if len(words) in {5, 6}:
        cron = " ".join(words[:5])
        if not croniter.is_valid(cron):
            raise ScheduleError(
                f"`{shown(cron)}` is not a valid cron expression (minute hour day month weekday). Try {EXAMPLES}."
            )
        timezone = parse_timezone(words[5]) if len(words) == 6 else default_timezone
        schedule = Schedule(cron, timezone)
        schedule.next_after(utc_clock())  # valid but impossible (`0 9 31 2 *`): refused now, not at status
        return schedule
    raise ScheduleError(f"I don't understand the schedule `{shown(text)}`. Try {EXAMPLES}.")


def _clock_time(text: str, kind: str) -> tuple[int, int]:
    # ASCII digits, at most two each: isdigit() is true of "²", which int() cannot read.
    match = re.fullmatch(r"([0-9]{1,2}):([0-9]{2})", text)
    if match and int(match.group(1)) < 24 and int(match.group(2)) < 60:
        return int(match.group(1)), int(match.group(2))
    raise ScheduleError(f"`{shown(text)}` is not a time of day; use 24-hour HH:MM, e.g. `{kind} 09:00 Europe/London`.")


DEFAULT_SCHEDULE = "weekly mon 09:00"
PLATFORMS = ("slack", "discord")
# Runs are kept in the digest history under this prefix of the channel id: the history's
# "claimed once per due time" index then covers these runs too, and a channel's own digest
# (``/digest status``) never sees them.
HISTORY_PREFIX = "gaps:"
EXAMPLE = "`slack:T0123ABC/C0123ABC` or `discord:SERVER_ID/CHANNEL_ID`"


@dataclass(frozen=True)
class Target:
    platform: str
    channel_id: str
    # The tenant key (bot/tenancy.py) whose gaps this channel gets; "" when the entry named none.
    tenant: str = ""

    @property
    def history_key(self) -> str:
        return HISTORY_PREFIX + self.channel_id


def parse_targets(text: str) -> list[Target]:
    """``slack:C0123,discord:456`` as targets; ValueError, saying the expected form, otherwise."""
    targets: list[Target] = []
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        platform, sep, channel = entry.partition(":")
        platform, channel = platform.strip().lower(), channel.strip()
        owner, slash, channel = channel.rpartition("/")
        if slash and not (owner.isascii() and owner.isalnum()):
            raise ValueError(f"`{entry[:80]}` is not platform:tenant/channel; write {EXAMPLE}")
        if not sep or platform not in PLATFORMS or not channel or not channel.isascii() or not channel.isalnum():
            raise ValueError(f"`{entry[:80]}` is not platform:channel; write {EXAMPLE}")
        if platform == "discord" and not (channel.isdigit() and (not owner or owner.isdigit())):
            raise ValueError(f"`{entry[:80]}`: Discord server and channel ids are numbers, e.g. {EXAMPLE}")
        target = Target(platform, channel, f"{platform}:{owner}" if owner else "")
        if target not in targets:
            targets.append(target)
    return targets


def parse_gaps_schedule(text: str, timezone: str) -> Schedule:
    """The report's schedule, read in ``timezone`` unless it names its own; ValueError if unusable."""
    try:
        return parse_schedule(text or DEFAULT_SCHEDULE, timezone)
    except ScheduleError as error:
        raise ValueError(str(error)) from None
