"""Daybreak's taps at the reveal after a player's role card (rules: *Daybreak*,
rule 9): the artifact token that lies on that card (``onw/artifact/<id>``),
and — a PI who saw a wolf or a tanner — that role's card, which the PI now
is (the same flow as the doppelganger's copied card).  Both are optional:
the next player's card, or ``next``, goes on without them.

``state.shown`` is the player whose card was just shown; a player card ends
it.  Each artifact is one token: it lies on one card, a card holds one.
"""

from __future__ import annotations

from companion.core.events import Output, Refusal, Say
from companion.games.one_night.roles import ARTIFACTS, ROLES, card_of, role_of, spoken
from companion.games.one_night.state import Game


def artifact_of(identity: str) -> str | None:
    """``onw/artifact/claw`` → ``claw``; any other tag → None."""
    name = identity.removeprefix("onw/artifact/")
    return name if name != identity and name in ARTIFACTS else None


def investigator(g: Game, player: str) -> bool:
    """Did ``player`` show the PI (or the doppelganger that copied it)?"""
    s = g.state
    shown = s.copied.get(player) or role_of(s.revealed[player])
    return ROLES[shown].investigator if shown in ROLES else False


def became(g: Game, identity: str) -> str | None:
    """The role a card tapped now makes the PI just shown: a wolf or the
    tanner in the deck, once (None: the card is no PI's)."""
    s, role = g.state, role_of(card_of(identity, g.edition))
    if s.shown is None or s.copying or s.shown in s.became or not investigator(g, s.shown):
        return None
    entry = ROLES.get(role)
    if entry is None or role not in g.deck or not (entry.werewolf or entry.dies_to_win):
        return None
    return role


def is_token(g: Game, identity: str) -> bool:
    return artifact_of(identity) is not None or became(g, identity) is not None


def token_refusal(g: Game, identity: str) -> Refusal | None:
    """Why an artifact token cannot be shown now (a PI's card, when it is
    one, is always taken)."""
    s, artifact = g.state, artifact_of(identity)
    if artifact is None:
        return None
    name = f"artifact/{artifact}"
    if "curator" not in g.deck:
        return Refusal("onw.refuse.no_curator", "no curator is in the deck: no artifact was placed",
                       artifact=name)
    if s.copying is not None:
        return Refusal("onw.refuse.copied_expected", f"tap a card of the role {s.copying} copied",
                       player=s.copying)
    if s.shown is None:
        return Refusal("onw.refuse.artifact_first", "an artifact token is shown right after the card it lies on",
                       artifact=name)
    if s.shown in s.artifacts:
        return Refusal("onw.refuse.artifact_one", f"{s.shown}'s card holds the {s.artifacts[s.shown]} already",
                       player=s.shown, artifact=f"artifact/{s.artifacts[s.shown]}")
    if holder := next((p for p, a in s.artifacts.items() if a == artifact), None):
        return Refusal("onw.refuse.artifact_twice", f"the {artifact} lies on {holder}'s card already",
                       player=holder, artifact=name)
    return None


def token(g: Game, identity: str) -> list[Output]:
    """The artifact on the card just shown, or the role the PI became."""
    s = g.state
    player = s.shown
    assert player is not None  # the guard saw to it
    artifact = artifact_of(identity)
    if artifact is None:
        role = became(g, identity)
        assert role is not None
        s.became[player] = role
        return [Say("onw.reveal.investigated", {"player": player, "role": spoken(role, g.edition)})]
    s.artifacts[player] = artifact
    if (role := ARTIFACTS[artifact]) is not None:
        return [Say("onw.reveal.artifact_role", {"player": player, "artifact": f"artifact/{artifact}",
                                                 "role": spoken(role, g.edition)})]
    return [Say("onw.reveal.artifact", {"player": player, "artifact": f"artifact/{artifact}"})]
