"""The seam between ``byline serve`` and a chat platform: one small protocol and a registry.

A platform is whatever ``serve`` can start, stop, post to and render for. Slack, Discord and the
terminal chat are registered through the same door a plugin uses (``register``), the way llm
registers its built-in plugins beside installed ones: each module in ``bot/platforms/`` registers
itself when imported, and so does any installed package that names a module or class under the
``byline.platforms`` entry-point group. Adding Microsoft Teams or Matrix is one new module here (or
one package outside), with no edit to ``serve``.

Modules here import their platform's libraries (slack-bolt, discord.py) only inside ``start``:
``byline ask`` never pays for them, and a platform that is not configured costs nothing.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import threading
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Protocol, TypeVar

from bot.delivery import Poster

if TYPE_CHECKING:
    from bot.replies import Reply
    from bot.service import Service
    from bot.settings import Settings

log = logging.getLogger("byline.platforms")

ENTRY_POINT_GROUP = "byline.platforms"
# Modules of this package that are shared code, not platforms.
_NOT_PLATFORMS = frozenset({"base", "layout"})
# How long ``stop`` waits for a platform's own thread; serve's whole stop has ten seconds.
JOIN_SECONDS = 5.0


class Platform(Poster, Protocol):
    """What ``serve`` needs of a chat platform.

    ``platform`` is the name questions are asked under (``Asker.platform``) and digests are
    subscribed under ("slack"); ``label`` is for people ("Slack"). A ``fallback`` platform is
    started only when no other one is configured (the terminal chat); a ``foreground`` one runs
    on serve's main thread, and at most one does (the terminal chat reads stdin, and only the
    main thread may be interrupted by SIGTERM). ``reading["reading"]`` is True while a
    foreground platform only waits for input, so SIGTERM can end the wait at once.
    """

    platform: str
    label: str
    fallback: bool
    foreground: bool
    reading: dict[str, bool]

    def configured(self, settings: Settings) -> bool:
        """Whether the environment asks for this platform (its token is set)."""
        ...

    def start(self, service: Service, settings: Settings, stop: threading.Event) -> None:
        """Connect and take events. A background platform returns once started; a foreground one
        returns when its user leaves. A setting it cannot use raises a ``BylineError`` with one
        line naming it; a failure later sets ``stop`` and is raised again by ``stop()``."""
        ...

    def stop(self) -> None:
        """Disconnect (``stop`` is set by then); re-raises the failure that ended it early."""
        ...

    def post(self, channel_id: str, reply: Reply) -> None:
        """Post a reply (a digest, a feed notice) to a channel; ``DeliveryError`` when it cannot."""
        ...

    def render(self, reply: Reply) -> Sequence[object]:
        """The platform's messages for a reply (Block Kit messages, embeds, lines of text)."""
        ...


class PlatformBase:
    """Defaults for a platform class: a background platform, no thread of its own."""

    platform = ""
    label = ""
    fallback = False
    foreground = False

    def __init__(self) -> None:
        self.reading: dict[str, bool] = {"reading": False}

    def stop(self) -> None:
        return None


class BackgroundRun:
    """A platform's blocking client loop in a thread of its own, for ``start``/``stop``.

    An exception in the loop sets serve's ``stop`` (so the whole service ends, as systemd or
    Docker expects of a process whose platform died) and is raised again by ``join``."""

    def __init__(self, name: str, loop: Callable[[], None]) -> None:
        self.name = name
        self.loop = loop
        self.failure: BaseException | None = None
        self.thread: threading.Thread | None = None

    def start(self, stop: threading.Event) -> None:
        def run() -> None:
            try:
                self.loop()
            except BaseException as error:  # noqa: BLE001 - handed to serve through join()
                self.failure = error
            finally:
                stop.set()  # a loop that ends on its own ends the service too

        self.thread = threading.Thread(target=run, name=self.name, daemon=True)
        self.thread.start()

    def join(self, timeout: float = JOIN_SECONDS) -> None:
        if self.thread is not None:
            self.thread.join(timeout)
            if self.thread.is_alive():
                log.warning("%s did not stop within %.0f s; leaving it.", self.name, timeout)
        if self.failure is not None:
            failure, self.failure = self.failure, None
            raise failure


PlatformFactory = Callable[[], Platform]
F = TypeVar("F", bound=PlatformFactory)
_REGISTRY: dict[str, PlatformFactory] = {}
_loaded = False


def register(factory: F, name: str | None = None) -> F:
    """Add a platform (a class, or any callable making one); the same name replaces it. Usable
    as a class decorator. Returns ``factory``."""
    key = name or str(getattr(factory, "platform", "") or getattr(factory, "__name__", ""))
    if not key:
        raise ValueError("a platform needs a name: give the class a `platform` attribute")
    _REGISTRY[key] = factory
    return factory


def unregister(name: str) -> None:
    """Remove a platform (tests that registered a fake)."""
    _REGISTRY.pop(name, None)


def load() -> None:
    """Import the built-in platform modules and installed plugins, once; each registers itself."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    package = importlib.import_module(__package__ or "bot.platforms")
    for module in pkgutil.iter_modules(package.__path__):
        if module.name not in _NOT_PLATFORMS and not module.name.startswith("_"):
            importlib.import_module(f"{__package__}.{module.name}")
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = entry.load()
        except Exception:  # one broken plugin must not stop Slack and Discord
            log.exception("Platform plugin %s (%s) could not be loaded; going on without it.", entry.name, entry.value)
            continue
        if callable(loaded):  # a class or factory; a module registers itself on import
            register(loaded, entry.name)


def registered() -> dict[str, PlatformFactory]:
    """Every registered platform by name, built-ins and plugins (loading them first)."""
    load()
    return dict(_REGISTRY)


def configured(settings: Settings) -> list[Platform]:
    """New instances of the platforms the settings ask for, in registration order; the fallback
    platforms (the terminal chat) only when no other one is configured."""
    made = [factory() for factory in registered().values()]
    chosen = [platform for platform in made if not platform.fallback and platform.configured(settings)]
    return chosen or [platform for platform in made if platform.fallback and platform.configured(settings)]
