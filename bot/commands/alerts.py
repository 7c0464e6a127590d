"""``/alerts add|show|remove``: a channel's subscriptions to a person's new quotes (issue 35).

The command keeps the subscriptions in the state store (``bot/state/alerts.py``); the job that
posts the new quotes is ``bot/jobs/alerts.py``, run in the digest scheduler's loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.asking import Asker, Command
from bot.commands.quotes import ArgumentError, parse_pairs
from bot.jobs.alerts import PER_HOUR, AlertJob, alert_label
from bot.replies import Reply, TextReply
from bot.state.alerts import FAILED, SENT, AlertStore
from retrieval.features.quote_pages import user_words
from retrieval.features.quote_timeline import speaker_timeline
from retrieval.render import format_date

if TYPE_CHECKING:
    from bot.jobs.digest_schedule import DigestScheduler
    from bot.service import Service
    from retrieval.library import Library

USAGE = "/alerts add speaker:NAME [topic:WORDS] | show | remove ID"


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
