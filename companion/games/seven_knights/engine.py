"""Seven Knights Bewitched (ミュルマミウスの虜): the table flow as a pure state machine.

The game is composed of its state (``state``), its steps — ``STEPS``, at the
end of the class, says step by step what the table may do, which handler of
``steps`` takes it and where it leads — and one read function
(``views.view``).  An input a step does not take is refused with a
speakable reason and changes nothing.  The judgements (tile sets, election,
verdict, points) are pure functions in ``rules``.

Hidden information (§ Table talk): the engine never learns who holds which
tile, and it only learns the witch team when its members tap their cards at
scoring, so no line before then can give either away.  It also never says
what it could deduce (e.g. that the witch must be in the centre).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from companion.core.engine import Engine, Outcome, Result, Setup, Step, Take
from companion.core.events import Input, Output, Press, Refusal, Say, Tap
from companion.games.seven_knights import steps, views
from companion.games.seven_knights.rules import (
    ALL_TILES,
    RULE_SETS,
    SETTINGS,
    WINNERS,
    WITCH,
    default_rule_set,
    options_from,
    tile_set,
)
from companion.games.seven_knights.show import SHOWS
from companion.games.seven_knights.state import (
    _READY,
    EARLY_TILE,
    GAME,
    SCORED,
    KnightsState,
    round_line,
    rule_name,
    witch_in_front,
)


class SevenKnights(Engine):
    game: ClassVar[str] = GAME
    tag_prefixes: ClassVar[tuple[str, ...]] = ("skb/",)
    components: ClassVar[tuple[str, ...]] = ALL_TILES
    shows: ClassVar[Mapping[str, Callable[[Mapping[str, Any]], str]]] = SHOWS
    settings: ClassVar[Mapping[str, Any]] = SETTINGS
    min_players: ClassVar[int] = 3
    max_players: ClassVar[int] = 8
    not_now: ClassVar[str] = "skb.refuse.not_now"
    state: KnightsState

    # each round's verdict is its formation's; the game's, its end
    outcomes: ClassVar[tuple[Outcome, ...]] = (Outcome("formation", "verdict", WINNERS), Outcome("game_over"))

    # ------------------------------------------------------------------ setup
    def __init__(self, setup: Setup) -> None:
        super().__init__(setup)
        self.check_setup(setup.players, setup.rules, setup.options)
        self.options = options_from(setup.options)  # checked by the config schema (settings)
        self.rule_name = rule_name(setup.rules) or default_rule_set(len(self.players))
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
        name = rule_name(rules)
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
        return [*out, round_line(self), *self.prompt()]

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

    def public_label(self, inp: Input) -> str:
        """A tile tapped before the command phase is public only once the
        captain confirms it: until then the log and the page say "one of the
        skb/ tiles" (``skb/*``), whatever the tile."""
        if (isinstance(inp, Tap) and inp.identity.startswith("skb/")
                and getattr(self.STEPS[self.state.step].takes.get("tile"), "handler", None) is steps.early_tile):
            return EARLY_TILE
        return inp.label

    # ------------------------------------------------------------- read side
    view = views.view  # the one read function: what the table or a seat may see

    def resume(self) -> list[Output]:
        return [Say(f"skb.resume.{self.state.step}", {"round": self.state.round}), *self.prompt()]

    def undo_scope(self, state: Any) -> Any:
        """DESIGN: ``back`` takes back the round's inputs one at a time, across
        its steps, until a verdict is given; a verdict (the witch revealed as
        the captain's tile, a concession, the formation judged) and a score
        are final, so from then on it reaches only within the step."""
        # the steps a score led to: the round's inputs before it are final
        if state.verdict is None and state.step not in SCORED:
            return state.round, "open"
        return state.round, state.step

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
        "quest": Step({"tile": Take(steps.early_tile, ("captain_ready",)), "next": Take(steps.next_phase, ("questions",))},
                      prompt=views.quest_prompt, waits=views.start_player),
        "questions": Step({"tile": Take(steps.early_tile, ("captain_ready",)),
                           "next": Take(steps.next_phase, ("recommendation",))},
                          prompt=lambda g: [Say("skb.phase.questions", {"player": g.players[g.state.start_seat]})],
                          waits=views.start_player),
        "recommendation": Step({"tile": Take(steps.early_tile, ("captain_ready",)),
                                "player": Take(steps.recommend, ("recommendation", "command"), steps.recommended),
                                "next": Take(steps.skip_election, ("command",), steps.election_begun)},
                               prompt=views.recommendation_prompt, waits=views.recommending,
                               headline=views.recommendation_headline),
        "captain_ready": Step({"next": Take(steps.reveal_early_tile, ("formation", "witch_team"), steps.early_tile_refusal,
                                            blind=True)}, _READY,
                              prompt=lambda g: [Say("skb.captain.ready")], waits=views.the_captain),
        "command": Step({"tile": Take(steps.captain_tile, ("formation", "witch_team"), steps.own_tile_refusal),
                         "player": Take(steps.concede, ("command", "witch_team"), steps.concede_refusal)},
                        ("skb.refuse.captain_tile_first", "the captain taps their own tile first"),
                        prompt=views.command_prompt, waits=views.the_captain),
        "formation": Step({"tile": Take(steps.lay, (), steps.lay_refusal),
                           "player": Take(steps.concede, ("formation", "witch_team"), steps.concede_refusal),
                           "next": Take(steps.formation_laid, ("left_out", "witch_team", *SCORED), steps.captain_tile_missing)},
                          prompt=views.formation_prompt, waits=views.the_captain),
        "left_out": Step({"tile": Take(steps.leave_out, ("left_out", "witch_team", *SCORED), steps.new_tile_refusal)},
                         ("skb.refuse.left_out_missing", "tap the tiles left out of the formation"),
                         prompt=lambda g: [Say("skb.left_out.prompt", {"n": g.on_table - len(g.state.formation)
                                                                       - len(g.state.excluded)})],
                         waits=views.the_captain),
        "witch_team": Step({"player": Take(steps.join_witch_team, (), steps.joined),
                            "next": Take(steps.score, ("captain_check", *SCORED), steps.holder_refusal)},
                           # "if there is nobody" only where nobody can be: the witch may lie aside or in the centre
                           prompt=lambda g: [Say("skb.witch_team.prompt_holder" if witch_in_front(g)
                                                 else "skb.witch_team.prompt")]),
        "captain_check": Step({"player": Take(steps.name_captain, ("witch_holder", *SCORED)),
                               "next": Take(steps.captain_not_bewitched, SCORED)},
                              prompt=lambda g: [Say("skb.captain_check.prompt")]),
        "witch_holder": Step({"player": Take(steps.name_witch_holder, SCORED, steps.holder_named)},
                             ("skb.refuse.witch_holder_must_tap", "the witch's holder must tap their player card"),
                             refuses=("next",), prompt=lambda g: [Say("skb.witch_holder.prompt")]),
        "round_over": Step({"next": Take(steps.next_round, ("quest",))},
                           prompt=lambda g: [Say("skb.round_over.prompt", {"round": g.state.round + 1})]),
        "game_over": Step({}, ("skb.refuse.game_over", "the game is over"),
                          prompt=lambda g: [Say("skb.game_over.winners", {"players": list(g.state.winners)})],
                          final=True),
    }


STEPS = SevenKnights.STEPS
