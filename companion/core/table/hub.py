"""The table's phase table (``PHASES``) and the driver that dispatches on it;
the checkpoint and the replay."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, fields
from typing import Any, ClassVar

from companion.core.engine import Goto, Step, StepError, Take
from companion.core.events import (
    Drawn,
    Housekeeping,
    Input,
    Output,
    Press,
    Refusal,
    Say,
    Submit,
    Tap,
    TimerFired,
)
from companion.core.table.confirm import TableConfirm
from companion.core.table.state import (
    _OLD_FIELDS,
    CONFIRM,
    GATHERING,
    IDLE,
    PAIRING,
    PLAYING,
    TableState,
)

_h = TableConfirm  # the handlers of the phase table, as the layers below define them


class Table(TableConfirm):
    """The table between games (the package's docstring); its phase table and driver."""

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
        self._undo.clear()


    # ------------------------------------------------------------- inputs
    def handle(self, inp: Input) -> list[Output]:
        """Outputs for one input; raises ``Refusal`` and changes nothing."""
        self.finished = None
        before = (copy.deepcopy(self.state), self.engine, list(self._undo))
        try:
            outputs = self._dispatch(inp)
        except (Refusal, StepError):  # a defect of the table leaves no trace either
            self.state, self.engine, self._undo = before
            raise
        return outputs

    @staticmethod
    def kind_of(inp: Input) -> str:
        """The kind ``PHASES`` names ``inp`` by: ``housekeeping``, ``submit``,
        ``draw``, ``timer``, a button (``next``, ``back``, ``repeat``,
        ``hold-back``; any other is ``button``), or a tap by its family
        (``lang``, ``game``, ``player``, ``rules``; any other is ``tap``)."""
        if isinstance(inp, Housekeeping):
            return "housekeeping"
        if isinstance(inp, Submit):
            return "submit"
        if isinstance(inp, Drawn):
            return "draw"
        if isinstance(inp, TimerFired):
            return "timer"
        if isinstance(inp, Press):
            return inp.button if inp.button in ("next", "back", "repeat", "hold-back") else "button"
        family = inp.identity.split("/", 1)[0]
        return family if family in ("lang", "game", "player", "rules") else "tap"

    def _dispatch(self, inp: Input) -> list[Output]:
        """The current phase's entry for the input's kind: its guard, then its
        handler, which may only move to a phase it declared (as the engines'
        ``STEPS``, core/engine.py), in every build: by returning a ``Goto``
        (the driver sets the phase), by going back to a snapshot taken before
        (``back``: the phase comes with it), or, into and out of ``CONFIRM``,
        by the question the state's ``confirm`` marks.  A handler that sets
        the phase by hand, or leads where its entry does not say, raises
        ``StepError`` and, like a refusal, leaves no trace."""
        kind, phase = self.kind_of(inp), self._phase
        take = self.PHASES[phase].takes.get(kind)
        if take is None:
            raise self._not_taken(phase, inp)
        if take.guard is not None and (refusal := take.guard(self, inp)) is not None:
            raise refusal
        state, was = self.state, self.state.phase
        done = take.handler(self, inp)
        if self.state is state and state.phase != was:
            raise StepError(f"Table: the {kind} handler of {phase} set the phase to {state.phase} by hand; "
                            f"return a Goto among its entry's (to={take.to})")
        if isinstance(done, Goto):
            if done.step is None:
                raise StepError(f"Table: the {kind} handler of {phase} returned a Goto naming no phase")
            self.state.phase = done.step  # the one place a phase is set
        if self._phase != phase and self._phase not in take.to:
            raise StepError(f"Table: {phase} --{kind}--> {self._phase}, which its entry does not declare")
        return list(done.outputs) if isinstance(done, Goto) else done

    def _not_taken(self, phase: str, inp: Input) -> Refusal:
        """The phase's refusal for what it does not take."""
        st = self.state
        if phase == CONFIRM:
            return Refusal("refuse.confirm_pending", "press next to confirm or back to cancel")
        if phase == GATHERING:
            if isinstance(inp, Press):
                return Refusal("refuse.not_now", "that button does nothing now")
            if isinstance(inp, Tap):
                return Refusal("refuse.not_before_start", "seat the players first, then press next",
                               game=f"game/{st.game}")
            return Refusal("refuse.not_now", "not now")
        if phase == PAIRING:
            if isinstance(inp, Tap) and inp.identity.startswith("player/"):
                # no phone was waiting for this card: the page asks first
                return Refusal("pairing.refuse.page_first", "pick your seat on your phone's page first, then tap",
                               player=self.player_name(inp.identity))
            return Refusal("pairing.refuse.missing", "every phone must be paired first", players=self.unpaired())
        if isinstance(inp, Press) and inp.button == "back":
            return Refusal("refuse.nothing_to_undo", "nothing to undo")
        return Refusal("refuse.tap_game_card", "tap a game card to begin")

    # ------------------------------------------------------------ the phases
    # phase -> {input kind (``kind_of``) -> Take(handler, the phases it may
    # lead to, its guard)}; what a phase does not take gets ``_not_taken``.
    # In every phase the daemon's housekeeping, a page's submit, a draw and
    # the long press of back; while a game plays, everything else but a
    # language card or a game card is the game's (the confirmation waits,
    # and the game's clock keeps running while it does).
    _ANY = {"housekeeping": Take(_h._housekeeping, (IDLE, GATHERING, PLAYING)),
            "submit": Take(_h._to_engine, (IDLE,)), "draw": Take(_h._to_engine, (IDLE,)),
            "hold-back": Take(_h._ask_confirm, (CONFIRM,))}
    _GAME = Take(_h._to_engine, (IDLE, GATHERING))  # the game may end, or back before its first input unstarts it
    PHASES: ClassVar[dict[str, Step]] = {
        IDLE: Step({**_ANY, "lang": Take(_h._language), "game": Take(_h._game_card, (GATHERING,), _h._game_card_refusal),
                    "next": Take(_h._again, (PLAYING, PAIRING), _h._no_last_game)}),
        GATHERING: Step({**_ANY, "lang": Take(_h._language), "game": Take(_h._game_card, (), _h._game_card_refusal),
                         "back": Take(_h._ungather, (IDLE,), _h._nothing_to_undo), "next": Take(_h._seated, (PLAYING, PAIRING), _h._start_refusal),
                         "rules": Take(_h._rules_card, (), _h._rules_refusal), "player": Take(_h._seat, (), _h._seat_refusal),
                         "tap": Take(_h._setup_card, (), _h._setup_card_refusal)}),
        PAIRING: Step({**_ANY, "lang": Take(_h._language), "game": Take(_h._game_card, (GATHERING,), _h._game_card_refusal),
                       "back": Take(_h._unstart, (IDLE, GATHERING))}),
        PLAYING: Step({**_ANY, "lang": Take(_h._language, (), _h._quiet), "game": Take(_h._game_card, (), _h._game_card_refusal),
                       **dict.fromkeys(("next", "back", "repeat", "button", "timer", "player", "rules", "tap"), _GAME)}),
        CONFIRM: Step({**_ANY, "next": Take(_h._confirmed, (PLAYING, IDLE)), "back": Take(_h._cancelled, (PLAYING,)),
                       "timer": Take(_h._to_engine, (IDLE,))}),
    }

    # ------------------------------------------------------------- resume
    def resume(self) -> list[Output]:
        """After the journal is replayed: say where the table is."""
        st = self.state
        if st.phase == PLAYING and self.engine is not None:
            where = [Say("table.resumed_game", {"game": f"game/{st.game}"}), *self.engine.resume()]
            if st.confirm is not None:  # a long press of back was waiting for its answer
                where.append(Say(f"table.confirm_{st.confirm}"))
            return where
        if st.phase == GATHERING:
            return [Say("table.resumed_gathering", {"game": f"game/{st.game}", "players": self.players})]
        if st.phase == PAIRING:
            return self._pairing_prompt()
        return [Say("table.ready")]
