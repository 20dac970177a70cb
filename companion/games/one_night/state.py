"""One Night's state, and what the steps and the views read of it.

``OneNightState`` is everything the table's inputs change (the driver
snapshots it for ``back``); ``Game`` is what a handler or a view may read
of the engine beside it — the seats, the sealed phone votes, the deck and
the night's script, fixed at the start — typed here so that neither
``steps`` nor ``views`` imports the engine that names them.  The functions
below are reads that both need: who has voted, who has still to reveal,
whom the count executed, which dead hunter is still to be asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from companion.core.events import Draw, Output, Refusal
from companion.games.one_night.night import Segment
from companion.games.one_night.roles import ROLES, role_of
from companion.games.one_night.rules import Options
from companion.games.one_night.verdict import Verdict, hunters_to_ask, protected


@dataclass
class OneNightState:
    step: str = "deal"  # deal | night | discussion | vote | count | reveal | hunter | done
    jitter_ms: list[int] | None = None  # the night's secret draw, once made
    night_at: int = -1  # the last night beat played
    left_s: float = 0.0  # discussion time left at the last discussion timer
    extra_s: float = 0.0  # minutes asked for during the discussion, added when its time is up
    paused: bool = False  # the discussion's timer is stopped
    vote_at: int = 0  # the last number of the vote count said
    pending: str | None = None  # player whose role card is awaited
    revealed: dict[str, str] = field(default_factory=dict)  # player → card, in reveal order
    executed: list[str] = field(default_factory=list)  # in tap order (or seat order, counted)
    votes: dict[str, str] = field(default_factory=dict)  # voter → pointed at, when the table counts
    counted: bool = False  # the count decided the executed: it holds
    copied: dict[str, str] = field(default_factory=dict)  # the doppelganger's holder → the role copied
    copying: str | None = None  # the doppelganger's holder, whose copied role's card is awaited
    shots: dict[str, str] = field(default_factory=dict)  # a dead hunter asked → whom they voted for
    # Daybreak's reveal: the player whose card was just shown, who may still show the
    # artifact token on it (and, as the PI, the wolf's or tanner's card they became)
    shown: str | None = None
    artifacts: dict[str, str] = field(default_factory=dict)  # player → the artifact token on their card
    became: dict[str, str] = field(default_factory=dict)  # the PI's holder → the wolf or tanner they saw
    verdict: Verdict | None = None


class Game(Protocol):
    """What the steps and the views read of the engine (``engine.OneNight``)."""

    state: OneNightState
    players: tuple[str, ...]
    sealed: dict[str, Any]  # the phones' votes: ``sealed["vote"]``, never undone by back
    opts: Options
    edition: str
    deck: dict[str, int]
    cards: tuple[str, ...]
    draw: Draw  # the night's jitter

    @property
    def script(self) -> Sequence[Segment]: ...

    def prompt(self) -> list[Output]: ...

    def waiting(self) -> list[str]: ...

    def _player_of(self, inp: Any) -> str | None: ...

    def _not_taken(self, kind: str, value: Any) -> Refusal: ...


def phone_votes(g: Game) -> dict[str, str]:
    return dict(g.sealed.get("vote", {}))


def voted(g: Game) -> list[str]:
    """Who has voted, by the table's taps or on a phone (seat order): public."""
    # a phone vote is a vote only once the vote is called (and, counted, for the rest of the game)
    phones = phone_votes(g) if g.state.step in ("vote", "count") or g.state.counted else {}
    return [p for p in g.players if p in g.state.votes or p in phones]


def to_vote(g: Game) -> list[str]:
    done = voted(g)
    return [p for p in g.players if p not in done]


def counting(g: Game) -> bool:
    """Is the optional vote count under way (begun, not finished)?  A vote
    tapped or cast on a phone begins it: then every player votes before a
    card is shown."""
    return bool(voted(g)) and not g.state.counted


def missing(g: Game) -> list[str]:
    """The players who have not shown their card yet, in seat order."""
    return [p for p in g.players if p not in g.state.revealed]


def executed(g: Game) -> list[str]:
    return [p for p in g.players if p in g.state.executed]  # seat order


def final_roles(g: Game) -> dict[str, str]:
    """Each revealed player's final role card (the doppelganger's as
    ``doppelganger:<role>``, a PI who saw a wolf or a tanner as ``pi:<role>``;
    the artifacts are ``state.artifacts``)."""
    s = g.state
    return {p: ":".join((role_of(c), *([s.copied[p]] if p in s.copied else []),
                         *([s.became[p]] if p in s.became else [])))
            for p, c in s.revealed.items()}


def all_votes(g: Game) -> dict[str, str]:
    """Every vote the table told: the count's, and the dead hunters' asked."""
    return {**g.state.votes, **g.state.shots}


def shielded(g: Game) -> set[str]:
    """Whom the bodyguards protect (rule 11), as far as the votes told are known."""
    return protected(final_roles(g), all_votes(g), g.state.artifacts)


def guarded(g: Game) -> bool:
    """Is a bodyguard in the deck?  Then a counted vote's executed are known
    only once every card is shown (who holds the bodyguard, whom they chose)."""
    return any(ROLES[r].bodyguard for r in g.deck if r in ROLES)


def hunters(g: Game) -> list[str]:
    """Dead hunters whose vote the table has not told (the count, or asked here)."""
    return hunters_to_ask(executed(g), final_roles(g), all_votes(g), g.state.artifacts, shielded(g))


def discussion_s(g: Game) -> float:
    """The discussion's length, in seconds."""
    return g.opts.discussion_min * 60


def tally_for(votes: Mapping[str, str], players: Sequence[str]) -> dict[str, int]:
    """The votes each player got (those who got any, seat order)."""
    return {p: n for p in players if (n := list(votes.values()).count(p))}
