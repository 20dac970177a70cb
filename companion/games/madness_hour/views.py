"""Madness Hour: what the table and each player see at each step — the read side.

The public view, a player's private view and page, and what each step is to
the table — its prompt, its lines after a restart, whom it waits for, its
headline — which the step table in ``engine`` declares beside what each step
takes.  Reads of the engine: the state changes only in ``engine``'s handlers.
The Girl's card stays out of the public view until the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from companion.core.countdown import next_point, spoken
from companion.core.events import Output, Say

if TYPE_CHECKING:
    from companion.games.madness_hour.handlers import (
        MadnessHourHandlers as MadnessHour,  # the engine below its step table: no import back up
    )


def public_view(game: MadnessHour) -> dict[str, Any]:
    s = game.state
    view: dict[str, Any] = {"step": s.step, "girl": s.girl, "card_held": s.held, "round": s.round, "turn": s.turn_of,
                            "votes": dict(s.votes), "dead": list(s.dead), "battle": dict(s.totals),
                            "revealed": list(s.revealed), "girl_alive": s.girl_alive,
                            "states": dict(s.states)}
    if game.finished:
        view.update(girl_card=s.card, winners=list(s.winners))
    view["whose_turn"] = game.waiting()  # the steps' ``waits``: from what everyone saw
    return view


def private_view(game: MadnessHour, player: str) -> dict[str, Any]:
    s = game.state
    if player == s.girl and s.held:
        return {"girl_card": s.card}
    return {"battle": dict(game.sealed.get(player, {}))}


def page(game: MadnessHour, player: str) -> list[tuple[str, dict[str, Any]]]:
    """``private_view`` as the page's lines (``mh.page.*``): the Girl's card
    the companion holds for her, or the player's own battle numbers, and
    the battle's form when it is open to them."""
    view = private_view(game, player)
    rows: list[tuple[str, dict[str, Any]]] = []
    if "girl_card" in view:
        rows.append((f"mh.page.girl_card.{view['girl_card'].replace('-', '_')}", {}))
    rows += [(f"mh.page.battle.{name}", {"value": value}) for name, value in view.get("battle", {}).items()]
    if game.legal(player).submits:
        rows.append(("mh.page.now.battle", {}))
    return rows


def discussion_headline(game: MadnessHour) -> dict[str, Any]:
    """The discussion ends on its countdown."""
    return {"timer": ("discussion", next_point(game.state.left_s, game.opts.discussion_s, game.opts.warnings_s))}


def vote_prompt(game: MadnessHour) -> list[Output]:
    s = game.state
    if s.pending:
        return [Say("mh.vote.which", {"player": s.pending})]
    return [Say("mh.vote.prompt", {"players": [p for p in game.living if p not in s.votes]})]


def _still_to_tap(game: MadnessHour, done: Mapping[str, Any]) -> list[str]:
    """The living investigators not yet in ``done``, or the one who tapped their card."""
    s = game.state
    return [s.pending] if s.pending else [p for p in game.living if p not in done]


def _tapped(game: MadnessHour, done: Mapping[str, Any], what: str) -> dict[str, Any]:
    """How many living investigators are in ``done`` (taps everyone saw)."""
    return {"count": {"done": len([p for p in game.living if p in done]), "of": len(game.living), "what": what}}


def vote_waits(game: MadnessHour) -> list[str]:
    """The living investigators still to vote, or the one who tapped their card."""
    return _still_to_tap(game, game.state.votes)


def vote_headline(game: MadnessHour) -> dict[str, Any]:
    """The living investigators who have voted."""
    return _tapped(game, game.state.votes, "votes")


def ending_prompt(game: MadnessHour) -> list[Output]:
    s = game.state
    if s.pending:
        return [Say("mh.ending.which", {"player": s.pending})]
    missing = game._ending_missing()
    if s.card is None:
        return [Say("mh.ending.girl_card", {"player": s.girl})]
    if missing:
        return [Say("mh.ending.prompt", {"players": missing})]
    return [Say("mh.ending.ready")]


def ending_waits(game: MadnessHour) -> list[str]:
    """The survivors still to show their state, or the one who tapped their card."""
    return _still_to_tap(game, game.state.states)


def ending_headline(game: MadnessHour) -> dict[str, Any]:
    """The living investigators who have shown their state."""
    return _tapped(game, game.state.states, "states")


# After a restart: the same step; the discussion goes on from the last tick
# the journal holds (said aloud), a turn timer starts that turn again.
def resume_step(game: MadnessHour) -> list[Output]:
    return [Say("mh.resume.step"), *game.prompt()]


def resume_explore(game: MadnessHour) -> list[Output]:
    return [*resume_step(game), *(game._turn_timer() if game.state.turns else [])]


def resume_discussion(game: MadnessHour) -> list[Output]:
    return [Say("mh.resume.discussion", {"seconds": spoken(game.state.left_s)}), game._discussion_timer()]
