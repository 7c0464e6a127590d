"""The SSRF guard: which URLs Byline may fetch, decided before every connection.

Anyone who can type ``/ingest URL`` in chat, or publish a feed Byline follows, chooses where
Byline connects. Without this guard they could make it read the cloud metadata service
(169.254.169.254), an admin page on localhost or a service on the private network. So only
``http``/``https`` are allowed, and a host must resolve to public addresses only, unless the
host or its range is listed in ``BYLINE_FETCH_ALLOWLIST``.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from retrieval.errors import BylineError

ALLOWLIST_VARIABLE = "BYLINE_FETCH_ALLOWLIST"
ALLOWED_SCHEMES = frozenset({"http", "https"})
METADATA_ADDRESSES = frozenset({ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")})

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class FetchError(BylineError):
    """A URL that could not be fetched; the message names the URL and says why."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason


class BlockedURL(FetchError):
    """A URL Byline refuses to fetch: another scheme, or a private, loopback or metadata address."""


@dataclass(frozen=True)
class Target:
    """A checked URL: where to connect (a pinned address, so DNS cannot change it afterwards)."""

    scheme: str
    host: str
    port: int
    address: str


@dataclass(frozen=True)
class Allowlist:
    """Hosts and CIDR ranges that may be fetched even though they are not public."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = field(default=())

    @classmethod
    def parse(cls, value: str) -> Allowlist:
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for entry in (part.strip().lower() for part in value.split(",")):
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                hosts.add(entry.rstrip("."))
        return cls(frozenset(hosts), tuple(networks))

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Allowlist:
        return cls.parse(environ.get(ALLOWLIST_VARIABLE, ""))

    def allows_address(self, address: IPAddress) -> bool:
        return any(address.version == net.version and address in net for net in self.networks)


def _unmapped(address: IPAddress) -> IPAddress:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # ::ffff:127.0.0.1 is loopback too
    return address


def _public(address: IPAddress) -> bool:
    return address.is_global and not address.is_multicast and address not in METADATA_ADDRESSES


def _describe(address: IPAddress) -> str:
    if address in METADATA_ADDRESSES:
        return "the cloud metadata address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_private:
        return "a private address"
    return "not a public address"


def check_url(url: str, allowlist: Allowlist) -> Target:
    """Check a URL and resolve its host; raises ``BlockedURL`` when it must not be fetched."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise BlockedURL(url, "not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        shown = f"{scheme}://" if scheme else "a URL without a scheme"
        raise BlockedURL(url, f"only http:// and https:// URLs can be fetched, not {shown}")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise BlockedURL(url, "the URL has no host")
    port = port or (443 if scheme == "https" else 80)
    host_allowed = host in allowlist.hosts
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise FetchError(url, f"cannot resolve host {host!r} ({error})") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise FetchError(url, f"cannot resolve host {host!r}")
    for text in addresses:
        address = _unmapped(ipaddress.ip_address(text.split("%")[0]))
        # Every address must pass, not just one: the connection could go to any of them.
        if not (host_allowed or _public(address) or allowlist.allows_address(address)):
            raise BlockedURL(
                url,
                f"{host} resolves to {address}, {_describe(address)}; Byline only fetches public addresses "
                f"(add the host or range to {ALLOWLIST_VARIABLE} to allow it)",
            )
    return Target(scheme, host, port, addresses[0])
