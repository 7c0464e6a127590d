"""Assembles the full service: core commands plus digests and ingest from chat.

Kept apart from ``service.py`` so that the service itself stays small and the features that
build on it (which import it) can be wired without import cycles.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bot.commands import autoreply, gaps, remove, scope
from bot.commands.alerts import register_alerts
from bot.commands.digest import register_digest
from bot.commands.ingest import register_ingest
from bot.commands.quotes import register_quote_commands
from bot.commands.verify import register_verify
from bot.jobs.digest_schedule import DigestScheduler
from bot.limits import LimitSettings
from bot.service import Service
from bot.state.digests import DigestStore

if TYPE_CHECKING:
    from retrieval.backend import Backend
    from retrieval.ingest.fetch import Fetcher


def add_features(service: Service, default_timezone: str = "UTC", fetcher: Fetcher | None = None) -> Service:
    """Register the commands beyond asking (the service's own: /ask, /search, /sources, /help) on
    a service: the channel and library commands, /digest (with its scheduler, not yet started),
    /ingest (fetching under ``fetcher``, the settings' policy), the quote commands and /verify.

    Every command is registered here, not by the service, so that the commands (which take the
    service) and the service never import each other; the order is the order /help lists them."""
    for command in (
        autoreply.command(service.state),
        gaps.command(service),
        scope.command(service.library, service.state),
        remove.command(service.library),
    ):
        service.register(command)
    scheduler = DigestScheduler(service.library, DigestStore(service.state), default_timezone=default_timezone)
    service.scheduler = scheduler
    register_digest(service, scheduler)
    register_ingest(service, fetcher)
    # /quotes, /reactions and /alerts (issue 35); the alerts job runs in the scheduler's loop.
    register_quote_commands(service)
    register_alerts(service, scheduler)
    # /verify: is this quote real? (issue 35, part 1)
    register_verify(service)
    return service


def open_service(
    data_dir: Path,
    seeds_dir: Path | None,
    limits: LimitSettings | None = None,
    timezone: str = "UTC",
    fetcher: Fetcher | None = None,
    backend: Backend | None = None,
) -> Service:
    return add_features(Service.open(data_dir, seeds_dir, limits, backend), timezone, fetcher)
