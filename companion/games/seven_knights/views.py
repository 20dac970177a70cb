"""Seven Knights Bewitched: what the table sees and hears at each step — the read side.

The public view, and what each step is to the table — its prompt, whom it
waits for, its headline — which the step table in ``engine`` declares beside
what each step takes.  Reads of the engine: the state changes only in
``engine``'s handlers.  Nothing here about tiles or the witch team, which the
engine learns only when they become public.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from companion.core.events import Output, Say

if TYPE_CHECKING:
    from companion.games.seven_knights.handlers import (
        SevenKnightsHandlers as SevenKnights,  # the engine below its step table: no import back up
    )


def public_view(game: SevenKnights) -> dict[str, Any]:
    """The round, the start player, the captain once elected, the totals and
    each scored round: all said at the table.  Nothing about tiles or the
    witch team, which the engine learns only when they become public."""
    st = game.state
    return {"step": st.step, "round": st.round, "start_player": game.players[st.start_seat],
            "captain": st.captain, "totals": dict(st.totals), "whose_turn": game.waiting(),
            "rounds": [dict(r) for r in st.scored]}


# Whom the table waits for (the steps' ``waits``): the start player leads the
# quest and the questions (then clockwise); in the recommendation whoever is
# tapping, else everyone who has not recommended; the captain, once known,
# from the command on.  Nobody at scoring: naming who may tap for the witch
# team would hint.
def start_player(game: SevenKnights) -> list[str]:
    return [game.players[game.state.start_seat]]


def recommending(game: SevenKnights) -> list[str]:
    st = game.state
    return [st.voter] if st.voter else [p for p in game.players if p not in st.votes]


def the_captain(game: SevenKnights) -> list[str]:
    return [game.state.captain] if game.state.captain else []


def recommendation_headline(game: SevenKnights) -> dict[str, Any]:
    """The recommendation counts the players who have recommended (taps everyone saw)."""
    return {"count": {"done": len(game.state.votes), "of": len(game.players), "what": "recommended"}}


# What each step waits for, said (the steps' ``prompt``).
def quest_prompt(game: SevenKnights) -> list[Output]:
    variant = ("skb.phase.quest.special" if game.rule_name == "special"
               else "skb.phase.quest.centre" if game.centre else "skb.phase.quest")
    return [Say(variant, {"player": game.players[game.state.start_seat]})]


def recommendation_prompt(game: SevenKnights) -> list[Output]:
    st = game.state
    if st.voter is not None:
        return [Say("skb.vote.voter", {"player": st.voter})]
    if st.votes:
        return [Say("skb.vote.waiting", {"n": len(st.votes), "count": len(game.players)})]
    return [Say("skb.phase.recommendation")]


def command_prompt(game: SevenKnights) -> list[Output]:
    st = game.state
    if st.conceding is not None:
        return [Say("skb.concede.confirm", {"player": st.conceding})]
    if st.captain is not None:
        return [Say("skb.phase.command.captain", {"player": st.captain}), *game._concede_hint()]
    return [Say("skb.phase.command"), *game._concede_hint()]


def formation_prompt(game: SevenKnights) -> list[Output]:
    st = game.state
    if st.conceding is not None:
        return [Say("skb.concede.confirm", {"player": st.conceding})]
    if st.formation:
        return [Say("skb.formation.progress", {"n": len(st.formation)})]
    variant = ("" if not game.centre else ".centre") if game.rule.witch_team else ".cooperative"
    return [Say(f"skb.formation.prompt{variant}", {"n": game.on_table, "centre": game.centre})]
