"""One Night's reveal: the optional vote count, each player's final card
(the doppelganger's holder shows the role it copied), the executed, a dead
hunter's vote, then the verdict — the handlers ``engine``'s step table names
for the steps ``reveal`` and ``hunter``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from companion.core.engine import Engine, Goto
from companion.core.events import Output, Press, Refusal, Report, Say, Tap
from companion.games.one_night.roles import card_of, role_of, spoken
from companion.games.one_night.rules import count_votes, most_executed
from companion.games.one_night.verdict import Verdict, hunters_to_ask, verdict
from companion.games.one_night.verdict import dead as verdict_dead


@dataclass
class OneNightState:
    step: str = "deal"  # deal | night | discussion | vote | reveal | done
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
    verdict: Verdict | None = None


class Reveal(Engine):
    """The reveal's handlers; the engine (``engine.OneNight``) holds the deck."""

    state: OneNightState
    deck: dict[str, int]
    cards: tuple[str, ...]
    edition: str

    def final_roles(self) -> dict[str, str]:
        """Each revealed player's final role (the doppelganger's as ``doppelganger:<role>``)."""
        s = self.state
        return {p: f"{role_of(c)}:{s.copied[p]}" if p in s.copied else role_of(c) for p, c in s.revealed.items()}

    # ---------------------------------------------------------------- reveal
    def _missing(self) -> list[str]:
        """The players who have not shown their card yet, in seat order."""
        return [p for p in self.players if p not in self.state.revealed]

    def _reveal_incomplete(self, _: Press) -> Refusal | None:
        missing = self._missing()
        if missing or self.state.pending or self.state.copying:
            return Refusal("onw.refuse.reveal_incomplete", "not everyone has revealed their card", players=missing)
        return None

    def _reveal_done(self, _: Press) -> list[Output] | Goto:
        return Goto("hunter", prompt=True) if self._hunters() else Goto("done", self._judge())

    # ---------------------------------------------------------------- hunter
    def _hunters(self) -> list[str]:
        """Dead hunters whose vote the table has not told (the count, or asked here)."""
        s = self.state
        return hunters_to_ask(self._executed(), self.final_roles(), {**s.votes, **s.shots})

    def _executed(self) -> list[str]:
        return [p for p in self.players if p in self.state.executed]  # seat order

    def _hunter_refusal(self, inp: Tap) -> Refusal | None:
        if self._player_of(inp) is None:
            return Refusal("onw.refuse.hunter", "tap the card of the player the hunter voted for")
        return None

    def _hunter_shot(self, inp: Tap) -> Goto:
        hunter, target = self._hunters()[0], self._player_of(inp)
        assert target is not None
        self.state.shots[hunter] = target
        said = [Say("onw.hunter.voted", {"player": hunter, "target": target})]
        if self._hunters():
            return Goto("hunter", said, prompt=True)
        return Goto("done", [*said, *self._judge()])

    def _reveal_refusal(self, inp: Tap) -> Refusal | None:
        """A player card (the pointing of the count, a reveal, an execution)
        or a role card, when the reveal cannot take it (``_player_card``,
        ``_role_card``)."""
        if (player := self._player_of(inp)) is not None:
            return self._player_card_refusal(player)
        if inp.identity.startswith("onw/"):
            return self._role_card_refusal(inp.identity)
        return Refusal("onw.refuse.foreign", f"{inp.identity} is not a One Night card", card=inp.identity)

    def _reveal_tap(self, inp: Tap) -> list[Output]:
        missing = self._missing()
        if (player := self._player_of(inp)) is not None:
            return self._player_card(player, missing)
        return self._role_card(inp.identity)

    def _counting(self) -> bool:
        """Is the optional vote count under way (begun, not finished)?"""
        return bool(self.state.votes) and not self.state.counted

    def _player_card_refusal(self, player: str) -> Refusal | None:
        s, missing = self.state, self._missing()
        if s.copying:
            return Refusal("onw.refuse.copied_expected", f"tap a card of the role {s.copying} copied",
                           player=s.copying)
        if s.pending:
            if s.revealed or s.counted:  # the count is only before the first card is shown
                return Refusal("onw.refuse.role_card_expected", f"tap {s.pending}'s role card first",
                               player=s.pending)
            return None
        if missing:
            if self._counting() and player in s.votes:
                return Refusal("onw.refuse.already_voted", f"{player} has voted already",
                               player=player, n=len(self.players) - len(s.votes))
            if player in s.revealed:
                # Revealing twice, or an executed player tapped too early: both wait for the others.
                return Refusal("onw.refuse.already_revealed",
                               f"{player} has revealed; executed players come after everyone has",
                               player=player, players=missing)
            return None
        if s.counted:  # the count said who is executed (or that nobody is): it holds
            return Refusal("onw.refuse.votes_counted", "the vote was counted: press next", player=player)
        if player in s.executed:
            return Refusal("onw.refuse.executed_twice", f"{player} is already marked executed", player=player)
        most = most_executed(len(self.players))
        if len(s.executed) >= most:
            return Refusal("onw.refuse.impossible_execution",
                           f"{len(self.players)} votes cannot execute more than {most} players",
                           count=len(self.players), most=most)
        return None

    def _player_card(self, player: str, missing: list[str]) -> list[Output]:
        """The count's pointing (a card pending, before any reveal), a player
        about to reveal, or — everyone revealed — an executed player."""
        s = self.state
        if s.pending:
            return self._vote_for(player)
        if missing:
            s.pending = player
            return self.prompt()
        s.executed.append(player)
        return [Say("onw.reveal.executed", {"player": player})]

    def _vote_for(self, choice: str) -> list[Output]:
        """The second card of a pair before the first reveal: the pending
        player points at ``choice``.  Once every player has voted, the count
        decides the executed (a tie executes all tied; one vote each, nobody)."""
        s = self.state
        voter, s.pending = s.pending, None
        assert voter is not None
        s.votes[voter] = choice
        out: list[Output] = [Say("onw.count.recorded", {"player": choice,
                                                        "n": len(s.votes), "count": len(self.players)})]
        if len(s.votes) < len(self.players):
            return out
        s.counted = True
        s.executed = count_votes(self.players, s.votes)
        if not s.executed:
            return [*out, Say("onw.count.everyone_tied"), *self.prompt()]
        top = sum(1 for c in s.votes.values() if c == s.executed[0])
        return [*out, Say("onw.count.executed", {"players": list(s.executed), "n": top}), *self.prompt()]

    def _role_card_refusal(self, card: str) -> Refusal | None:
        s, card = self.state, card_of(card, self.edition)
        if s.copying is not None:  # any card of a role in the deck, shown before or not
            if role_of(card) not in self.deck or role_of(card) == "doppelganger":
                return Refusal("onw.refuse.not_copied", f"{role_of(card)} is not a role the doppelganger could copy",
                               role=spoken(role_of(card), self.edition), player=s.copying)
            return None
        if card not in self.cards:
            return Refusal("onw.refuse.not_in_deck", f"{card} is not in this game's deck",
                           card=card, count=len(self.players))
        holder = next((p for p, c in s.revealed.items() if c == card), None)
        if holder is not None:
            return Refusal("onw.refuse.card_twice", f"{card} was already revealed by {holder}",
                           card=card, role=role_of(card), player=holder)
        if not self._missing():
            return Refusal("onw.refuse.all_revealed", f"everyone has revealed; {card} is in the centre",
                           card=card, role=role_of(card))
        if s.pending is None:
            return Refusal("onw.refuse.player_first", "tap your player card before your role card",
                           card=card, role=role_of(card))
        if self._counting():
            return Refusal("onw.refuse.votes_incomplete", "finish the vote count first",
                           n=len(self.players) - len(s.votes), player=s.pending)
        return None

    def _role_card(self, card: str) -> list[Output]:
        s, card = self.state, card_of(card, self.edition)
        if s.copying is not None:  # the doppelganger's holder shows the role they became
            player, s.copying = s.copying, None
            s.copied[player] = role_of(card)
            out: list[Output] = [Say("onw.reveal.copied", {"player": player,
                                                           "role": spoken(role_of(card), self.edition)})]
        else:
            assert s.pending is not None  # the guard saw to it
            player, s.pending = s.pending, None
            s.revealed[player] = card
            if role_of(card) == "doppelganger":
                s.copying = player
                return [Say("onw.reveal.doppelganger", {"player": player})]
            out = [Say("onw.reveal.role", {"player": player, "role": spoken(role_of(card), self.edition)})]
        if len(s.revealed) == len(self.players):
            out.append(Say("onw.reveal.all_counted" if s.counted else "onw.reveal.all_done"))
        return out

    def _judge(self) -> list[Output]:
        s = self.state
        roles, executed = self.final_roles(), self._executed()
        shot = [p for p in verdict_dead(executed, roles, {**s.votes, **s.shots}) if p not in executed]
        v = s.verdict = verdict(self.players, roles, executed, shot)
        return [
            Say("onw.verdict.executed", {"players": executed}) if executed
            else Say("onw.verdict.nobody_executed"),
            *([Say("onw.verdict.shot", {"players": shot})] if shot else []),
            *(Say(reason) for reason in v.reasons),
            Say("onw.verdict.winners", {"players": list(v.winners)}) if v.winners
            else Say("onw.verdict.no_winners"),
            Report("onw_result", {"executed": executed, "winning_team": v.winning_team,
                                  "winners": list(v.winners), "deck": dict(self.deck), "final_roles": roles,
                                  "dead": list(v.dead), "winning_teams": list(v.winning_teams)}),
        ]
