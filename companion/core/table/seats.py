"""Seats and names: the table's state, and the translation at its edges
between a seat's stable id and the name the engines know its player by."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from companion.core.engine import Engine, Step
from companion.core.table.state import (
    CONFIRM,
    PAGES_ASSUMED,
    FinishedPlay,
    TableState,
)


class TableSeats:
    """The table's state and who sits where: seat ids, the names they answer to."""

    PHASES: ClassVar[dict[str, Step]]  # the hub's phase table (core/table/hub.py)

    def __init__(self, games: Mapping[str, type[Engine]], *, lang: str = "en",
                 options: Mapping[str, Any] | None = None,
                 names: Mapping[str, str] | None = None, pages: str = PAGES_ASSUMED) -> None:
        self.games = games
        # What the config asks for now; what is in force comes from the journal.
        # As JSON gives it back (int keys become strings), so a replay compares equal.
        # ``pages`` is a setting too: a game started with the pages on replays so.
        self.wanted = json.loads(json.dumps({"options": dict(options or {}), "names": dict(names or {}),
                                             "pages": pages}))
        self._lang = lang
        self.state = TableState(lang=lang)
        self.engine: Engine | None = None
        self.finished: FinishedPlay | None = None  # set by the input that ended a game
        self._undo: list[TableState] = []

    # ------------------------------------------------------------ queries
    @property
    def eyes_closed(self) -> bool:
        return self.engine is not None and self.engine.eyes_closed

    @property
    def result(self) -> dict[str, Any] | None:
        """The finished game's result until the next game starts (``TableState.result``)."""
        return self.state.result

    @property
    def players(self) -> list[str]:
        """The seated players' names, seat order."""
        return [self.name_of(i) for i in self.state.seats]

    def name_of(self, player_id: str) -> str:
        return str(dict(self.settings["names"]).get(player_id, player_id))

    def seats_named(self, name: str) -> list[str]:
        """The seated players' ids answering to ``name`` (one, or none; more only
        if the settings were forced past the config's check)."""
        return [i for i in self.state.seats if self.name_of(i) == name]

    def id_of(self, name: str) -> str | None:
        """The seat id of the one seated player known by ``name``; None if no
        seat, or more than one, answers to it: never a guess."""
        seats = self.seats_named(name)
        return seats[0] if len(seats) == 1 else None

    def audience_id(self, audience: str) -> str | None:
        """``player:<name>`` (an engine's audience) → that seat's id."""
        return self.id_of(audience.removeprefix("player:")) if audience.startswith("player:") else None

    def _engine_name(self, player_id: str) -> str | None:
        """The name the engine knows a seated ``player_id`` by, if it is that seat's alone."""
        name = self.name_of(player_id)
        return name if player_id in self.state.seats and self.id_of(name) == player_id else None

    @property
    def lang(self) -> str:
        return self.state.lang

    @property
    def settings(self) -> dict[str, Any]:
        return self.state.settings if self.state.settings is not None else self.wanted

    @property
    def pages(self) -> str:
        return str(self.settings.get("pages", PAGES_ASSUMED))  # a journal from before pages were a setting

    def unpaired(self) -> list[str]:
        """The seated players (names) whose phone is not paired yet."""
        return [self.name_of(i) for i in self.state.seats if i not in self.state.paired]

    def player_name(self, identity: str) -> str:
        """``player/<id>`` → that player's name."""
        return self.name_of(identity.split("/", 1)[1])

    @property
    def _phase(self) -> str:
        """The phase ``PHASES`` dispatches on: a pending confirmation is one."""
        return CONFIRM if self.state.confirm is not None else self.state.phase


    def _unstarts(self) -> bool:
        """Would ``back`` leave the game for the seating (it has taken no input yet)?"""
        engine = self.engine
        return engine is not None and engine.at_start and not engine.eyes_closed and bool(self._undo)
