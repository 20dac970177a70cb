"""A One Night role is one entry: a role written here into a module of its own — its team,
its set and wake place in an edition, its lines in English and Japanese (its name, its tag's
label, its night lines) — joins with one line (``add_role``) and is played through
``companion simulate`` with no file of the project changed."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import companion.games
import companion.games.one_night as one_night
from companion.app import catalogue
from companion.app.simulate import run_script
from companion.core.manifest import Manifest
from companion.games.one_night import OneNight
from companion.games.one_night.roles import ROLES

ROLE = '''
"""The apprentice seer: wakes after the seer and may look at one centre card."""
from pathlib import Path

from companion.games.one_night import Role, add_role

add_role(Role("apprentice", "village", {"ultimate": 1}, {"ultimate": 5.5}, doppel="now",
              lines=str(Path(__file__).parent / "apprentice_lines")))
'''

LINES = {
    "en": '''
        name.apprentice: apprentice seer
        tag.onw/apprentice/1: "Apprentice seer"
        onw.ultimate.apprentice.wake: "Apprentice seer, wake up. You may look at one card in the centre."
        onw.ultimate.apprentice.sleep: "Apprentice seer, close your eyes."
    ''',
    "ja": '''
        name.apprentice: {text: 見習い占い師, kana: みならいうらないし}
        tag.onw/apprentice/1: {text: 見習い占い師, kana: みならいうらないし}
        onw.ultimate.apprentice.wake: {text: "見習い占い師は目を覚まして、中央のカードを一枚見てもかまいません。", kana: "みならいうらないしはめをさまして、ちゅうおうのかーどをいちまいみてもかまいません。"}
        onw.ultimate.apprentice.sleep: {text: "見習い占い師は眠ってください。", kana: "みならいうらないしはねむってください。"}
    ''',
}

DECK = ["onw/werewolf/1", "onw/werewolf/2", "onw/seer/1", "onw/apprentice/1", "onw/robber/1", "onw/villager/1",
        "onw/villager/2", "onw/troublemaker/1"]


@pytest.fixture
def apprentice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    folder = tmp_path / "roles"
    (folder / "apprentice_lines").mkdir(parents=True)
    (folder / "apprentice_role.py").write_text(ROLE)
    for lang, text in LINES.items():
        (folder / "apprentice_lines" / f"{lang}.yaml").write_text(textwrap.dedent(text), encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    before = dict(ROLES)
    import apprentice_role  # type: ignore[import-not-found]  # noqa: F401  — the one line: it registers itself

    yield
    ROLES.clear()
    ROLES.update(before)  # all there is to undo: the game reads its roles from here
    sys.modules.pop("apprentice_role", None)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_role_from_a_module_of_its_own_plays_through_simulate(apprentice: None, tmp_path: Path,
                                                                lang: str) -> None:
    steps = [{"tap": "game/one-night"}, {"tap": "rules/ultimate"}, *({"tap": c} for c in DECK),
             *({"tap": f"player/{p}"} for p in ("red", "blue", "green", "yellow", "purple")),
             {"press": "next"}, {"press": "next"}, {"wait": 200}, {"wait": 200},
             *({"tap": t} for t in ("player/red", "onw/apprentice/1", "player/blue", "onw/werewolf/1",
                                    "player/green", "onw/seer/1", "player/yellow", "onw/robber/1",
                                    "player/purple", "onw/villager/1", "player/blue")),
             {"press": "next"}]
    script = tmp_path / "s.yaml"
    script.write_text(json.dumps({"seed": 1, "config": {"language": lang}, "steps": steps}))
    out = io.StringIO()
    assert run_script(script, out=out) == 0
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert not [e for e in events if e["event"] == "rejected"]
    said = [e for e in events if e["event"] == "say"]
    assert all(e["text"].lower() != e["key"].lower() for e in said)  # every line found
    keys = [e["key"] for e in said]
    night = keys[keys.index("onw.night.start"):keys.index("onw.night.morning")]
    # its place in the published order: after the seer (5), before the robber (6)
    assert night.index("onw.ultimate.seer.sleep") < night.index("onw.ultimate.apprentice.wake") \
        < night.index("onw.ultimate.thief.wake")
    wake = next(e["text"] for e in said if e["key"] == "onw.ultimate.apprentice.wake")
    assert wake == {"en": "Apprentice seer, wake up. You may look at one card in the centre.",
                    "ja": "見習い占い師は目を覚まして、中央のカードを一枚見てもかまいません。"}[lang]
    reveal = next(e["text"] for e in said if e["key"] == "onw.reveal.role")
    assert reveal == {"en": "Red is the apprentice seer.", "ja": "赤さんは見習い占い師です。"}[lang]
    (result,) = [e for e in events if e["event"] == "onw_result"]
    assert result["final_roles"]["red"] == "apprentice" and result["deck"]["apprentice"] == 1
    assert result["winning_teams"] == ["village"] and "red" in result["winners"]


@pytest.fixture
def read_first() -> tuple[Manifest, dict[str, Any]]:
    """One Night read before a role joins: its manifest, and its class as it is."""
    return companion.games.manifest(OneNight), dict(vars(OneNight))


def test_finding_a_role_added_is_in_the_games_manifest_and_no_class_is_set(
        read_first: tuple[Manifest, dict[str, Any]], apprentice: None) -> None:
    """``add_role`` set ``OneNight.components`` and ``.settings`` after the
    class was made, and the game's manifest, taken before, kept the cards it
    was taken with: the role's tag was a card of the engine and of no manifest.
    Now the registry is the one place a role joins; the game reads it when asked."""
    taken, before = read_first
    assert "onw/apprentice/1" in taken.components  # the manifest taken before the role joined
    assert taken.components == companion.games.manifest(OneNight).components == OneNight.components
    assert dict(vars(OneNight)) == before  # nothing of the class was set
    assert OneNight.settings["deck"].check({5: {"apprentice": 1, "werewolf": 2, "villager": 4, "seer": 1}}) is None


def test_the_roles_tag_is_a_card_of_the_game_with_its_label(apprentice: None) -> None:
    assert "onw/apprentice/1" in OneNight.components
    lines = catalogue.narrator().lines
    assert catalogue.tag_label(lines, "onw/apprentice/1", "ja") == "見習い占い師"
    assert one_night.add_role.__module__ == "companion.games.one_night"
