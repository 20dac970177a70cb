"""Seven Knights Bewitched (ミュルマミウスの虜): the table flow as a pure state machine.

Everything that changes the state lives in this module; ``STEPS`` (at the end of the class) says,
step by step, what the table may do and which handler takes it.  An input a
step does not take is refused with a speakable reason and changes nothing.
The judgements (tile sets, election, verdict, points) are pure functions in
``rules``.

Hidden information (§ Table talk): the engine never learns who holds which
tile, and it only learns the witch team when its members tap their cards at
scoring, so no line before then can give either away.  It also never says
what it could deduce (e.g. that the witch must be in the centre).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from companion.core.engine import Engine, Goto, Outcome, Result, Setup, Step, Take
from companion.core.events import Input, Output, Press, Refusal, Report, Say, Tap
from companion.games.seven_knights import views
from companion.games.seven_knights.rules import (
    ALL_TILES,
    KNIGHTS,
    ROUNDS,
    RULE_SETS,
    SETTINGS,
    WINNERS,
    WITCH,
    default_rule_set,
    elect,
    formation_failure,
    judge,
    options_from,
    round_points,
    tile_set,
    winners,
)
from companion.games.seven_knights.show import SHOWS

GAME = "seven-knights"

# What a step takes is ``SevenKnights.STEPS`` (at the end of the class, where
# its handlers are defined).  Captain ready: the same words whatever was
# tapped, so a second tile says nothing about the first.
_READY = ("skb.refuse.captain_ready", "press next to reveal the captain's tile, or back")
EARLY_TILE = "skb/*"  # how a tile tapped before the command phase is named in public: one of the skb/ tiles
SCORED = ("round_over", "game_over")  # where scoring leads


@dataclass
class KnightsState:
    """Everything the engine knows; deep-copied for undo."""

    step: str = "quest"
    round: int = 1
    start_seat: int = 0  # who holds the start marker (index into Setup.players)
    totals: dict[str, int] = field(default_factory=dict)
    votes: dict[str, str] = field(default_factory=dict)  # voter -> recommended
    election: dict[str, str] = field(default_factory=dict)  # the counted election's votes, for conduct
    voter: str | None = None  # tapped their own card, recommendation to follow
    captain: str | None = None  # known only through the election or a concession
    captain_tile: str | None = None
    early_tile: str | None = None  # tapped before the command phase, not named until next confirms it
    formation: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    conceding: str | None = None  # tapped once; a second tap concedes
    witch_team: list[str] = field(default_factory=list)
    verdict: str | None = None  # decided before scoring (captain witch / concession)
    captain_checked: bool = False  # the table said whether the unknown captain is on the witch team
    reason: str | None = None
    reported: bool = False  # the round's ``formation`` event is logged
    winners: tuple[str, ...] = ()
    scored: list[dict[str, Any]] = field(default_factory=list)  # {round, points, totals} per round scored


class SevenKnights(Engine):
    game: ClassVar[str] = GAME
    tag_prefixes: ClassVar[tuple[str, ...]] = ("skb/",)
    components: ClassVar[tuple[str, ...]] = ALL_TILES
    shows: ClassVar[Mapping[str, Callable[[Mapping[str, Any]], str]]] = SHOWS
    settings: ClassVar[Mapping[str, Any]] = SETTINGS
    min_players: ClassVar[int] = 3
    max_players: ClassVar[int] = 8
    not_now: ClassVar[str] = "skb.refuse.not_now"
    # each round's verdict is its formation's; the game's, its end
    outcomes: ClassVar[tuple[Outcome, ...]] = (Outcome("formation", "verdict", WINNERS), Outcome("game_over"))
    state: KnightsState

    def __init__(self, setup: Setup) -> None:
        super().__init__(setup)
        self.check_setup(setup.players, setup.rules, setup.options)
        self.options = options_from(setup.options)  # checked by the config schema (settings)
        self.rule_name = _rule_name(setup.rules) or default_rule_set(len(self.players))
        self.rule = RULE_SETS[self.rule_name]
        self.tiles = tile_set(self.rule_name, len(self.players), self.options)
        # § Round 5 [ruling, revised]: the formation is made of every tile on
        # the table, the players' one each and the centre tiles.
        self.centre = self.rule.centre(len(self.players), len(self.tiles))
        self.on_table = len(self.players) + self.centre
        # Every tile dealt, none in the centre or set aside (basic at 6-8
        # players): the witch lies in front of a player from the deal on.
        self.witch_dealt_to_a_player = (self.rule.witch_dealt and WITCH in self.tiles
                                        and len(self.tiles) == len(self.players))
        self.state = KnightsState(totals={p: 0 for p in self.players})

    # ------------------------------------------------------------------ setup
    @classmethod
    def known_rules(cls) -> tuple[str, ...]:
        return tuple(RULE_SETS)

    @classmethod
    def check_setup(cls, players: Sequence[str], rules: Sequence[str],
                    options: Mapping[str, Any]) -> None:
        """Refuse a player count outside 3-8, more than one rule-set card, an
        unknown rule set, or a rule set not made for this many players."""
        super().check_setup(players, rules, options)
        if len(rules) > 1:
            raise Refusal("skb.refuse.one_rule_set", "tap only one rule-set card", count=len(rules))
        name = _rule_name(rules)
        n = len(players)
        if name is not None and name not in RULE_SETS:
            raise Refusal("skb.refuse.unknown_rule_set", f"no rule set {name!r} in this game", rule=name)
        rs = RULE_SETS[name or default_rule_set(n)]
        if not rs.allows(n):
            raise Refusal("skb.refuse.rule_set_players",
                          f"the {rs.name} rule set is for {rs.low} to {rs.high} players, not {n}",
                          rule=rs.name, count=n, low=rs.low, high=rs.high)

    def start(self) -> list[Output]:
        """Say the tiles, how to deal them and where the rest go; begin round 1."""
        n, centre = len(self.players), self.centre
        aside = len(self.tiles) - n - centre
        out: list[Output] = [Say(f"skb.rules.{self.rule_name}", {"n": n}),
                             Say("skb.deal.cards", {"cards": self.rule.player_cards}),
                             Say("skb.setup.tiles", {"tiles": list(self.tiles)})]
        if not self.rule.witch_dealt and WITCH in self.tiles:  # special
            out.append(Say("skb.deal.knights_only"))
            out.append(Say("skb.deal.centre_from_rest", {"n": centre}))
        else:
            out.append(Say("skb.deal.each"))
            if centre:
                out.append(Say("skb.deal.centre.one" if centre == 1 else "skb.deal.centre", {"n": centre}))
        if aside:
            out.append(Say("skb.deal.aside.one" if aside == 1 else "skb.deal.aside", {"n": aside}))
        out.append(Say("skb.deal.look"))
        return [*out, self._round_line(), *self.prompt()]

    # ------------------------------------------------------------- the driver
    def _handle(self, inp: Input) -> list[Output]:
        if not (isinstance(inp, Tap) and inp.identity.startswith("player/")):
            self.state.conceding = None  # a concession must be confirmed at once (a refusal puts it back)
        return super()._handle(inp)

    def kind_of(self, inp: Input) -> tuple[str, str]:
        """``tile``, ``player`` or ``next``, with the tile, the player or
        "next"; anything else is refused whatever the step."""
        if isinstance(inp, Press):
            if inp.button != "next":
                raise Refusal("skb.refuse.not_now", f"the {inp.button} button does nothing here")
            return "next", "next"
        if not isinstance(inp, Tap):
            raise Refusal("skb.refuse.not_now", "this game sets no timers")
        identity = inp.identity
        if identity.startswith("player/"):
            player = identity.removeprefix("player/")
            if player not in self.players:
                raise Refusal("skb.refuse.unknown_player", f"{player} is not playing", player=player)
            return "player", player
        if identity.startswith("skb/"):
            if identity not in ALL_TILES:
                raise Refusal("skb.refuse.unknown_tile", f"{identity} is no Seven Knights tile")
            return "tile", identity
        raise Refusal("skb.refuse.not_this_game", f"{identity} is not part of Seven Knights")

    def _not_taken(self, kind: str, value: Any) -> Refusal:
        """The step's refusal, naming the step."""
        refusal = super()._not_taken(kind, value)
        return Refusal(refusal.key, refusal.reason, step=self.state.step)

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

    def public_label(self, inp: Input) -> str:
        """A tile tapped before the command phase is public only once the
        captain confirms it: until then the log and the page say "one of the
        skb/ tiles" (``skb/*``), whatever the tile."""
        if (isinstance(inp, Tap) and inp.identity.startswith("skb/")
                and getattr(self.STEPS[self.state.step].takes.get("tile"), "handler", None) is SevenKnights._early_tile):
            return EARLY_TILE
        return inp.label

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

    def _concede_hint(self) -> list[Output]:
        """How a bewitched captain concedes, said when it first becomes possible."""
        return [Say("skb.concede.hint")] if self.rule.witch_team else []

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

    def _witch_in_front(self) -> bool:
        """Must the witch tile have lain in front of a player?  It was the
        captain's, or it was on the table and there are no centre tiles, or
        every tile was dealt — whatever the round got to before a concession."""
        st = self.state
        return (st.captain_tile == WITCH or self.witch_dealt_to_a_player
                or (self.centre == 0 and WITCH in (*st.formation, *st.excluded)))

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

    def undo_scope(self, state: Any) -> Any:
        """DESIGN: ``back`` takes back the round's inputs one at a time, across
        its steps, until a verdict is given; a verdict (the witch revealed as
        the captain's tile, a concession, the formation judged) and a score
        are final, so from then on it reaches only within the step."""
        # the steps a score led to: the round's inputs before it are final
        if state.verdict is None and state.step not in SCORED:
            return state.round, "open"
        return state.round, state.step

    def _must_ask_for_the_captain(self) -> bool:
        """A bewitched captain hands the witch team the round whatever was
        laid (§4).  Without an election the captain is unknown; when it
        matters — a formation that holds and a witch team that is not empty —
        the captain taps their card (or the table presses next)."""
        st = self.state
        return (st.verdict is None and st.captain is None and not st.captain_checked
                and bool(st.witch_team) and formation_failure(st.formation, st.excluded) is None)

    def _witch_holder_missing(self) -> bool:
        """The witch tile lay in front of a player, and nobody who could hold
        it has tapped: a captain known to hold a knight cannot."""
        st = self.state
        if not (self.rule.witch_team and self._witch_in_front()):
            return False
        known_knight = st.captain if st.captain_tile in KNIGHTS else None
        return not [p for p in st.witch_team if p != known_knight]

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

    def _round_line(self) -> Say:
        st = self.state
        key = "skb.round.final" if st.round == ROUNDS else "skb.round.start"
        return Say(key, {"round": st.round, "player": self.players[st.start_seat]})

    # ------------------------------------------------------------- read side
    def public_view(self) -> dict[str, Any]:
        return views.public_view(self)  # the read side is views.py's

    def resume(self) -> list[Output]:
        return [Say(f"skb.resume.{self.state.step}", {"round": self.state.round}), *self.prompt()]

    # ---------------------------------------------------------------- result
    def result(self) -> Result:
        if not self.finished:
            raise RuntimeError("the game is not over yet")
        # the side each finished on: the last round's (a witch team is public once it has tapped)
        return Result(totals=dict(self.state.totals), winners=self.state.winners,
                      teams={p: "witch" if p in self.state.witch_team else "knights" for p in self.players})

    # ------------------------------------------------------------ the steps
    # step -> {input kind -> Take(handler, where it leads, its guard)}, and
    # what the step says (its prompt), whom it waits for and its headline.
    # Input kinds: "tile" (skb/...), "player" (player/<name> of this game) and
    # "next" (``kind_of``).  Nothing else changes the state.  A step without a
    # refusal of its own answers skb.refuse.not_now.
    STEPS: ClassVar[dict[str, Step]] = {
        "quest": Step({"tile": Take(_early_tile, ("captain_ready",)), "next": Take(_next_phase, ("questions",))},
                      prompt=views.quest_prompt, waits=views.start_player),
        "questions": Step({"tile": Take(_early_tile, ("captain_ready",)),
                           "next": Take(_next_phase, ("recommendation",))},
                          prompt=lambda g: [Say("skb.phase.questions", {"player": g.players[g.state.start_seat]})],
                          waits=views.start_player),
        "recommendation": Step({"tile": Take(_early_tile, ("captain_ready",)),
                                "player": Take(_recommend, ("recommendation", "command"), _recommended),
                                "next": Take(_skip_election, ("command",), _election_begun)},
                               prompt=views.recommendation_prompt, waits=views.recommending,
                               headline=views.recommendation_headline),
        "captain_ready": Step({"next": Take(_reveal_early_tile, ("formation", "witch_team"), _early_tile_refusal,
                                            blind=True)}, _READY,
                              prompt=lambda g: [Say("skb.captain.ready")], waits=views.the_captain),
        "command": Step({"tile": Take(_captain_tile, ("formation", "witch_team"), _own_tile_refusal),
                         "player": Take(_concede, ("command", "witch_team"), _concede_refusal)},
                        ("skb.refuse.captain_tile_first", "the captain taps their own tile first"),
                        prompt=views.command_prompt, waits=views.the_captain),
        "formation": Step({"tile": Take(_lay, (), _lay_refusal),
                           "player": Take(_concede, ("formation", "witch_team"), _concede_refusal),
                           "next": Take(_formation_laid, ("left_out", "witch_team", *SCORED), _captain_tile_missing)},
                          prompt=views.formation_prompt, waits=views.the_captain),
        "left_out": Step({"tile": Take(_leave_out, ("left_out", "witch_team", *SCORED), _new_tile_refusal)},
                         ("skb.refuse.left_out_missing", "tap the tiles left out of the formation"),
                         prompt=lambda g: [Say("skb.left_out.prompt", {"n": g.on_table - len(g.state.formation)
                                                                       - len(g.state.excluded)})],
                         waits=views.the_captain),
        "witch_team": Step({"player": Take(_join_witch_team, (), _joined),
                            "next": Take(_score, ("captain_check", *SCORED), _holder_refusal)},
                           prompt=lambda g: [Say("skb.witch_team.prompt")]),
        "captain_check": Step({"player": Take(_name_captain, ("witch_holder", *SCORED)),
                               "next": Take(_captain_not_bewitched, SCORED)},
                              prompt=lambda g: [Say("skb.captain_check.prompt")]),
        "witch_holder": Step({"player": Take(_name_witch_holder, SCORED, _holder_named)},
                             ("skb.refuse.witch_holder_must_tap", "the witch's holder must tap their player card"),
                             refuses=("next",), prompt=lambda g: [Say("skb.witch_holder.prompt")]),
        "round_over": Step({"next": Take(_next_round, ("quest",))},
                           prompt=lambda g: [Say("skb.round_over.prompt", {"round": g.state.round + 1})]),
        "game_over": Step({}, ("skb.refuse.game_over", "the game is over"),
                          prompt=lambda g: [Say("skb.game_over.winners", {"players": list(g.state.winners)})],
                          final=True),
    }


def _rule_name(rules: Sequence[str]) -> str | None:
    """The one rule card's name (``rules/advanced`` or ``advanced``), if any."""
    return rules[0].removeprefix("rules/") if rules else None


STEPS = SevenKnights.STEPS
