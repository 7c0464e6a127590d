"""Removing articles: ``byline remove`` and ``/remove`` take them out of the store and both
indexes, and the audit log records who and when."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.service import Asker, Service
from retrieval.features.removal import audit_entries
from retrieval.library import Library
from tests.conftest import SEED_FILE

ADMIN = Asker("slack", "U1", "C1", is_admin=True, tenant="slack:T0001", is_operator=True)
MEMBER = Asker("slack", "U2", "C1")


def test_remove_command_is_admin_only_and_removes_everywhere(seed_service: Service) -> None:
    library = seed_service.library
    article = library.store.list_articles()[0]
    assert library.search("Kompany injury")
    refused = seed_service.run_command(f"/remove {article.id}", MEMBER)
    assert refused.error and "operators" in refused.text  # type: ignore[union-attr]
    assert library.store.article_count() == 1
    usage = seed_service.run_command("/remove", ADMIN)
    assert usage.error and "Usage" in usage.text  # type: ignore[union-attr]
    reply = seed_service.run_command(f"/remove {article.id} nothing-like-this", ADMIN)
    assert "Removed" in reply.text and "nothing-like-this" in reply.text  # type: ignore[union-attr]
    assert library.store.article_count() == 0
    assert library.search("Kompany injury") == []
    entries = audit_entries(library.store)
    assert [(e.actor, e.action, e.article_key) for e in entries] == [("slack:U1", "remove", article.key)]
    assert "C1" in entries[0].detail and entries[0].at


def test_removed_articles_stay_removed_after_reopening(seed_library: Library) -> None:
    from retrieval.features.removal import remove_articles

    article = seed_library.store.list_articles()[0]
    removal = remove_articles(seed_library, [article.key], "cli:test")
    assert [a.id for a in removal.removed] == [article.id]
    directory = seed_library.data_dir
    seed_library.close()
    reopened = Library.open(directory, seed_library.embedder)
    try:
        assert reopened.store.article_count() == 0 and reopened.search("Kompany injury") == []
        assert not reopened.messages  # the saved indexes agree with the store: nothing rebuilt
    finally:
        reopened.close()


def test_byline_remove_and_audit(cli_data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["remove", "999"]) == 1
    assert "no stored article is '999'" in capsys.readouterr().err
    assert main(["remove", str(SEED_FILE)]) == 0  # by key: the file's path
    out = capsys.readouterr().out
    assert "removed: Mourinho" in out and "1 article removed" in out
    assert main(["audit", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert len(entries) == 1 and entries[0]["actor"].startswith("cli:") and entries[0]["action"] == "remove"
    assert main(["sources", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 0


# The same tests over the embedded library and the cluster backend (PostgreSQL + Qdrant).
pytestmark = pytest.mark.backends("embedded", "cluster")
