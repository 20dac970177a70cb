"""One Night's count and reveal: the optional vote count (the pointing,
tapped, and the votes sealed on the phones), each player's final card (the
doppelganger's holder shows the role it copied), the executed, a dead
hunter's vote, then the verdict — the handlers ``engine``'s step table names
for the steps ``vote``, ``count``, ``reveal`` and ``hunter``.

A phone vote (``submit`` of ``vote``) lives in ``sealed["vote"]`` (which the
table's ``back`` never touches) until every player has voted, by phone or by
the table's taps; then all are counted as the pointing is.  Who has voted is
public (the count says "3 of 5 have voted"), for whom never before the count:
nothing a phone vote changes is public but that count, and a changed vote
changes nothing public at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from companion.core.engine import Ask, Engine, Goto
from companion.core.events import Input, Output, Press, Refusal, Report, Say, Submit, Tap, Tell
from companion.games.one_night.roles import card_of, role_of, spoken
from companion.games.one_night.rules import count_votes, most_executed
from companion.games.one_night.verdict import Verdict, hunters_to_ask, verdict
from companion.games.one_night.verdict import dead as verdict_dead


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
        """Is the optional vote count under way (begun, not finished)?  A vote
        tapped or cast on a phone begins it: then every player votes before a
        card is shown."""
        return bool(self._voted()) and not self.state.counted

    def _player_card_refusal(self, player: str) -> Refusal | None:
        s, missing = self.state, self._missing()
        if s.copying:
            return Refusal("onw.refuse.copied_expected", f"tap a card of the role {s.copying} copied",
                           player=s.copying)
        if s.pending:
            if s.revealed or s.counted:  # the count is only before the first card is shown
                return Refusal("onw.refuse.role_card_expected", f"tap {s.pending}'s role card first",
                               player=s.pending)
            if s.pending in self._phone_votes():  # their vote is in: the pair would be a second one
                return Refusal("onw.refuse.already_voted", f"{s.pending} has voted already",
                               player=s.pending, n=len(self._to_vote()))
            return None
        if missing:
            if self._counting() and player in self._voted():
                return Refusal("onw.refuse.already_voted", f"{player} has voted already",
                               player=player, n=len(self._to_vote()))
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
        player points at ``choice``.  Once every player has voted (here or on
        a phone), the count decides the executed."""
        s = self.state
        voter, s.pending = s.pending, None
        assert voter is not None
        s.votes[voter] = choice
        out: list[Output] = [Say("onw.count.recorded", {"player": choice,
                                                        "n": len(self._voted()), "count": len(self.players)})]
        if self._to_vote():
            return out
        return [*out, *self._close_count(), *self.prompt()]  # the reveal's: the state tells

    def _close_count(self) -> list[Output]:
        """Every player has voted: the phones' sealed votes join the pointing
        the table tapped, and the count decides the executed (a tie executes
        all tied; one vote each, nobody).  The phones' votes are said as the
        totals each player got, never who voted for whom."""
        s = self.state
        phones = {p: c for p, c in self._phone_votes().items() if p not in s.votes}
        s.votes.update(phones)
        s.counted = True
        s.executed = count_votes(self.players, s.votes)
        out: list[Output] = []
        if phones:
            got = {p: n for p in self.players if (n := list(s.votes.values()).count(p))}
            out += [Say("onw.count.total_one" if n == 1 else "onw.count.total", {"player": p, "n": n})
                    for p, n in got.items()]
        if not s.executed:
            return [*out, Say("onw.count.everyone_tied")]
        top = sum(1 for c in s.votes.values() if c == s.executed[0])
        key = "onw.count.executed" if len(s.executed) > 1 else "onw.count.executed_one"
        return [*out, Say(key, {"players": list(s.executed), "n": top})]

    # ------------------------------------------------------------ phone votes
    def _phone_votes(self) -> dict[str, str]:
        return dict(self.sealed.get("vote", {}))

    def _voted(self) -> list[str]:
        """Who has voted, by the table's taps or on a phone (seat order): public."""
        # a phone vote is a vote only once the vote is called (and, counted, for the rest of the game)
        phones = self._phone_votes() if self.state.step in ("vote", "count") or self.state.counted else {}
        return [p for p in self.players if p in self.state.votes or p in phones]

    def _to_vote(self) -> list[str]:
        voted = self._voted()
        return [p for p in self.players if p not in voted]

    def _vote_asks(self, player: str) -> dict[str, Ask]:
        """A phone's vote, from the call until the count or the first card
        shown: any other player; changed freely until then.  Not for a player
        whose pointing the table tapped."""
        if player in self.state.votes or player not in self.players:
            return {}
        return {"vote": Ask("onw.field.vote", choices=tuple(p for p in self.players if p != player))}

    def _phone_vote_refusal(self, inp: Submit) -> Refusal | None:
        asks = self._vote_asks(inp.player)
        if inp.field != "vote":
            return Refusal("onw.refuse.submit_not_now", f"{inp.field} is not taken now")
        if "vote" not in asks:
            return Refusal("onw.refuse.already_voted", f"{inp.player} has voted already",
                           player=inp.player, n=len(self._to_vote()))
        if problem := asks["vote"].check(inp.value):
            return Refusal("onw.refuse.vote_choice", f"the vote {problem}")
        return None

    def _phone_vote(self, inp: Submit) -> list[Output] | Goto:
        """Sealed, acknowledged on that phone only; the last vote in closes the
        count (once the call's "three!" is said: the count step)."""
        self.sealed.setdefault("vote", {})[inp.player] = inp.value
        if self.state.pending == inp.player:  # their card was tapped for the pointing: the phone voted instead
            self.state.pending = None
        out: list[Output] = [Tell(inp.player, "onw.vote.taken", {"player": inp.value}, {"vote": inp.value})]
        # before "three!" the vote is not yet called: the last phone vote closes only an open count
        if self.state.step != "count" or self._to_vote():
            return out
        return Goto("reveal", [*out, *self._close_count()], prompt=True)

    def _vote_label(self, inp: Input) -> str | None:
        """A changed phone vote is that phone's business alone (its acceptance
        is not public, so the pages show no trace of it); a first one is
        public as the count's "3 of 5 have voted" is."""
        if isinstance(inp, Submit) and inp.field == "vote" and inp.player in self._phone_votes():
            return ""
        return None

    def _count_tap(self, inp: Tap) -> list[Output] | Goto:
        """A tap of the count: once the count is closed, or a first card shown
        (the table skips the count), it is the reveal."""
        out = self._reveal_tap(inp)
        s = self.state
        return Goto("reveal", out) if s.counted or s.revealed or s.copying else out

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
                           n=len(self._to_vote()), player=s.pending)
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
