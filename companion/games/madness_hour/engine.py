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
nowhere public — not in a line, an event's input (``public_label``), the views.page.
No draws: the cards are shuffled on the table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from companion.core.countdown import next_point, spoken
from companion.core.engine import Ask, Engine, Goto, Outcome, Result, Setup, Step, Take
from companion.core.events import (
    CancelTimer,
    Input,
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
from companion.games.madness_hour import views
from companion.games.madness_hour.rules import (
    BATTLE_FIELDS,
    GIRLS,
    SETTINGS,
    SETUP,
    battle,
    battle_dead,
    options_from,
    turn_order,
    unanimous,
    winners,
)
from companion.games.madness_hour.show import SHOWS

GIRL_CARDS = tuple(f"mh/girl/{g}" for g in GIRLS)
SIDE_CARDS = ("mh/side/keep", "mh/side/kill")
STATE_CARDS = ("mh/state/sane", "mh/state/mad", "mh/state/dead")
CLIMAX = "mh/climax"
CLEARED_BY_0 = ("items", "mystic")  # battle entries a 0 takes back (strength is always needed)


@dataclass
class MadnessState:
    step: str = "girl"  # girl | card | explore | discussion | vote | battle | ending | done
    girl: str | None = None  # who plays the Girl (public)
    card: str | None = None  # human | evil-god: the secret, once known to the companion
    held: bool = False  # the companion holds her card (public: everyone saw the tap)
    turns: int = 0  # turns called so far (names the turn timers)
    turn_of: str | None = None  # whose turn was called last
    round: int = 0
    left_s: float = 0.0  # discussion time left at the last discussion timer
    pending: str | None = None  # the player card awaiting its side or state card
    votes: dict[str, str] = field(default_factory=dict)  # investigator → keep | kill
    dead: list[str] = field(default_factory=list)  # in the order they died
    totals: dict[str, int] = field(default_factory=dict)  # the battle's side totals, if counted
    revealed: list[str] = field(default_factory=list)  # mad investigators who revealed in battle
    girl_alive: bool | None = None
    states: dict[str, str] = field(default_factory=dict)  # investigator → sane | mad, at the ending
    winners: tuple[str, ...] = ()


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
    clock_lines: ClassVar[tuple[str, ...]] = ("mh.turn.warning", "mh.climax.discuss", "mh.climax.seconds_left",
                                              "mh.resume.discussion")
    state: MadnessState

    def __init__(self, setup: Setup) -> None:
        super().__init__(setup)
        self.opts = options_from(setup.options)  # checked by the config schema (settings)
        self.state = MadnessState()

    # ------------------------------------------------------------- lifecycle
    def start(self) -> list[Output]:
        return [*self._setup_lines(), *self.prompt()]

    def _setup_lines(self) -> list[Output]:
        exploration, rooms = SETUP[len(self.players)]
        return [Say("mh.setup.cards", {"count": len(self.players), "exploration": exploration, "rooms": rooms}),
                Say("mh.setup.characters")]

    def result(self) -> Result:
        s = self.state
        if not self.finished:
            raise RuntimeError("the game is not finished")
        roles = {p: ("dead" if p in s.dead else s.states[p]) for p in self.investigators}
        roles[self._girl] = f"girl/{s.card}"
        return Result({p: int(p in s.winners) for p in self.players}, s.winners,
                      {p: roles[p] for p in self.players},
                      teams={p: "winners" if p in s.winners else "losers" for p in self.players})

    @property
    def _girl(self) -> str:
        assert self.state.girl is not None
        return self.state.girl

    @property
    def investigators(self) -> tuple[str, ...]:
        return tuple(p for p in self.players if p != self.state.girl)

    @property
    def living(self) -> tuple[str, ...]:
        return tuple(p for p in self.investigators if p not in self.state.dead)

    def kind_of(self, inp: Input) -> tuple[str, Any]:
        """As the base has it; an ``mh/`` identity that is no card of this game is refused in every step."""
        if isinstance(inp, Tap) and inp.identity.startswith("mh/") and inp.identity not in self.components:
            raise Refusal("mh.refuse.unknown_card", f"{inp.identity} is no Madness Hour card", card=inp.identity)
        return super().kind_of(inp)

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

    def _turn_timer(self) -> list[Output]:
        o, n = self.opts, self.state.turns
        if not o.turn_s:
            return []
        if o.turn_warning_s and o.turn_warning_s < o.turn_s:
            return [SetTimer(f"turn:{n}:warn", o.turn_s - o.turn_warning_s)]
        return [SetTimer(f"turn:{n}:up", o.turn_s)]

    def _cancel_turn(self) -> list[Output]:
        n = self.state.turns
        return [CancelTimer(f"turn:{n}:warn"), CancelTimer(f"turn:{n}:up")] if self.opts.turn_s and n else []

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

    def _discussion_timer(self) -> SetTimer:
        left = self.state.left_s
        return SetTimer("discussion", left - next_point(left, self.opts.discussion_s, self.opts.warnings_s))

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

    def _ending_missing(self) -> list[str]:
        return [p for p in self.living if p not in self.state.states and p not in self.state.revealed]

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

    # --------------------------------------------------------------- read side
    def public_label(self, inp: Input) -> str:
        """A Girl card is ``mh/girl/*`` in public until the verdict has named it."""
        if isinstance(inp, Tap) and inp.identity in GIRL_CARDS and not self.finished:
            return "mh/girl/*"
        return inp.label

    # the views are views.py's
    def public_view(self) -> dict[str, Any]:
        return views.public_view(self)

    def private_view(self, player: str) -> dict[str, Any]:
        return views.private_view(self, player)

    def page(self, player: str) -> list[tuple[str, dict[str, Any]]]:
        return views.page(self, player)

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
        "girl": Step({"tap": Take(_pick_girl, ("card",), _girl_refusal)},
                     ("mh.refuse.girl_first", "the Girl taps her player card first"),
                     prompt=lambda g: [Say("mh.girl.prompt")],
                     resume=lambda g: [Say("mh.resume.start"), *g._setup_lines(), *g.prompt()]),
        "card": Step({"tap": Take(_card, ("explore",), _card_refusal), "next": Take(_keep_card, ("explore",))},
                     ("mh.refuse.card", "tap your Girl card face down, or press next to keep it"),
                     prompt=lambda g: [Say("mh.girl.card_prompt", {"player": g.state.girl})],
                     resume=views.resume_step, waits=lambda g: [g._girl]),
        "explore": Step({"next": Take(_call_turn), "timer": Take(_turn_timer_fired, (), _turn_timer_refusal),
                         "tap": Take(_explore, ("explore", "discussion", "ending"), _explore_refusal)},
                        ("mh.refuse.explore", "press next for the next turn, or tap the climax card"),
                        prompt=lambda g: [Say("mh.explore.prompt")], resume=views.resume_explore,
                        waits=lambda g: [g.state.turn_of] if g.state.turn_of else []),
        "discussion": Step({"timer": Take(_discussion_tick, ("discussion", "vote"), _discussion_timer_refusal),
                            "next": Take(_end_discussion, ("vote",))},
                           ("mh.refuse.discussion", "the discussion is on: press next to end it"),
                           prompt=lambda g: [Say("mh.climax.prompt")], resume=views.resume_discussion,
                           waits=lambda g: list(g.players), headline=views.discussion_headline),
        "vote": Step({"tap": Take(_vote, ("vote", "battle", "ending"), _vote_refusal)},
                     ("mh.refuse.vote", "tap your player card, then keep or kill"),
                     prompt=views.vote_prompt, resume=views.resume_step, waits=views.vote_waits, headline=views.vote_headline),
        "battle": Step({"submit": Take(_fight, (), _fight_refusal, asks=_battle_asks),
                        "next": Take(_battle_counted, ("ending",), _strength_missing),
                        "tap": Take(_battle_side, ("ending",), _side_refusal)},
                       ("mh.refuse.battle",
                        "send your strengths from your pages and press next, or tap the winning side"),
                       prompt=lambda g: [Say("mh.battle.prompt")], resume=views.resume_step,
                       waits=lambda g: [p for p in g.players if p in g.state.votes]),  # the voters fight
        "ending": Step({"tap": Take(_ending, (), _ending_refusal), "next": Take(_ending_done, ("done",),
                                                                               _ending_incomplete)},
                       ("mh.refuse.ending", "tap the Girl's card and each survivor's state"),
                       prompt=views.ending_prompt, resume=views.resume_step, waits=views.ending_waits, headline=views.ending_headline),
        "done": Step({}, ("mh.refuse.finished", "the game is over"),
                     prompt=lambda g: [Say("mh.verdict.winners", {"players": list(g.state.winners)})
                                       if g.state.winners else Say("mh.verdict.no_winners")],
                     resume=views.resume_step, final=True),
    }


def _dead_card(inp: Tap) -> bool:
    """Is ``inp`` a card of marking a death: a player's card, or ``mh/state/dead``?"""
    return inp.identity.startswith("player/") or inp.identity == "mh/state/dead"
