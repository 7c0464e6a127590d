"""Who a request belongs to (its tenant) and what each role may do: the one place that says so.

A **tenant** is one Slack workspace (its team id; an org-wide Enterprise Grid install without a
team is the enterprise) or one Discord server (its guild id). A Discord DM has no server: it is a
tenant of one, the user. The terminal and the ``byline`` CLI are the **operator**.

Roles, decided by the adapters and carried on ``Asker``:

- the **operator** (``is_operator``): the people in ``BYLINE_SLACK_ADMINS`` /
  ``BYLINE_DISCORD_ADMINS``, the terminal chat and the CLI. The article library, its feeds and
  removals are shared by every tenant, so only the operator changes them (``/ingest``,
  ``/remove``, attached files, ``byline feeds``). The operator is also a tenant admin everywhere.
- a **tenant admin** (``is_admin``): the operator; on Discord, Manage Channels, Manage Server or
  Administrator *in that server*; on Slack, the user who installed Byline in that workspace
  (OAuth); on either, a user listed for that tenant in ``BYLINE_TENANT_ADMINS``. A tenant admin
  changes only that tenant's channels: scope, digests, question channels, alerts, and reads that
  tenant's gaps and feedback.
- everyone else asks, searches, votes and shares their own private answers.

Every stored row that belongs to a tenant carries its tenant key (``bot/state/store.py`` migration 6)
and every read filters by it. Rows stored before tenancy existed carry ``""``: a per-channel
setting with ``""`` is claimed by the first tenant that reads or writes that channel (Discord
channel ids are global, Slack ones are per workspace, so only that channel's own tenant can
reach it); an old gap or answer with ``""`` is seen only by the operator.

Per-tenant libraries (a tenant ingesting into its own namespace) are not built: Byline's library
is the operator's, curated for every tenant, which is what the newsroom and community installs
we know of want. The scope filter (``/scope``) already narrows what answers in a channel.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

OPERATOR = "operator"
# A Slack Connect channel shared by two workspaces: its settings belong to the first that set them.
ANOTHER_TENANT = (
    "This channel is shared with another workspace, whose admins set it up: its settings stay theirs. "
    "Ask them, or use a channel of your own."
)


def slack_tenant(team_id: str | None, enterprise_id: str | None = None) -> str:
    """The tenant key of a Slack workspace: its team, or the enterprise of an org-wide install."""
    if team_id:
        return f"slack:{team_id}"
    if enterprise_id:
        return f"slack:{enterprise_id}"
    return "slack:"


def slack_body_tenant(body: Mapping[str, Any], team_id: str | None = None, enterprise_id: str | None = None) -> str:
    """The workspace a Slack request came from: bolt's authorised team when known (OAuth), else
    the ids in the body (events: ``team_id``; slash commands: ``team_id``; buttons: ``team.id``)."""
    if team_id or enterprise_id:
        return slack_tenant(team_id, enterprise_id)
    team = body.get("team")
    enterprise = body.get("enterprise")
    return slack_tenant(
        str(body.get("team_id") or (team.get("id") if isinstance(team, dict) else "") or ""),
        str(body.get("enterprise_id") or (enterprise.get("id") if isinstance(enterprise, dict) else "") or ""),
    )


def discord_tenant(guild_id: int | str | None, user_id: int | str) -> str:
    """The tenant key of a Discord server, or of one user's DMs with Byline."""
    return f"discord:{guild_id}" if guild_id else f"discord:dm:{user_id}"


def parse_tenant_admins(text: str) -> dict[str, frozenset[str]]:
    """``BYLINE_TENANT_ADMINS``: ``slack:T123=U1 U2; discord:456=789`` as {tenant: user ids}.

    Raises ValueError naming the entry that is not ``TENANT=USER…``."""
    admins: dict[str, set[str]] = {}
    for entry in text.replace("\n", ";").split(";"):
        entry = entry.strip()
        if not entry:
            continue
        tenant, equals, users = entry.partition("=")
        tenant = tenant.strip()
        if not equals or not tenant.startswith(("slack:", "discord:")) or not users.split():
            raise ValueError(
                f"{entry[:60]!r} is not TENANT=USER… (e.g. 'slack:T0123ABC=U0456DEF' or 'discord:1234=5678')"
            )
        admins.setdefault(tenant, set()).update(user.strip() for user in users.replace(",", " ").split())
    return {tenant: frozenset(users) for tenant, users in admins.items()}


def is_listed_admin(tenant_admins: Mapping[str, Iterable[str]], tenant: str, user_id: str) -> bool:
    """True when ``BYLINE_TENANT_ADMINS`` names ``user_id`` for ``tenant``."""
    return user_id in tenant_admins.get(tenant, ())


def visible_tenants(tenant: str) -> tuple[str, str]:
    """The tenant values a per-channel read of ``tenant`` accepts: its own, and rows from before
    tenancy (``""``), which only that channel's tenant can reach (see the module docstring)."""
    return (tenant, "")
