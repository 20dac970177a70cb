"""Seven Knights Bewitched: what the table sees and hears at each step — the read side.

``view``, what an audience may see (the engine's one read function: the
pages and the headline come from it), and what each step is to the table —
its prompt, whom it waits for, its headline — which the step table in
``engine`` declares beside what each step takes.  All of it reads the state
(``state.Game``); the state changes only in ``steps``.  Nothing here about
tiles or the witch team, which the engine learns only when they become
public.
"""

from __future__ import annotations

from typing import Any

from companion.core.contract import View
from companion.core.events import Output, Say
from companion.games.seven_knights.state import Game, concede_hint


def view(g: Game, seat: str | None = None) -> View:
    """For the table, the round, the start player, the captain once elected,
    the totals and each scored round: all said at the table; the formation
    tile by tile as the captain reveals it (``laid``), the tiles left out
    (``aside``), each under the step that lays it, and the round's verdict
    once it is given — each said aloud as it came.  Nothing else about tiles
    (a tile tapped before the command phase is not named until confirmed) or
    the witch team; nothing for a seat alone (no hand is known to the engine)."""
    if seat is not None:
        return View()
    st = g.state
    facts: dict[str, Any] = {"step": st.step, "round": st.round, "start_player": g.players[st.start_seat],
                             "captain": st.captain, "totals": dict(st.totals), "whose_turn": g.waiting(),
                             "rounds": [dict(r) for r in st.scored]}
    lines: list[tuple[str, dict[str, Any]]] = []
    for key, step, tiles in (("laid", "formation", st.formation), ("aside", "left_out", st.excluded)):
        if tiles:  # from the first tile revealed
            facts[key] = {"step": step, "tiles": list(tiles)}
            lines.append((f"skb.board.{key}", {"tiles": list(tiles)}))
    if st.verdict is not None:
        facts["verdict"] = st.verdict
        lines.append((f"skb.board.verdict.{st.verdict}", {}))
    return View(facts, lines)


# Whom the table waits for (the steps' ``waits``): the start player leads the
# quest and the questions (then clockwise); in the recommendation whoever is
# tapping, else everyone who has not recommended; the captain, once known,
# from the command on.  Nobody at scoring: naming who may tap for the witch
# team would hint.
def start_player(g: Game) -> list[str]:
    return [g.players[g.state.start_seat]]


def recommending(g: Game) -> list[str]:
    st = g.state
    return [st.voter] if st.voter else [p for p in g.players if p not in st.votes]


def the_captain(g: Game) -> list[str]:
    return [g.state.captain] if g.state.captain else []


def recommendation_headline(g: Game) -> dict[str, Any]:
    """The recommendation counts the players who have recommended (taps everyone saw)."""
    return {"count": {"done": len(g.state.votes), "of": len(g.players), "what": "recommended"}}


# What each step waits for, said (the steps' ``prompt``).
def quest_prompt(g: Game) -> list[Output]:
    variant = ("skb.phase.quest.special" if g.rule_name == "special"
               else "skb.phase.quest.centre" if g.centre else "skb.phase.quest")
    return [Say(variant, {"player": g.players[g.state.start_seat]})]


def recommendation_prompt(g: Game) -> list[Output]:
    st = g.state
    if st.voter is not None:
        return [Say("skb.vote.voter", {"player": st.voter})]
    if st.votes:
        return [Say("skb.vote.waiting", {"n": len(st.votes), "count": len(g.players)})]
    return [Say("skb.phase.recommendation")]


def command_prompt(g: Game) -> list[Output]:
    st = g.state
    if st.conceding is not None:
        return [Say("skb.concede.confirm", {"player": st.conceding})]
    if st.captain is not None:
        return [Say("skb.phase.command.captain", {"player": st.captain}), *concede_hint(g)]
    return [Say("skb.phase.command"), *concede_hint(g)]


def formation_prompt(g: Game) -> list[Output]:
    st = g.state
    if st.conceding is not None:
        return [Say("skb.concede.confirm", {"player": st.conceding})]
    if st.formation:
        return [Say("skb.formation.progress", {"n": len(st.formation)})]
    variant = ("" if not g.centre else ".centre") if g.rule.witch_team else ".cooperative"
    return [Say(f"skb.formation.prompt{variant}", {"n": g.on_table, "centre": g.centre})]
