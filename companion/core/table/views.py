"""The table's read side: everything anyone may see now (the public view and
its headline, by night the night screen), a seated player's own page, and
what is legal, derived from the phase table as the games' from theirs.
Functions of the table (``Table`` names them as its methods); each phase's
part of the headline and of what is legal is declared beside it (phases.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from companion.core.contract import Legal
from companion.core.driver import offers
from companion.core.events import Input, Press, Tap
from companion.core.table.play import unstarts
from companion.core.table.shape import TableShape
from companion.core.table.state import NIGHT_HEADLINE, Phase


def public_view(t: TableShape, due: Mapping[str, float] | None = None) -> dict[str, Any]:
    """Everything anyone may see now, JSON-ready (the public page).
    ``due``: the wall-clock time each armed timer fires (the runtime's; the
    table keeps no clock), for the headline's deadline."""
    st = t.state
    if t.eyes_closed:
        return _night_view(t)
    view: dict[str, Any] = {
        "phase": st.phase, "lang": st.lang, "game": st.game, "rules": list(st.rules),
        "seats": _seats_view(t),
        "evening": st.evening,
        "tonight": tonight(t),
        "confirm": st.confirm,
    }
    if t.engine is not None:
        view["play"] = t.engine.public_view()
    if t.result is not None and st.game is None:  # between games: not beside the next one's gathering
        view["result"] = t.result
    view["headline"] = headline(t, due)
    return view


def _order(t: TableShape) -> list[str]:
    """Tonight's seats (ids) in the order they first finished a game: the same before
    and after a restart (a checkpoint older than the order: its ids sorted, after)."""
    known = t.state.standing_order
    rest = sorted({i for totals in t.state.standings.values() for i in totals} - set(known))
    return [*known, *rest]


def tonight(t: TableShape) -> dict[str, dict[str, int]]:
    """Each game's totals tonight (name → total), game by game as first played, the seats in ``_order``."""
    order = _order(t)
    return {game: {t.name_of(i): totals[i] for i in order if i in totals}
            for game, totals in t.state.standings.items()}


def evening_ranking(t: TableShape) -> list[tuple[str, int]]:
    """The evening's totals (every game's summed), highest first; a tie in ``_order``."""
    summed = {i: sum(totals.get(i, 0) for totals in t.state.standings.values()) for i in _order(t)}
    return sorted(((t.name_of(i), n) for i, n in summed.items()), key=lambda kv: -kv[1])


def _seats_view(t: TableShape) -> list[dict[str, Any]]:
    """The seats as every page shows them: id, engine name, whether paired,
    and ``called``, the display name its player chose (public: chosen to be shown)."""
    st = t.state
    return [{"id": i, "name": t.name_of(i), "paired": i in st.paired,
             **({"called": st.called[i]} if i in st.called else {})} for i in st.seats]


def _night_view(t: TableShape) -> dict[str, Any]:
    """By night (One Night's, eyes closed) the same for any deal and any
    tap: the seats, the language, the evening's totals before the night,
    and the night's headline — the step's name and nothing else."""
    st = t.state
    step = t.engine.state.step if t.engine is not None else None
    return {"phase": st.phase, "lang": st.lang, "game": st.game, "rules": list(st.rules),
            "seats": _seats_view(t),
            "evening": st.evening,
            "tonight": tonight(t),
            "confirm": None, "play": {"step": step, "whose_turn": []}, "headline": {**NIGHT_HEADLINE, "step": step}}


def headline(t: TableShape, due: Mapping[str, float] | None = None) -> dict[str, Any]:
    """What the table waits for now (the pages' headline, docs/reference/pages.md): the
    step, whom (seat ids) or anyone, a count, the countdown's wall-clock
    deadline; by night the night screen's, the same for any deal.  The
    phase's own part is its ``headline`` (a ``timer``: (name, seconds left
    when it fires), or a list of them of which the first armed counts, becomes
    the deadline)."""
    engine = t.engine
    if t.eyes_closed:
        return {**NIGHT_HEADLINE, "step": engine.state.step if engine is not None else None}
    head: dict[str, Any] = {"step": t.state.phase, "waiting_for": [], "anyone": True, "count": None,
                            "deadline": None, "night": False}
    phase = t.PHASES[t.where]
    head.update(phase.headline(t) if phase.headline is not None else {})
    timer = head.pop("timer", None)
    timers = [] if timer is None else [timer] if isinstance(timer[0], str) else list(timer)
    armed = [float(due[name]) + float(left) for name, left in timers if due is not None and name in due]
    if armed:  # a list: the first of them armed (a turn's warning, then its end)
        head["deadline"] = armed[0]
    return head


def playing_headline(t: TableShape) -> dict[str, Any]:
    """While a game plays: the game's headline, its players as seat ids."""
    assert t.engine is not None
    game = t.engine.headline()
    seats = [i for name in game.get("waiting_for", []) if (i := t.id_of(name)) is not None]
    return {"step": t.engine.state.step, "waiting_for": seats, "anyone": bool(game.get("anyone")),
            "count": game.get("count"), "timer": game.get("timer")}


def pairing_headline(t: TableShape) -> dict[str, Any]:
    """The pairing gate waits for the seats whose phone is not paired yet, counted."""
    st = t.state
    unpaired = [i for i in st.seats if i not in st.paired]
    return {"waiting_for": unpaired,
            "count": {"done": len(st.seats) - len(unpaired), "of": len(st.seats), "what": "paired"}}


def confirm_headline(t: TableShape) -> dict[str, Any]:
    """A long press of back waits for next or back: anyone's (the view's ``confirm``), in the game's step."""
    return {"step": t.engine.state.step if t.engine is not None else t.state.phase}


def may_press(t: TableShape, player_id: str) -> bool:
    """May a seat's page press next or back now?  Where the table waits for
    that seat or for anyone; never by night (the panel's buttons are the table's)."""
    head = headline(t)
    return not head["night"] and (head["anyone"] or player_id in head["waiting_for"])


def public_label(t: TableShape, inp: Input) -> str:
    """How an accepted ``inp`` is named in public (the engine may hide a secret)."""
    return t.engine.public_label(inp) if t.engine is not None else inp.label


def private_view(t: TableShape, player_id: str) -> dict[str, Any]:
    """What the player seated as ``player_id`` alone may see now."""
    name = t.engine_name(player_id)
    if t.engine is None or name is None:
        return {}
    return t.engine.private_view(name)


def page(t: TableShape, player_id: str) -> list[tuple[str, dict[str, Any]]]:
    """The player's page as lines (keys and params), ``private_view`` labelled."""
    name = t.engine_name(player_id)
    if t.engine is None or name is None:
        return []
    return t.engine.page(name)


def board(t: TableShape) -> list[tuple[str, dict[str, Any]]]:
    """The game's public lines (keys and params), ``public_view`` labelled;
    before the start, the cards tapped so far (a deck being built)."""
    if t.engine is not None:
        return t.engine.board()
    st, game = t.state, t.state.game or ""
    if st.cards and game in t.games:
        options = dict(t.settings["options"]).get(game, {})
        return t.games[game].setup_board(st.rules, options, st.cards)
    return []


def legal(t: TableShape, player_id: str | None = None) -> Legal:
    """What the table (``None``) or one seated player may do now: the phase's
    own ``legal`` where it declares one (while a game plays, the game's), else
    ``phase_legal``."""
    phase = t.PHASES[t.where]
    if isinstance(phase, Phase) and phase.legal is not None:
        return phase.legal(t, player_id)
    return phase_legal(t, player_id)


def phase_legal(t: TableShape, player_id: str | None = None, *, repeat: bool = True) -> Legal:
    """Derived from ``PHASES`` (the one ``offers``, as a game's from its
    ``STEPS``): the buttons the phase takes whose guard lets them pass
    (``repeat``, the loop's, too), and the tap families it takes
    (``player/*``: the table's cards are open families, a config may add
    players; a game's components, each that its guard lets pass).  A seat
    has nothing of its own between games."""
    if player_id is not None:
        return Legal()
    takes, game = t.PHASES[t.where].takes, t.state.game or ""
    buttons = tuple(b for b in ("next", "back") if b in takes and offers(t, takes[b], Press(b)))
    buttons += ("repeat",) if repeat else ()
    families = {"player": ("player/*",), "rules": ("rules/*",), "game": tuple(f"game/{g}" for g in t.games),
                "lang": ("lang/*",)}
    if "tap" in takes and game in t.games:  # a deck's cards
        families["tap"] = tuple(c for c in t.games[game].components if offers(t, takes["tap"], Tap(c)))
    return Legal(buttons=buttons, taps=tuple(tap for kind, ids in families.items() if kind in takes for tap in ids))


def answer_legal(t: TableShape, player_id: str | None = None) -> Legal:
    """A question waiting for its answer (next or back): no ``repeat``."""
    return phase_legal(t, player_id, repeat=False)


def playing_legal(t: TableShape, player_id: str | None = None) -> Legal:
    """While a game plays: the game's ``legal``, and what the table takes
    around it (``back`` before its first input, a language card by day)."""
    engine = t.engine
    assert engine is not None
    if player_id is None:
        legal = engine.legal(None)
        back = ("back",) if "back" not in legal.buttons and unstarts(t) else ()
        lang = () if t.eyes_closed else ("lang/*",)
        return replace(legal, buttons=legal.buttons + back, taps=legal.taps + lang)
    name = t.engine_name(player_id)
    return engine.legal(name) if name is not None else Legal()
