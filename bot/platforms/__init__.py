"""Chat platforms for ``byline serve``: the protocol and registry (``base``) and one module per
platform (``slack``, ``discord``, ``terminal``), each registering itself; see docs/architecture.md,
"Adding a platform". Importing this package loads none of them: ``base.load()`` does, when serve asks."""

from bot.platforms.base import BackgroundRun, Platform, PlatformBase, configured, load, register, registered, unregister

__all__ = ["BackgroundRun", "Platform", "PlatformBase", "configured", "load", "register", "registered", "unregister"]
