"""Every language file in web/js/i18n/ has exactly English's keys, each with the same {placeholders}.

A key missing in one language shows English (or the key itself) in the middle of that language, and a
placeholder missing or misspelt shows a raw "{name}" or drops a number: neither shows in a test that
plays in English. The files are read as text, no JavaScript runtime needed: each is one object
literal of string keys and string values, and anything else in it fails the parse loudly rather than
hide a key.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

WEB_JS = Path(__file__).resolve().parents[2] / "web" / "js"
I18N_DIR = WEB_JS / "i18n"
LANG_FILES = sorted(I18N_DIR.glob("*.js"))

TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<word>[A-Za-z_$][\w$]*)
  | (?P<punct>[{}:,;=])
  | (?P<other>.)
""", re.S | re.X)
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def tokens(text: str) -> list[tuple[str, str]]:
    return [(m.lastgroup, m.group()) for m in TOKEN.finditer(text) if m.lastgroup != "space"]


def read_strings(path: Path) -> tuple[str, dict[str, str]]:
    """The exported name and its {key: value} (values as written, quotes and escapes kept)."""
    toks = tokens(path.read_text(encoding="utf-8"))
    head = [v for _, v in toks[:5]]
    assert head[:2] == ["export", "const"] and head[3:5] == ["=", "{"], f"{path.name}: starts {head}"
    name = head[2]
    strings: dict[str, str] = {}
    i = 5
    while toks[i] != ("punct", "}"):
        kind, key = toks[i]
        assert kind == "string", f"{path.name}: a key that is not a string literal: {key}"
        assert toks[i + 1] == ("punct", ":"), f"{path.name}: no ':' after {key}"
        kind, value = toks[i + 2]
        assert kind == "string", f"{path.name}: {key} is not one string literal: {value}…"
        key = key[1:-1]
        assert key not in strings, f"{path.name}: {key} twice (the last one wins)"
        strings[key] = value[1:-1]
        i += 3
        if toks[i] == ("punct", ","):
            i += 1
    assert [v for _, v in toks[i:]] in (["}", ";"], ["}"]), f"{path.name}: something after the object"
    return name, strings


def placeholders(value: str) -> set[str]:
    return set(PLACEHOLDER.findall(value))


ENGLISH = read_strings(I18N_DIR / "en.js")[1]


def test_the_files_are_read_whole():
    assert len(LANG_FILES) >= 2
    assert len(ENGLISH) > 250
    assert {"app.name", "table.card1", "e.generic"} <= ENGLISH.keys()


def test_the_lookup_offers_every_language_file():
    lookup = (WEB_JS / "i18n.js").read_text(encoding="utf-8")
    imported = set(re.findall(r'^import \{ (\w+) \} from "\./i18n/(\w+)\.js";$', lookup, re.M))
    assert imported == {(p.stem, p.stem) for p in LANG_FILES}
    offered = re.search(r"^export const LANGS = \{ ([\w, ]+) \};$", lookup, re.M)
    named = re.search(r"^export const LANG_NAMES = \{ (.+) \};$", lookup, re.M)
    assert offered and named
    stems = {p.stem for p in LANG_FILES}
    assert set(offered.group(1).split(", ")) == stems
    assert set(re.findall(r"(\w+): \"", named.group(1))) == stems


@pytest.mark.parametrize("path", [p for p in LANG_FILES if p.stem != "en"], ids=lambda p: p.stem)
def test_a_language_has_the_keys_and_placeholders_of_english(path):
    name, strings = read_strings(path)
    assert name == path.stem
    missing = sorted(ENGLISH.keys() - strings.keys())
    extra = sorted(strings.keys() - ENGLISH.keys())
    assert not missing and not extra, f"{path.name}: missing {missing}, not in English {extra}"
    differ = {key: (sorted(placeholders(ENGLISH[key])), sorted(placeholders(value)))
              for key, value in strings.items() if placeholders(value) != placeholders(ENGLISH[key])}
    assert not differ, f"{path.name}: placeholders (English, {path.stem}) differ: {differ}"


HELP_DIR = WEB_JS / "help"
HELP_FILES = sorted(HELP_DIR.glob("text-*.js"))


@pytest.mark.parametrize("path", [p for p in HELP_FILES if p.stem != "text-en"], ids=lambda p: p.stem)
def test_the_card_help_of_a_language_has_the_keys_and_placeholders_of_english(path):
    english = read_strings(HELP_DIR / "text-en.js")[1]
    name, strings = read_strings(path)
    assert name == path.stem.removeprefix("text-")
    assert len(english) > 40 and len(HELP_FILES) >= 2
    missing = sorted(english.keys() - strings.keys())
    extra = sorted(strings.keys() - english.keys())
    assert not missing and not extra, f"{path.name}: missing {missing}, not in English {extra}"
    differ = {key: (sorted(placeholders(english[key])), sorted(placeholders(value)))
              for key, value in strings.items() if placeholders(value) != placeholders(english[key])}
    assert not differ, f"{path.name}: placeholders (English, {path.stem}) differ: {differ}"
