"""Seven Knights Bewitched: what each step does with what it takes — the
election, the command (§4), the formation, the scoring (§5, §6) and the
round's end.  The step table (engine.py) says which handler takes what, and
where it leads."""

from __future__ import annotations

from companion.core.engine import Goto
from companion.core.events import Output, Refusal, Report, Say
from companion.games.seven_knights.rules import (
    KNIGHTS,
    ROUNDS,
    WITCH,
    elect,
    judge,
    round_points,
    winners,
)
from companion.games.seven_knights.state import (
    GAME,
    KnightsState,
    SevenKnightsBase,
)


class SevenKnightsHandlers(SevenKnightsBase):
    """The handlers and guards the step table names."""

    def _tile_refusal(self, tile: str, *, own: bool = False) -> Refusal | None:
        """A tile outside this game's tile set; as a player's own tile
        (``own``), also the witch where it is never dealt (special: it can
        only lie in the centre, so it may still be laid or left out)."""
        if tile not in self.tiles:
            return Refusal("skb.refuse.not_in_tile_set",
                           f"{tile} is not used by {self.rule_name} with {len(self.players)} players",
                           tile=tile)
        if own and tile == WITCH and not self.rule.witch_dealt:
            return Refusal("skb.refuse.witch_not_dealt", "the witch is never dealt to a player in this rule set",
                           tile=tile)
        return None

    def _own_tile_refusal(self, tile: str) -> Refusal | None:
        return self._tile_refusal(tile, own=True)

    # ------------------------------------------------ before the command phase
    def _next_phase(self, _: str) -> Goto:
        return Goto(prompt=True)  # quest → questions → recommendation: the table says

    def _election_begun(self, _: str) -> Refusal | None:
        st = self.state
        if st.votes or st.voter:
            missing = len(self.players) - len(st.votes)
            return Refusal("skb.refuse.election_unfinished",
                           f"{missing} players have not recommended yet", n=missing)
        return None

    def _skip_election(self, _: str) -> Goto:
        return Goto("command", prompt=True)

    def _recommended(self, player: str) -> Refusal | None:
        st = self.state
        if st.voter is None and player in st.votes:
            return Refusal("skb.refuse.already_recommended", f"{player} has recommended already", player=player)
        return None

    def _recommend(self, player: str) -> list[Output] | Goto:
        """Own card first, then the recommended player's card (self allowed)."""
        st = self.state
        if st.voter is None:
            st.voter = player
            return [Say("skb.vote.voter", {"player": player})]
        st.votes[st.voter] = player
        st.voter = None
        out: list[Output] = [Say("skb.vote.recorded", {"player": player, "n": len(st.votes),
                                                       "count": len(self.players)})]
        if len(st.votes) < len(self.players):
            return out
        st.election = dict(st.votes)
        st.captain = elect(self.players, st.start_seat, st.votes)
        count = sum(1 for choice in st.votes.values() if choice == st.captain)
        return Goto("command", [*out, Say("skb.election.captain", {"player": st.captain, "n": count})], prompt=True)

    # ------------------------------------------------------------ command (§4)
    def _early_tile(self, tile: str) -> Goto:
        """A tile tapped before the command phase: "the captain is ready", but
        it may have slipped over the reader (§ What the companion can know),
        so it is neither named nor checked — the line, and the beep, are the
        same whatever the tile — until ``next`` confirms it (``back`` drops it)."""
        self.state.early_tile = tile
        return Goto("captain_ready", prompt=True)

    def _early_tile_refusal(self, _: str) -> Refusal | None:
        """The early tile as the captain's own (a secret until next: ``blind``)."""
        assert self.state.early_tile is not None
        return self._own_tile_refusal(self.state.early_tile)

    def _reveal_early_tile(self, _: str) -> Goto:
        tile, self.state.early_tile = self.state.early_tile, None
        assert tile is not None
        go = self._captain_tile(tile)
        # The command phase's prompt (with the hint) was skipped: a concession is first possible now.
        return Goto(go.step, [*go.outputs[:1], *self._concede_hint(), *go.outputs[1:]], go.prompt) \
            if tile != WITCH else go

    def _captain_tile(self, tile: str) -> Goto:
        """The captain reveals their own tile (an unfinished election is dropped)."""
        st = self.state
        st.votes, st.voter = {}, None
        st.captain_tile = tile
        if tile != WITCH:
            return Goto("formation", [Say("skb.captain.knight", {"tile": tile})], prompt=True)
        # Captain's tile is the witch: the witch team wins at once.  The tile
        # is public now, so a known captain is known to hold it.
        if st.captain is not None:
            st.witch_team = [st.captain]
        return self._decide("captain_witch").after(Say("skb.captain.witch", {"tile": tile}))

    def _concede_refusal(self, player: str) -> Refusal | None:
        st = self.state
        if not self.rule.witch_team:
            return Refusal("skb.refuse.not_now", "nobody is bewitched in the cooperative rule set")
        if st.captain is not None and player != st.captain:
            return Refusal("skb.refuse.only_captain_concedes", f"only the captain, {st.captain}, can concede",
                           player=st.captain)
        return None

    def _concede(self, player: str) -> list[Output] | Goto:
        """A bewitched captain may concede (FAQ): they tap their own card
        twice.  Once the captain is known, only the captain can."""
        st = self.state
        if st.conceding != player:
            st.conceding = player
            return [Say("skb.concede.confirm", {"player": player})]
        st.captain, st.conceding = player, None
        st.witch_team = [player]
        return self._decide("captain_bewitched").after(Say("skb.concede.done", {"player": player}))

    def _decide(self, reason: str) -> Goto:
        """The witch team has won before the formation was judged."""
        st = self.state
        st.verdict, st.reason, st.reported = "witch", reason, True
        report = Report("formation", {"tiles": list(st.formation), "excluded": list(st.excluded),
                                      "verdict": "witch"})
        return Goto("witch_team", [report, Say(f"skb.verdict.witch.{reason}")], prompt=True)

    # ---------------------------------------------------------- formation (§4)
    def _new_tile_refusal(self, tile: str) -> Refusal | None:
        if refusal := self._tile_refusal(tile):
            return refusal
        if tile in self.state.formation or tile in self.state.excluded:
            return Refusal("skb.refuse.tile_twice", f"{tile} is tapped already", tile=tile)
        return None

    def _lay_refusal(self, tile: str) -> Refusal | None:
        if refusal := self._new_tile_refusal(tile):
            return refusal
        if len(self.state.formation) >= self.on_table:
            return Refusal("skb.refuse.too_many_tiles", f"only {self.on_table} tiles lie on the table",
                           n=self.on_table)
        return None

    def _lay(self, tile: str) -> list[Output]:
        st = self.state
        st.formation.append(tile)
        return [Say("skb.formation.tile", {"tile": tile, "n": len(st.formation)})]

    def _captain_tile_missing(self, _: str) -> Refusal | None:
        """``next`` ends the formation; the captain's own tile must be in it
        (the captain lays it, §4)."""
        st = self.state
        if st.captain_tile not in st.formation:
            return Refusal("skb.refuse.captain_tile_missing", "the captain's own tile belongs in the formation",
                           tile=st.captain_tile)
        return None

    def _formation_laid(self, _: str) -> Goto:
        st = self.state
        if len(st.formation) == self.on_table:
            return self._formation_complete()
        return Goto("left_out", prompt=True)

    def _leave_out(self, tile: str) -> list[Output] | Goto:
        st = self.state
        st.excluded.append(tile)
        out: list[Output] = [Say("skb.left_out.tile", {"tile": tile})]
        if len(st.formation) + len(st.excluded) < self.on_table:
            return out
        return self._formation_complete().after(*out)

    def _formation_complete(self) -> Goto:
        if not self.rule.witch_team:  # cooperative: straight to the verdict
            return self._score("next")
        return Goto("witch_team", [Say("skb.formation.done")], prompt=True)

    # ------------------------------------------------------ scoring (§5, §6)
    def _joined(self, player: str) -> Refusal | None:
        if player in self.state.witch_team:
            return Refusal("skb.refuse.player_twice", f"{player} has tapped already", player=player)
        return None

    def _join_witch_team(self, player: str) -> list[Output]:
        st = self.state
        st.witch_team.append(player)
        return [Say("skb.witch_team.joined", {"player": player})]

    def _holder_refusal(self, _: str) -> Refusal | None:
        """Scoring is refused while the witch tile lay in front of a player and
        nobody who could hold it tapped; the reason said is one the table saw:
        the witch tapped, else the deal (after a concession, say)."""
        if not self._witch_holder_missing():
            return None
        st = self.state
        if st.captain_tile != WITCH and WITCH not in (*st.formation, *st.excluded):
            return Refusal("skb.refuse.witch_dealt",
                           "every tile was dealt, so the witch is in front of a player: its holder must tap")
        return Refusal("skb.refuse.witch_holder_must_tap", "the witch's holder must tap their player card")

    def _score(self, _: str) -> Goto:
        """Judge the round and hand out score cards (the holder is in: the
        guard, ``_holder_refusal``, or the step that led here saw to it)."""
        st = self.state
        if self._must_ask_for_the_captain():
            return Goto("captain_check", prompt=True)
        out: list[Output] = []
        if st.verdict is None:
            verdict = judge(st.formation, st.excluded, captain_tile=st.captain_tile,
                            captain_bewitched=st.captain in st.witch_team,
                            witch_team=st.witch_team, has_witch_team=self.rule.witch_team)
            st.verdict, st.reason = verdict.winner, verdict.reason
            out += [Report("formation", {"tiles": list(st.formation), "excluded": list(st.excluded),
                                         "verdict": verdict.winner}),
                    *self._verdict_lines()]
        out += self._conduct()
        points = round_points(st.verdict, st.round, self.players, st.witch_team)
        for p in self.players:
            st.totals[p] += points[p]
        st.scored.append({"round": st.round, "points": dict(points), "totals": dict(st.totals)})
        out.append(Report("round_scored", {"game": GAME, **st.scored[-1]}))
        out += [Say("skb.score.player", {"player": p, "points": points[p], "total": st.totals[p]})
                for p in self.players]
        if st.round < ROUNDS:
            return Goto("round_over", out, prompt=True)
        st.winners = winners(self.players, st.totals)
        out.append(Report("game_over", {"game": GAME, "totals": dict(st.totals),
                                        "winners": list(st.winners)}))
        return Goto("game_over", out, prompt=True)

    def _name_captain(self, player: str) -> Goto:
        """The captain check's answer, and nothing else: if the captain was
        the only one who tapped for the witch team, the witch's holder is
        still missing and is asked for in a step of its own (a tap here is
        never taken as the holder's, nor the holder's as the captain's)."""
        st = self.state
        st.captain, st.captain_checked = player, True
        if self._witch_holder_missing():
            return Goto("witch_holder", [Say("skb.captain_check.named", {"player": player})], prompt=True)
        return self._score("next")

    def _holder_named(self, player: str) -> Refusal | None:
        if player == self.state.captain:
            return Refusal("skb.refuse.captain_holds_a_knight",
                           f"{player}, the captain, holds a knight: the witch's holder must tap", player=player)
        return self._joined(player)

    def _name_witch_holder(self, player: str) -> Goto:
        joined = self._join_witch_team(player)  # in the witch team before the round is scored
        return self._score("next").after(*joined)

    def _captain_not_bewitched(self, _: str) -> Goto:
        self.state.captain_checked = True
        return self._score("next")

    def _conduct(self) -> list[Output]:
        """§ Conduct: the witch may not recommend a bewitched player, nor a
        bewitched player the witch.  Public once the witch team has tapped;
        said (and logged) only where it is certain: a witch-team member
        recommended another, and the witch's holder — it lay in front of a
        player — can only be one of the two.  The verdict stands ([ruling])."""
        st = self.state
        if not st.election or not self._witch_in_front():
            return []
        if st.captain_tile == WITCH and st.captain is not None:
            holders = {st.captain}  # an elected captain revealed the witch
        else:
            known_knight = st.captain if st.captain_tile in KNIGHTS else None
            holders = {p for p in st.witch_team if p != known_knight}
        broken = [(voter, choice) for voter, choice in st.election.items()
                  if voter != choice and voter in st.witch_team and choice in st.witch_team
                  and holders <= {voter, choice}]
        if not broken:
            return []
        return [Report("conduct", {"round": st.round, "recommendations": [list(b) for b in broken]}),
                *(Say("skb.conduct.note", {"voter": v, "player": c}) for v, c in broken)]

    def _verdict_lines(self) -> list[Output]:
        st = self.state
        if st.reason == "captain_bewitched":
            return [Say("skb.verdict.witch.captain_bewitched")]
        if st.verdict == "knights":
            holds = "skb.formation.holds" if self.rule.witch_team else "skb.formation.holds.cooperative"
            return [Say(holds), Say("skb.verdict.knights")]
        failed = Say(f"skb.formation.failed.{st.reason}",
                     {"tiles": [t for t in st.excluded if t != WITCH] if st.reason == "knight_left_out"
                      else list(st.formation)})
        if st.verdict == "witch":
            return [failed, Say("skb.verdict.witch")]
        why = "empty_witch_team" if self.rule.witch_team else "cooperative"
        return [failed, Say(f"skb.verdict.nobody.{why}")]

    def _next_round(self, _: str) -> Goto:
        st = self.state
        if self.options.start_marker == "pass":
            st.start_seat = (st.start_seat + 1) % len(self.players)
        # a new round's state, its step kept until the table moves it (to the quest)
        self.state = KnightsState(step=st.step, round=st.round + 1, start_seat=st.start_seat, totals=st.totals,
                                  scored=st.scored)
        return Goto("quest", [self._round_line()], prompt=True)
