"""docs/rules.md and docs/protocol.md travel with the code: each is the contract in
../shared/design/ (the source of truth) under one line that says so."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT.parent / "shared" / "design"


@pytest.mark.parametrize("name", ["rules.md", "protocol.md"])
def test_the_copy_in_docs_is_the_contract(name):
    copy = (ROOT / "docs" / name).read_text()
    head, _, body = copy.partition("\n\n")
    assert head.startswith("> The source of truth is") and f"shared/design/{name}" in head
    if not SOURCE.is_dir():  # a clone on its own: only the copy is there
        return
    assert body == (SOURCE / name).read_text(), f"docs/{name} is behind ../shared/design/{name}: copy it"
