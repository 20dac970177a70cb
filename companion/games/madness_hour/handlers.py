"""Madness Hour: what each step does with what it takes — the Girl's set-up,
the exploration, the discussion, the vote, the battle and the ending.  The
step table (engine.py) says which handler takes what, and where it leads."""

from __future__ import annotations

from collections.abc import Mapping

from companion.core.countdown import next_point, spoken
from companion.core.engine import Ask, Goto
from companion.core.events import (
    CancelTimer,
    Output,
    Press,
    Refusal,
    Report,
    Say,
    SetTimer,
    Submit,
    Tap,
    Tell,
    TimerFired,
)
from companion.games.madness_hour.rules import (
    BATTLE_FIELDS,
    battle,
    battle_dead,
    turn_order,
    unanimous,
    winners,
)
from companion.games.madness_hour.state import (
    CLEARED_BY_0,
    CLIMAX,
    GIRL_CARDS,
    SIDE_CARDS,
    STATE_CARDS,
    MadnessHourBase,
)


class MadnessHourHandlers(MadnessHourBase):
    """The handlers and guards the step table names."""

    # --------------------------------------------------------- the Girl's set-up
    def _girl_refusal(self, inp: Tap) -> Refusal | None:
        return self._not_taken("tap", inp) if self._player_of(inp) is None else None

    def _pick_girl(self, inp: Tap) -> Goto:
        player = self.state.girl = self._player_of(inp)
        return Goto("card", [Say("mh.girl.chosen", {"player": player})], prompt=True)

    def _card_refusal(self, inp: Tap) -> Refusal | None:
        s = self.state
        if inp.identity in GIRL_CARDS:
            return None
        if (player := self._player_of(inp)) is not None and player != s.girl:
            return Refusal("mh.refuse.not_girl_seat", f"only the Girl ({s.girl}) draws a Girl card", player=s.girl)
        return self._not_taken("tap", inp)

    def _card(self, inp: Tap) -> Goto:
        # Both cards take this very path: the same line, the same step, nothing else.
        self.state.card, self.state.held = inp.identity.removeprefix("mh/girl/"), True
        return Goto("explore", [Say("mh.girl.card_held")], prompt=True)

    def _keep_card(self, _: Press) -> Goto:
        return Goto("explore", [Say("mh.girl.card_kept")], prompt=True)

    # ------------------------------------------------------------ exploration
    def _turn_timer_refusal(self, inp: TimerFired) -> Refusal | None:
        n = self.state.turns
        return None if inp.name in (f"turn:{n}:warn", f"turn:{n}:up") else self._not_taken("timer", inp)

    def _turn_timer_fired(self, inp: TimerFired) -> list[Output]:
        s = self.state
        if inp.name == f"turn:{s.turns}:warn":
            return [Say("mh.turn.warning", {"seconds": spoken(self.opts.turn_warning_s)}),
                    SetTimer(f"turn:{s.turns}:up", self.opts.turn_warning_s)]
        return [Say("mh.turn.time_up", {"player": s.turn_of})]

    def _explore_refusal(self, inp: Tap) -> Refusal | None:
        if inp.identity == CLIMAX:
            return None
        return self._dead_card_refusal(inp) if _dead_card(inp) else self._not_taken("tap", inp)

    def _explore(self, inp: Tap) -> list[Output] | Goto:
        if inp.identity == CLIMAX:
            if not self.living:  # [ruling] nobody left to discuss or vote: the Girl walks out
                return self._outcome("keep").after(*self._cancel_turn(), Say("mh.climax.nobody_left"))
            return self._begin_discussion().after(*self._cancel_turn())
        return self._dead_card(inp)

    def _call_turn(self, _: Press) -> list[Output]:
        """The next living player after the last one called, in turn order; back
        at the Girl, a new round."""
        s = self.state
        order = turn_order(self.players, self._girl)
        at = order.index(s.turn_of) + 1 if s.turn_of else 0
        who = next(p for p in (order[at:] + order) if p not in s.dead)  # the Girl is alive until the climax
        out: list[Output] = list(self._cancel_turn())
        s.turn_of, s.turns, s.pending = who, s.turns + 1, None  # a player card left hanging is dropped
        if who == s.girl:
            s.round += 1
            out.append(Say("mh.turn.round", {"round": s.round}))
        out.append(Say("mh.turn.girl" if who == s.girl else "mh.turn.investigator", {"player": who}))
        return [*out, *self._turn_timer()]

    def _dead_card_refusal(self, inp: Tap) -> Refusal | None:
        """A player card, then (as the next input) ``mh/state/dead``: one who died
        before the climax — refused for the Girl, the dead, a dead card first."""
        s = self.state
        if (player := self._player_of(inp)) is not None:
            if player == s.girl:
                return Refusal("mh.refuse.girl_not_here", "the Girl is not marked now", player=player)
            if player in s.dead:
                return Refusal("mh.refuse.dead", f"{player} is dead already", player=player)
            return None
        if s.pending is None:
            return Refusal("mh.refuse.player_first", "tap the player card first")
        return None

    def _dead_card(self, inp: Tap) -> list[Output]:
        s = self.state
        if (player := self._player_of(inp)) is not None:
            s.pending = player
            return [Say("mh.dead.which", {"player": player})]
        player, s.pending = s.pending, None
        assert player is not None
        s.dead.append(player)
        s.votes.pop(player, None)
        return [Say("mh.dead.marked", {"player": player})]

    # ---------------------------------------------------------- the discussion
    def _begin_discussion(self) -> Goto:
        s = self.state
        s.pending = None
        s.left_s = self.opts.discussion_s
        return Goto("discussion", [Say("mh.climax.gather"), Say("mh.climax.discuss", {"seconds": spoken(s.left_s)}),
                                   self._discussion_timer()])

    def _discussion_timer_refusal(self, inp: TimerFired) -> Refusal | None:
        return self._not_taken("timer", inp) if inp.name != "discussion" else None

    def _discussion_tick(self, inp: TimerFired) -> list[Output] | Goto:
        s = self.state
        left = s.left_s = next_point(s.left_s, self.opts.discussion_s, self.opts.warnings_s)
        if left == 0:
            return Goto("vote", [Say("mh.climax.time_up")], prompt=True)
        return [Say("mh.climax.seconds_left", {"seconds": spoken(left)}), self._discussion_timer()]

    def _end_discussion(self, _: Press) -> Goto:
        return Goto("vote", [CancelTimer("discussion"), Say("mh.climax.ended")], prompt=True)

    # --------------------------------------------------------------- the vote
    def _vote_refusal(self, inp: Tap) -> Refusal | None:
        s = self.state
        if inp.identity in SIDE_CARDS:
            if s.pending is None:
                return Refusal("mh.refuse.side_before_player", "tap your player card before your side card")
            return None
        if (voter := self._player_of(inp)) is not None and voter == s.girl:
            return Refusal("mh.refuse.girl_votes", "the Girl does not vote", player=voter)
        return self._dead_card_refusal(inp) if _dead_card(inp) else self._not_taken("tap", inp)

    def _vote(self, inp: Tap) -> list[Output] | Goto:
        s = self.state
        if inp.identity in SIDE_CARDS:
            player, s.pending = s.pending, None
            assert player is not None
            side = s.votes[player] = inp.identity.removeprefix("mh/side/")
            out: list[Output] = [Say(f"mh.vote.recorded_{side}",
                                     {"player": player, "n": len(s.votes), "count": len(self.living)})]
            closed = self._close_vote()
            return out if closed is None else closed.after(*out)
        dead = self._dead_card(inp)
        if s.pending is not None:  # a player card: now their side card (or dead)
            return [Say("mh.vote.which", {"player": s.pending})]
        closed = self._close_vote()
        return [*dead, *self.prompt()] if closed is None else closed.after(*dead)

    def _close_vote(self) -> Goto | None:
        """[ruling] The vote closes as soon as every living investigator has
        voted — after a vote or after a death marked meanwhile, which removes
        the dead one's vote; nobody left alive: the Girl walks out.  None
        while votes are still missing."""
        s = self.state
        if not self.living:
            return self._outcome("keep").after(Say("mh.vote.nobody_left"))
        if any(p not in s.votes for p in self.living):
            return None
        agreed = unanimous(s.votes)
        if agreed is not None:
            return self._outcome(agreed).after(Say(f"mh.vote.unanimous_{agreed}"))
        return Goto("battle", [Say("mh.vote.split")], prompt=True)

    # ------------------------------------------------------------- the battle
    def _battle_asks(self, player: str) -> Mapping[str, Ask]:
        """The battle's fields, for those who voted (they fight)."""
        return dict(BATTLE_FIELDS) if player in self.state.votes else {}

    def _fight_refusal(self, inp: Submit) -> Refusal | None:
        if not self._battle_asks(inp.player):
            return Refusal("mh.refuse.not_fighting", f"{inp.player} is not in the battle", player=inp.player)
        ask = BATTLE_FIELDS.get(inp.field)
        if ask is None:
            return Refusal("mh.refuse.field", f"the battle takes {', '.join(BATTLE_FIELDS)}, not {inp.field}")
        if problem := ask.check(inp.value):
            return Refusal("mh.refuse.value", f"{inp.field} {problem}", field=inp.field)
        return None

    def _fight(self, inp: Submit) -> list[Output]:
        entry = dict(self.sealed.get(inp.player, {}))
        if inp.value == 0 and inp.field in CLEARED_BY_0:
            # [ruling] 0 items or mystic items is no entry: a mystic 0 is no reveal, and
            # sending 0 clears what was sent before (until the battle is counted)
            entry.pop(inp.field, None)
            self.sealed[inp.player] = entry
            return [Tell(inp.player, f"mh.battle.cleared_{inp.field}", {}, entry)]
        entry[inp.field] = inp.value
        self.sealed[inp.player] = entry
        return [Tell(inp.player, f"mh.battle.taken_{inp.field}", {"value": inp.value}, entry)]

    def _strength_missing(self, _: Press) -> Refusal | None:
        missing = [p for p in self.state.votes if "strength" not in self.sealed.get(p, {})]
        if missing:
            return Refusal("mh.refuse.strength_missing", "not every fighter has sent their strength",
                           players=missing)
        return None

    def _battle_counted(self, _: Press) -> Goto:
        s = self.state
        entries = {p: self.sealed[p] for p in s.votes}
        s.totals, won = battle(s.votes, entries)
        s.revealed = [p for p in s.votes if entries[p].get("mystic", 0) >= 1]  # [ruling] a reveal is ≥ 1
        out: list[Output] = []
        if s.revealed:
            out.append(Say("mh.battle.revealed", {"players": list(s.revealed)}))
        out += [Say("mh.battle.totals", {"keep": s.totals["keep"], "kill": s.totals["kill"]}),
                Say(f"mh.battle.won_{won}" + ("_tie" if s.totals["keep"] == s.totals["kill"] else ""))]
        return self._outcome(won).after(*out)

    def _side_refusal(self, inp: Tap) -> Refusal | None:
        return self._not_taken("tap", inp) if inp.identity not in SIDE_CARDS else None

    def _battle_side(self, inp: Tap) -> Goto:
        won = inp.identity.removeprefix("mh/side/")  # no phones: the table counted aloud
        return self._outcome(won).after(Say(f"mh.battle.won_{won}"))

    def _outcome(self, won: str) -> Goto:
        s = self.state
        fallen = battle_dead(s.votes, won)
        s.dead += fallen
        s.girl_alive = won == "keep"
        out: list[Output] = [Say("mh.outcome.fallen", {"players": fallen})] if fallen else []
        out.append(Say("mh.outcome.girl_lives" if s.girl_alive else "mh.outcome.girl_dies"))
        return Goto("ending", out, prompt=True)

    # ------------------------------------------------------------- the ending
    def _ending_refusal(self, inp: Tap) -> Refusal | None:
        s = self.state
        if inp.identity in GIRL_CARDS:
            return Refusal("mh.refuse.girl_card_twice", "the Girl's card is in already") if (
                s.held or s.card is not None) else None
        if (player := self._player_of(inp)) is not None:
            if player == s.girl:
                return Refusal("mh.refuse.girl_not_here", "the Girl shows her Girl card", player=player)
            if player in s.dead:
                return Refusal("mh.refuse.state_for_dead", f"{player} is dead", player=player)
            if player in s.revealed:
                return Refusal("mh.refuse.revealed", f"{player} revealed madness in the battle", player=player)
            return None
        if inp.identity in STATE_CARDS:
            if s.pending is None:
                return Refusal("mh.refuse.player_first", "tap the player card first")
            if inp.identity == "mh/state/dead" and s.pending in s.votes:
                # [ruling] dead at the ending only for one who died before the climax: a voter
                # is alive unless their side lost the battle, and those are dead already
                return Refusal("mh.refuse.dead_voter", f"{s.pending} voted at the climax and is alive",
                               player=s.pending)
            return None
        return self._not_taken("tap", inp)

    def _ending(self, inp: Tap) -> list[Output]:
        s = self.state
        if inp.identity in GIRL_CARDS:
            s.card = inp.identity.removeprefix("mh/girl/")
            return [Say("mh.ending.card_in"), *self.prompt()]
        if (player := self._player_of(inp)) is not None:
            s.pending = player
            return [Say("mh.ending.which", {"player": player})]
        player, s.pending = s.pending, None
        assert player is not None
        shown = inp.identity.removeprefix("mh/state/")
        if shown == "dead":
            s.dead.append(player)
            s.states.pop(player, None)
            return [Say("mh.dead.marked", {"player": player}), *self.prompt()]
        s.states[player] = shown
        return [Say(f"mh.ending.state_{shown}", {"player": player}), *self.prompt()]

    def _ending_incomplete(self, _: Press) -> Refusal | None:
        missing = self._ending_missing()
        if self.state.card is None or missing:
            return Refusal("mh.refuse.ending_incomplete", "the Girl's card and every survivor's state first",
                           players=missing)
        return None

    def _ending_done(self, _: Press) -> list[Output]:
        return self._verdict()

    def _verdict(self) -> list[Output]:
        s = self.state
        assert s.card is not None and s.girl_alive is not None
        s.states.update({p: "mad" for p in s.revealed})  # shown in the battle already
        s.winners = winners(self.players, self._girl, s.card, s.girl_alive, s.states, s.dead)
        dead = [p for p in self.players if p in s.dead or (p == s.girl and not s.girl_alive)]
        alive = [p for p in self.players if p not in dead]
        return [
            Say(f"mh.verdict.girl_{s.card.replace('-', '_')}", {"player": s.girl}),
            Say("mh.verdict.escaped", {"players": alive}) if alive else Say("mh.verdict.nobody_escaped"),
            Say("mh.verdict.winners", {"players": list(s.winners)}) if s.winners else Say("mh.verdict.no_winners"),
            Report("mh_result", {"girl": s.card, "girl_alive": s.girl_alive, "dead": dead,
                                 "winners": list(s.winners)}),
        ]


def _dead_card(inp: Tap) -> bool:
    """Is ``inp`` a card of marking a death: a player's card, or ``mh/state/dead``?"""
    return inp.identity.startswith("player/") or inp.identity == "mh/state/dead"
