"""The game log the pages show (web.game_log): the lines the table said to
everyone in the game being played, newest first, in the table's language —
never a line told to one seat, and a new game starts an empty one.

Whole example games are played on simulated hardware with the pages served
(the accessibility audit's table, no browser): at every step the public state's
``log`` is read over HTTP, as a page reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from test_web_accessibility import GAMES, Table


def public_log(table: Table) -> list[dict[str, Any]]:
    # over HTTP: answered on the pages' loop after every line it was handed before
    return list(httpx.get(table.url + "/api/table").json()["log"])


def said_since_the_game_began(table: Table) -> list[str]:
    says = [e for e in table.log if e["event"] == "say" and not e.get("aside")]
    start = max((i for i, e in enumerate(says) if e["key"] == "table.game_chosen"), default=0)
    return [e["text"] for e in says[start:]]


def test_finding_the_log_holds_this_game_s_public_lines_and_never_a_seat_s(tmp_path: Path) -> None:
    """The pages had one "Last said" line; the log that replaces it is built from
    the table's feed, where a seat's lines (its role, the sage's boxes, a bid
    taken) must never reach it."""
    table = Table({}, tmp_path / "dt", GAMES["demagogos"], "en")
    try:
        told: set[str] = set()
        checked = 0
        for kind, value in table.steps:
            table.step(kind, value)
            told |= {e["text"] for e in table.log if e["event"] == "tell"}
            log = public_log(table)
            texts = [line["text"] for line in log]
            leaked = told.intersection(texts) - {e["text"] for e in table.log if e["event"] == "say"}
            assert not leaked, leaked
            assert texts == said_since_the_game_began(table)[::-1][:len(texts)]  # newest first, all of them
            checked += 1
        assert told and any("boxes" in text for text in told)  # the sage was told a secret: the test saw one
        assert checked > 20
    finally:
        table.close()


def test_a_new_game_starts_an_empty_log_and_a_language_change_reads_it_again(tmp_path: Path) -> None:
    table = Table({}, tmp_path / "on", GAMES["one-night"], "en")
    try:
        for kind, value in table.steps:
            table.step(kind, value)
        finished = public_log(table)
        assert len(finished) > 5  # the whole game's lines stay beside its result, between games
        table.sim.step("tap", "game/seven-knights")
        log = public_log(table)
        assert [line["text"] for line in log] == said_since_the_game_began(table)[::-1]
        assert not any(line["key"].startswith("onw.") for line in log)  # nothing of the game before
        table.sim.step("tap", "lang/ja")
        log = public_log(table)
        assert log and all(not any(c.isascii() and c.isalpha() for c in line["text"]) for line in log), log
    finally:
        table.close()
