"""While a game plays: every input goes to its engine after the checks every
game shares; back before its first input unstarts it; its end makes the
play's record, the standings and the result view.  Functions of the table
(phases.py names them)."""

from __future__ import annotations

from companion.core.engine import Engine
from companion.core.events import Input, Output, Press, Refusal, Report, Say, Submit, Tap
from companion.core.steps import Goto
from companion.core.table.result import result_view
from companion.core.table.seating import back_to_snapshot
from companion.core.table.shape import TableShape
from companion.core.table.state import IDLE, FinishedPlay


def to_engine(t: TableShape, inp: Input) -> list[Output] | Goto:
    """Everything goes to the engine, after the checks every game shares."""
    engine = t.engine
    if engine is None:
        if isinstance(inp, Submit):
            raise Refusal("refuse.no_game", "no game is being played", player=inp.player)
        raise Refusal("refuse.not_now", f"{inp.label} is not expected now")
    if isinstance(inp, Submit):
        if (name := t.engine_name(inp.player)) is None:
            raise Refusal("refuse.not_seated", f"{inp.player} is not playing this game")
        inp = Submit(name, inp.field, inp.value)
    if isinstance(inp, Tap):
        kind = inp.identity.split("/", 1)[0]
        if kind == "player":
            seat, player = inp.identity.split("/", 1)[1], t.player_name(inp.identity)
            if t.seats_named(player) not in ([], [seat]):  # the engine would take it for another seat
                raise Refusal("refuse.not_now", f"two seats answer to {player}: give each a name of its own")
            inp = Tap(f"player/{player}")
        elif kind == "rules":
            raise Refusal("refuse.rules_in_game", "rule cards go before the game starts")
        elif not inp.identity.startswith(engine.tag_prefixes):
            owner = next((g for g, c in t.games.items() if inp.identity.startswith(c.tag_prefixes)), None)
            raise Refusal("refuse.other_game", f"{inp.identity} belongs to another game",
                          tile=inp.identity, game=f"game/{owner}" if owner else "")
    if isinstance(inp, Press) and inp.button == "back" and unstarts(t):
        return unstart(t)
    outputs = engine.handle(inp)
    if engine.finished:
        return Goto(IDLE, outputs + finish(t, engine, outputs))
    return outputs


def playing_refusal(t: TableShape, kind: str, _: Input) -> Refusal:
    """A game plays: everything is the game's but another game's card."""
    return Refusal("refuse.game_in_progress", "a game is in progress; hold back to abandon it",
                   game=f"game/{t.state.game}")  # named as the table says it, never by its id


def playing_resume(t: TableShape) -> list[Output]:
    assert t.engine is not None
    return [Say("table.resumed_game", {"game": f"game/{t.state.game}"}), *t.engine.resume()]


def unstarts(t: TableShape) -> bool:
    """Would ``back`` leave the game for the seating (it has taken no input yet)?"""
    engine = t.engine
    return engine is not None and engine.at_start and not engine.eyes_closed and bool(t.snapshots)


def unstart(t: TableShape, _: Input | None = None) -> list[Output]:
    """``back`` before the game has taken any input: the table returns to
    where it was before ``next`` (e.g. a player had not tapped yet) — the
    seating of its game, or between games where it was played again."""
    game = t.state.game
    back_to_snapshot(t)
    t.engine = None
    t.snapshots.clear()
    out: list[Output] = [Report("game_unstarted", {"game": game})]
    if t.state.game is not None:  # back at its seating
        return [*out, Say("table.unstarted", {"game": f"game/{game}", "players": t.players})]
    return [*out, Say("table.again")]


def finish(t: TableShape, engine: Engine, said: list[Output]) -> list[Output]:
    st = t.state
    result = engine.result()
    game = st.game or ""
    names = t.players
    shown = {name: st.record_names.get(seat, name) for seat, name in zip(st.seats, names, strict=True)}
    t.finished = FinishedPlay(game, tuple(st.rules), tuple(names), tuple(st.seats), dict(result.totals),
                              tuple(result.winners), dict(result.roles), dict(result.teams),
                              dict(result.places), {n: s for n, s in shown.items() if s != n})
    st.result = result_view(game, engine, t.finished, said)
    standing = st.standings.setdefault(game, {})
    for seat, name in zip(st.seats, names, strict=True):
        standing[seat] = standing.get(seat, 0) + result.totals.get(name, 0)
        if seat not in st.standing_order:
            st.standing_order.append(seat)
    tonight = t.tonight()[game]
    to_idle(t)
    # said: the evening's totals (every game tonight), as the pages' "Tonight" shows them
    return [Report("session_scores", {"game": game, "totals": tonight}),  # the contract's name for it
            Say("table.standings", {"scores": t.evening_ranking()}), Say("table.again")]


def to_idle(t: TableShape) -> None:
    st = t.state
    t.engine = None
    t.snapshots.clear()  # the start of the game is out of reach
    st.game, st.rules, st.seats, st.cards = None, [], [], []  # the driver moves the phase (``Goto(IDLE)``)
    st.record_names = {}
    st.apply_pending()
