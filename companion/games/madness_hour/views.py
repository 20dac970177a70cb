"""Madness Hour: what the table and each player see at each step — the read side.

``view``, what the table or a seat may see (the engine's one read function:
the pages and the headline come from it), and what each step is to the
table — its prompt, its lines after a restart, whom it waits for, its
headline — which the step table in ``engine`` declares beside what each step
takes.  All of it reads the state (``state.Game``): the state changes only in
``steps``, which also re-arm the timers after a restart.  The Girl's card
stays out of the table's view until the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.core.contract import View
from companion.core.countdown import next_point
from companion.core.events import Output, Say
from companion.games.madness_hour.state import Game, ending_missing


def view(g: Game, seat: str | None = None) -> View:
    """What the table (``None``) or ``seat`` may see now."""
    return table_view(g) if seat is None else seat_view(g, seat)


def table_view(g: Game) -> View:
    """Everything tapped in the open; the Girl's card only once the game is over; the
    round once the Girl's first turn began it (a climax before any turn: no round)."""
    s = g.state
    facts: dict[str, Any] = {"step": s.step, "girl": s.girl, "card_held": s.held,
                             **({"round": s.round} if s.round else {}),  # none before the Girl's first turn
                             "turn": s.turn_of, "votes": dict(s.votes), "dead": list(s.dead),
                             "battle": dict(s.totals), "revealed": list(s.revealed), "girl_alive": s.girl_alive,
                             "states": dict(s.states)}
    if g.finished:
        facts.update(girl_card=s.card, winners=list(s.winners))
    facts["whose_turn"] = g.waiting()  # the steps' ``waits``: from what everyone saw
    return View(facts)


def seat_view(g: Game, player: str) -> View:
    """The Girl's card the companion holds for her, or the player's own
    battle numbers; as the page's lines (``mh.page.*``), with the battle's
    form when it is open to them."""
    s = g.state
    if player == s.girl and s.held:
        facts: dict[str, Any] = {"girl_card": s.card}
        rows: list[tuple[str, dict[str, Any]]] = [(f"mh.page.girl_card.{str(s.card).replace('-', '_')}", {})]
    else:
        numbers = dict(g.sealed.get(player, {}))
        facts = {"battle": numbers}
        rows = [(f"mh.page.battle.{name}", {"value": value}) for name, value in numbers.items()]
    if g.legal(player).submits:
        rows.append(("mh.page.now.battle", {}))
    return View(facts, rows)


def explore_headline(g: Game) -> dict[str, Any]:
    """A timed turn (``turn_s``) counts down on the pages as it is said: to its
    warning, then to its end; untimed, no clock."""
    n, o = g.state.turns, g.opts
    return {"timer": [(f"turn:{n}:warn", o.turn_warning_s), (f"turn:{n}:up", 0)]} if n and o.turn_s else {}


def discussion_headline(g: Game) -> dict[str, Any]:
    """The discussion ends on its countdown."""
    return {"timer": ("discussion", next_point(g.state.left_s, g.opts.discussion_s, g.opts.warnings_s))}


def vote_prompt(g: Game) -> list[Output]:
    s = g.state
    if s.pending:
        return [Say("mh.vote.which", {"player": s.pending})]
    return [Say("mh.vote.prompt", {"players": [p for p in g.living if p not in s.votes]})]


def _still_to_tap(g: Game, done: Mapping[str, Any]) -> list[str]:
    """The living investigators not yet in ``done``, or the one who tapped their card."""
    s = g.state
    return [s.pending] if s.pending else [p for p in g.living if p not in done]


def _tapped(g: Game, done: Mapping[str, Any], what: str) -> dict[str, Any]:
    """How many living investigators are in ``done`` (taps everyone saw)."""
    return {"count": {"done": len([p for p in g.living if p in done]), "of": len(g.living), "what": what}}


def vote_waits(g: Game) -> list[str]:
    """The living investigators still to vote, or the one who tapped their card."""
    return _still_to_tap(g, g.state.votes)


def vote_headline(g: Game) -> dict[str, Any]:
    """The living investigators who have voted."""
    return _tapped(g, g.state.votes, "votes")


def ending_prompt(g: Game) -> list[Output]:
    s = g.state
    if s.pending:
        return [Say("mh.ending.which", {"player": s.pending})]
    missing = ending_missing(g)
    if s.card is None:
        return [Say("mh.ending.girl_card", {"player": s.girl})]
    if missing:
        return [Say("mh.ending.prompt", {"players": missing})]
    return [Say("mh.ending.ready")]


def ending_waits(g: Game) -> list[str]:
    """The survivors still to show their state, or the one who tapped their card."""
    return _still_to_tap(g, g.state.states)


def ending_headline(g: Game) -> dict[str, Any]:
    """The living investigators who have shown their state."""
    return _tapped(g, g.state.states, "states")


# After a restart: the same step (the discussion's and a turn's timers are
# re-armed by ``steps``).
def resume_step(g: Game) -> list[Output]:
    return [Say("mh.resume.step"), *g.prompt()]
