"""Madness Hour (マッドネスアワー): the rule engine.

Steps, and what each takes (everything else is refused and changes nothing):

    girl        the Girl's ``player/<name>``
    card        her Girl card tapped face down (``mh/girl/human`` or ``mh/girl/evil-god``:
                answered the same way, named in public as ``mh/girl/*``) or `next` (she keeps it)
    explore     `next` calls the next turn (the Girl, then the investigators clockwise; timers
                ``turn:<n>:warn`` / ``turn:<n>:up`` when ``turn_s`` is set); ``player/<name>``
                then ``mh/state/dead`` marks an investigator who died; ``mh/climax`` → discussion
                (every investigator dead: no discussion, no vote — the Girl walks out alive)
    discussion  timer ``discussion`` (a tick each minute and at each warning); `next` ends it early
    vote        each living investigator's ``player/<name>`` then ``mh/side/keep|kill`` (changeable
                until all have voted), or then ``mh/state/dead`` (their vote goes); it closes as
                soon as every living investigator has voted: unanimous → ending, else battle;
                nobody left alive → the Girl walks out alive
    battle      submits ``strength``, ``items``, ``mystic`` (mystic ≥ 1 reveals madness; a 0 for
                items or mystic clears it) from the voters' pages, then `next`; or the table taps
                the winning side's card
    ending      the Girl's card (unless held), each survivor's ``player/<name>`` then
                ``mh/state/sane|mad`` (``mh/state/dead`` only for one who did not vote: a voter
                lives unless their side lost), then `next` → ``mh_result``
    done        nothing

The Girl's card is the one secret: until ``done`` it is in ``state.card`` and
nowhere public — not in a line, an event's input (``public_label``), the
table's view (``views.view``: a seat's alone, the Girl's while it is held).
The game is composed of its state (``state``), its steps (the table below;
the handlers are ``steps``' functions) and that one read function.
No draws: the cards are shuffled on the table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from companion.core.countdown import TIME_FORMS
from companion.core.engine import Engine, Outcome, Result, Setup, Step, Take
from companion.core.events import (
    Input,
    Output,
    Refusal,
    Say,
    Tap,
    TimerFired,
)
from companion.games.madness_hour import steps, views
from companion.games.madness_hour.rules import (
    GIRLS,
    SETTINGS,
    SETUP,
    options_from,
)
from companion.games.madness_hour.show import SHOWS
from companion.games.madness_hour.state import (
    CLIMAX,
    GIRL_CARDS,
    SIDE_CARDS,
    STATE_CARDS,
    MadnessState,
    girl,
)


class MadnessHour(Engine):
    game: ClassVar[str] = "madness-hour"
    tag_prefixes: ClassVar[tuple[str, ...]] = ("mh/",)
    components: ClassVar[tuple[str, ...]] = (*GIRL_CARDS, CLIMAX, *SIDE_CARDS, *STATE_CARDS)
    shows: ClassVar[Mapping[str, Callable[[Mapping[str, Any]], str]]] = SHOWS
    settings: ClassVar[Mapping[str, Any]] = SETTINGS
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 5
    no_points: ClassVar[bool] = True  # the winners win; no points (the export)
    unknown_player: ClassVar[str] = "mh.refuse.unknown_player"
    outcomes: ClassVar[tuple[Outcome, ...]] = (Outcome("mh_result", "girl", GIRLS),)  # the Girl's card decides the sides
    clock_lines: ClassVar[tuple[str, ...]] = tuple(key + form for key in (
        "mh.turn.warning", "mh.climax.discuss", "mh.climax.seconds_left", "mh.resume.discussion") for form in TIME_FORMS)
    state: MadnessState

    def __init__(self, setup: Setup) -> None:
        super().__init__(setup)
        self.opts = options_from(setup.options)  # checked by the config schema (settings)
        self.state = MadnessState()

    def result(self) -> Result:
        s = self.state
        if not self.finished:
            raise RuntimeError("the game is not finished")
        roles = {p: ("dead" if p in s.dead else s.states[p]) for p in self.investigators}
        roles[girl(self)] = f"girl/{s.card}"
        return Result({p: int(p in s.winners) for p in self.players}, s.winners,
                      {p: roles[p] for p in self.players},
                      teams={p: "winners" if p in s.winners else "losers" for p in self.players})

    @property
    def investigators(self) -> tuple[str, ...]:
        return tuple(p for p in self.players if p != self.state.girl)

    @property
    def living(self) -> tuple[str, ...]:
        return tuple(p for p in self.investigators if p not in self.state.dead)

    # ------------------------------------------------------------- lifecycle
    def start(self) -> list[Output]:
        return [*self._setup_lines(), *self.prompt()]

    def _setup_lines(self) -> list[Output]:
        exploration, rooms = SETUP[len(self.players)]
        return [Say("mh.setup.cards", {"count": len(self.players), "exploration": exploration, "rooms": rooms}),
                Say("mh.setup.characters")]

    def kind_of(self, inp: Input) -> tuple[str, Any]:
        """As the base has it; an ``mh/`` identity that is no card of this game is refused in every step."""
        if isinstance(inp, Tap) and inp.identity.startswith("mh/") and inp.identity not in self.components:
            raise Refusal("mh.refuse.unknown_card", f"{inp.identity} is no Madness Hour card", card=inp.identity)
        return super().kind_of(inp)

    # --------------------------------------------------------------- read side
    def public_label(self, inp: Input) -> str:
        """A Girl card is ``mh/girl/*`` in public until the verdict has named it."""
        if isinstance(inp, Tap) and inp.identity in GIRL_CARDS and not self.finished:
            return "mh/girl/*"
        return inp.label

    view = views.view  # the one read function: what the table or a seat may see

    # ---------------------------------------------------------------- helpers
    def _not_taken(self, kind: str, inp: Any) -> Refusal:
        """A stale timer, a Girl card once she has one, a side card before the
        vote, or this step's own explanation; once it is over, only that."""
        if self.finished:
            return super()._not_taken(kind, inp)
        if isinstance(inp, TimerFired):
            return Refusal("mh.refuse.stale_timer", f"timer {inp.name} is not expected now", timer=inp.name)
        if isinstance(inp, Tap) and inp.identity in GIRL_CARDS:
            return Refusal("mh.refuse.girl_card_twice", "the Girl's card is only taken once, at the start")
        # the steps before the vote, which a side card would otherwise get "not now" from
        if isinstance(inp, Tap) and inp.identity in SIDE_CARDS and self.state.step in ("girl", "card", "explore",
                                                                                       "discussion"):
            return Refusal("mh.refuse.vote_before_climax", "the vote comes after the climax discussion")
        return super()._not_taken(kind, inp)

    # ------------------------------------------------------------ the steps
    # step -> {input kind -> Take(handler, where it leads, its guard)}, the
    # step's own refusal for the rest, and what the step says (its prompt, its
    # lines after a restart), whom it waits for and its headline (the module's
    # docstring tells the story).
    STEPS: ClassVar[dict[str, Step]] = {
        "girl": Step({"tap": Take(steps.pick_girl, ("card",), steps.girl_refusal)},
                     ("mh.refuse.girl_first", "the Girl taps her player card first"),
                     prompt=lambda g: [Say("mh.girl.prompt")],
                     resume=lambda g: [Say("mh.resume.start"), *g._setup_lines(), *g.prompt()]),
        "card": Step({"tap": Take(steps.card, ("explore",), steps.card_refusal), "next": Take(steps.keep_card, ("explore",))},
                     ("mh.refuse.card", "tap your Girl card face down, or press next to keep it"),
                     prompt=lambda g: [Say("mh.girl.card_prompt", {"player": g.state.girl})],
                     resume=views.resume_step, waits=lambda g: [girl(g)]),
        "explore": Step({"next": Take(steps.call_turn), "timer": Take(steps.turn_timer_fired, (), steps.turn_timer_refusal),
                         "tap": Take(steps.explore, ("explore", "discussion", "ending"), steps.explore_refusal)},
                        ("mh.refuse.explore", "press next for the next turn, or tap the climax card"),
                        prompt=lambda g: [Say("mh.explore.prompt")], resume=steps.resume_explore,
                        waits=lambda g: [g.state.turn_of] if g.state.turn_of else [], headline=views.explore_headline),
        "discussion": Step({"timer": Take(steps.discussion_tick, ("discussion", "vote"), steps.discussion_timer_refusal),
                            "next": Take(steps.end_discussion, ("vote",))},
                           ("mh.refuse.discussion", "the discussion is on: press next to end it"),
                           prompt=lambda g: [Say("mh.climax.prompt")], resume=steps.resume_discussion,
                           waits=lambda g: list(g.players), headline=views.discussion_headline),
        "vote": Step({"tap": Take(steps.vote, ("vote", "battle", "ending"), steps.vote_refusal)},
                     ("mh.refuse.vote", "tap your player card, then keep or kill"),
                     prompt=views.vote_prompt, resume=views.resume_step, waits=views.vote_waits, headline=views.vote_headline),
        "battle": Step({"submit": Take(steps.fight, (), steps.fight_refusal, asks=steps.battle_asks),
                        "next": Take(steps.battle_counted, ("ending",), steps.strength_missing),
                        "tap": Take(steps.battle_side, ("ending",), steps.side_refusal)},
                       ("mh.refuse.battle",
                        "send your strengths from your pages and press next, or tap the winning side"),
                       prompt=lambda g: [Say("mh.battle.prompt")], resume=views.resume_step,
                       waits=lambda g: [p for p in g.players if p in g.state.votes]),  # the voters fight
        "ending": Step({"tap": Take(steps.ending, (), steps.ending_refusal), "next": Take(steps.ending_done, ("done",),
                                                                               steps.ending_incomplete)},
                       ("mh.refuse.ending", "tap the Girl's card and each survivor's state"),
                       prompt=views.ending_prompt, resume=views.resume_step, waits=views.ending_waits, headline=views.ending_headline),
        "done": Step({}, ("mh.refuse.finished", "the game is over"),
                     prompt=lambda g: [Say("mh.verdict.winners", {"players": list(g.state.winners)})
                                       if g.state.winners else Say("mh.verdict.no_winners")],
                     resume=views.resume_step, final=True),
    }
