"""The ``Table``: its state, who sits where, and the one driver (core/driver.py)
running its phase table (``PHASES``, core/table/phases.py); the checkpoint
and the replay.  What it reads out (the views) and what each phase does
(seating, pairing, play, housekeeping, confirm) are functions of the table in
a module per job; this class holds the state they share and the names it
answers to."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, fields
from typing import Any, ClassVar

from companion.core.driver import all_or_nothing, drive, input_kind, not_taken
from companion.core.engine import Engine
from companion.core.events import Housekeeping, Input, Output, Press, Refusal, Tap
from companion.core.steps import Step
from companion.core.table import views
from companion.core.table.confirm import question
from companion.core.table.housekeeping import housekeeping_kind
from companion.core.table.phases import PHASES
from companion.core.table.state import _OLD_FIELDS, CONFIRM, PAGES_ASSUMED, FinishedPlay, TableState


class Table:
    """The table between games (the package's docstring)."""

    PHASES: ClassVar[Mapping[str, Step]] = PHASES
    not_now: ClassVar[str] = "refuse.not_now"

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
        # The table as it was before each input of the seating (and before next):
        # where ``back`` returns, while the game is as it started.
        self.snapshots: list[TableState] = []

    # ------------------------------------------------------------- inputs
    def handle(self, inp: Input) -> list[Output]:
        """Outputs for one input; raises ``Refusal`` and changes nothing (a
        handler's defect, ``StepError``, neither)."""
        self.finished = None
        with all_or_nothing(self, ("state", "snapshots"), kept=("engine",)):
            kind, value = self.kind_of(inp)
            return drive(self, self.PHASES, kind, value)

    @staticmethod
    def kind_of(inp: Input) -> tuple[str, Input]:
        """The kind ``PHASES`` names ``inp`` by, and the input itself: a
        housekeeping's own kind (``paired``, ``named``, ``configure``,
        ``new-evening``; any other is ``housekeeping``), ``submit``, ``draw``,
        ``timer``, a button (``next``, ``back``, ``repeat``, ``hold-back``; any
        other is ``button``), or a tap by its family (``lang``, ``game``,
        ``player``, ``rules``; any other is ``tap``)."""
        kind = input_kind(inp)
        if isinstance(inp, Housekeeping):
            kind = housekeeping_kind(inp)
        elif isinstance(inp, Press) and kind not in ("next", "back", "repeat", "hold-back"):
            kind = "button"
        elif isinstance(inp, Tap) and (kind := inp.identity.split("/", 1)[0]) not in ("lang", "game", "player", "rules"):
            kind = "tap"
        return kind, inp

    @property
    def where(self) -> str:
        """The phase ``PHASES`` dispatches on: a pending confirmation is one
        (the public ``phase`` stays ``playing`` under it)."""
        return CONFIRM if self.state.confirm is not None else self.state.phase

    def _go_to(self, phase: str) -> None:
        """Where the driver moves the phase, and nothing else does.  Into
        ``CONFIRM`` the question is put (``confirm.question``: a step to
        restart, or the game to abandon); out of it, it is dropped."""
        st = self.state
        if phase == CONFIRM:
            st.confirm = st.confirm or question(self)
        else:
            st.phase, st.confirm = phase, None

    def _not_taken(self, kind: str, inp: Input) -> Refusal:
        """The phase's refusal for what it does not take (its ``refusal``)."""
        return not_taken(self, self.PHASES[self.where], kind, inp)

    def prompt(self) -> list[Output]:
        """What the current phase waits for, said (its ``prompt``)."""
        step = self.PHASES[self.where]
        return step.prompt(self) if step.prompt is not None else []

    def resume(self) -> list[Output]:
        """After the journal is replayed: say where the table is (the phase's ``resume``)."""
        step = self.PHASES[self.where]
        return step.resume(self) if step.resume is not None else self.prompt()

    # ------------------------------------------------------ the journal
    def checkpoint(self) -> dict[str, Any]:
        """The whole state between games, for the journal."""
        assert self.engine is None, "checkpoints are taken between games"
        return asdict(self.state)

    def replay(self, checkpoint: Mapping[str, Any] | None,
               entries: Iterable[Any]) -> Iterator[tuple[Any, list[Output] | Refusal]]:
        """Rebuild from a checkpoint (None: an empty table) and the journal
        entries after it; yields each entry with its outputs, or the refusal
        (only possible if the rules changed under an old journal)."""
        if checkpoint is not None:
            self.restore(checkpoint)
        else:
            self.reset()
        for entry in entries:
            try:
                yield entry, self.handle(entry.input)
            except Refusal as refusal:
                yield entry, refusal

    def reset(self) -> None:
        """Back to an empty table (before replaying a journal from its start)."""
        self.restore(asdict(TableState(lang=self._lang)))

    def restore(self, data: Mapping[str, Any]) -> None:
        known = {f.name for f in fields(TableState)}  # a checkpoint from another release may differ
        data = {_OLD_FIELDS.get(k, k): v for k, v in data.items()}
        self.state = TableState(**{k: v for k, v in data.items() if k in known})
        last = self.state.last
        if last is not None and "seats" not in last:  # before seats had ids, names were the ids
            last["seats"] = list(last.pop("players", []))
        self.engine = None
        self.snapshots.clear()

    # --------------------------------------------------- seats and names
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

    def engine_name(self, player_id: str) -> str | None:
        """The name the engine knows a seated ``player_id`` by, if it is that seat's alone."""
        name = self.name_of(player_id)
        return name if player_id in self.state.seats and self.id_of(name) == player_id else None

    def player_name(self, identity: str) -> str:
        """``player/<id>`` → that player's name."""
        return self.name_of(identity.split("/", 1)[1])

    def unpaired(self) -> list[str]:
        """The seated players (names) whose phone is not paired yet."""
        return [self.name_of(i) for i in self.state.seats if i not in self.state.paired]

    @property
    def lang(self) -> str:
        return self.state.lang

    @property
    def settings(self) -> dict[str, Any]:
        return self.state.settings if self.state.settings is not None else self.wanted

    @property
    def pages(self) -> str:
        return str(self.settings.get("pages", PAGES_ASSUMED))  # a journal from before pages were a setting

    # ------------------------------------------------------------ read side
    # (core/table/views.py: functions of the table, the methods the shells call)
    public_view = views.public_view
    headline = views.headline
    legal = views.legal
    board = views.board
    page = views.page
    private_view = views.private_view
    public_label = views.public_label
    may_press = views.may_press
    tonight = views.tonight
    evening_ranking = views.evening_ranking
