"""One Night Werewolf (ワンナイト人狼): the rule engine.

Steps, and what each takes (everything else is refused and changes nothing):

    deal        `next` → night, asking for the secret draw ``onw.jitter``
    night       the draw (then the first beat), then only its own timers
                (``night:<role>:wake|sleep``, ``night:morning``); eyes closed:
                every tap and button is refused, the script never reacts
    discussion  timer ``discussion`` (a tick each minute and at each warning), `next` ends early
    vote        timers ``vote:1`` … ``vote:3`` (one, two, three!) → count; a phone's
                sealed ``vote`` (submit) from the call on
    count       optionally the vote count: each player's ``player/<name>`` then the
                ``player/<name>`` they point at, or their phone's ``vote``; once every
                player has voted, the count → reveal; a first role card shown skips it
    reveal      each ``player/<name>`` then that
                player's final ``onw/<role>/<n>``; once all have, the executed players'
                ``player/<name>`` (unless counted), then `next` → done (or hunter);
                the doppelganger's holder shows ``onw/doppelganger/1``, then any
                card of the role it copied
    hunter      a dead hunter whose vote was not counted: the ``player/<name>`` they
                voted for (who dies too; a hunter so shot is asked in turn) → done
    done        nothing

Before the start, the table may tap the deck's role cards (``setup_card``,
``check_cards``).  The roles and editions are ``roles``' entries; the options
and the deck ``rules``', the night ``night``'s, the verdict ``verdict``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from companion.core.countdown import next_point
from companion.core.countdown import spoken as number
from companion.core.engine import Ask, Goto, Outcome, Result, Setup, Step, Take
from companion.core.events import (
    CancelTimer,
    Drawn,
    Input,
    Output,
    Press,
    Refusal,
    Say,
    SetTimer,
    Submit,
    Tap,
    TimerFired,
)
from companion.games.one_night import views
from companion.games.one_night.night import jitter_draw, night_script, turn_start
from companion.games.one_night.reveal import OneNightState, Reveal
from companion.games.one_night.roles import EDITIONS, ROLES, Registered, card_ids, every_card, spoken
from companion.games.one_night.rules import (
    VOTE_COUNT,
    card_problem,
    deck_for,
    minutes_line,
    options_from,
    settings_for,
    tapped_deck,
    tapped_lines,
    warning_line,
)
from companion.games.one_night.show import SHOWS
from companion.games.one_night.verdict import WINNING_TEAMS, acting


class OneNight(Reveal):
    game: ClassVar[str] = "one-night"
    tag_prefixes: ClassVar[tuple[str, ...]] = ("onw/",)
    components = Registered(every_card)  # every role's cards, a role added from a module of its own too
    shows: ClassVar[Mapping[str, Callable[[Mapping[str, Any]], str]]] = SHOWS
    settings = Registered(lambda: settings_for(every_card()))  # a deck is bounded by the cards
    min_players: ClassVar[int] = 3
    max_players: ClassVar[int] = max(e.players[1] for e in EDITIONS.values())  # the edition's, checked at setup
    setup_cards: ClassVar[bool] = True  # the table taps the deck's role cards before it starts
    no_points: ClassVar[bool] = True  # a team wins (the export)
    unknown_player: ClassVar[str] = "onw.refuse.unknown_player"
    outcomes: ClassVar[tuple[Outcome, ...]] = (Outcome("onw_result", "winning_team", WINNING_TEAMS),)
    clock_lines: ClassVar[tuple[str, ...]] = tuple(f"onw.{k}" for k in (
        "discussion.start", "discussion.start_one", "discussion.one_minute_left", "discussion.minutes_left",
        "discussion.seconds_left", "resume.discussion"))
    state: OneNightState

    def __init__(self, setup: Setup) -> None:
        super().__init__(setup)
        self.opts = options_from(setup.options, setup.rules)  # checked by the config schema (settings)
        self.edition = self.opts.edition
        self.deck = deck_for(len(self.players), self.opts, setup.cards)
        self.cards = card_ids(self.deck)
        self.draw = jitter_draw(self.deck, self.opts)
        self.state = OneNightState()
        self._script: tuple[tuple[int, ...], Any] = ((), ())

    @property
    def script(self) -> Any:
        """The night, once its jitter is drawn (a function of the draw alone)."""
        jitter = tuple(self.state.jitter_ms or ())
        if self._script[0] != jitter:
            self._script = (jitter, night_script(self.deck, self.opts, jitter))
        return self._script[1]

    @classmethod
    def check_setup(cls, players: Sequence[str], rules: Sequence[str],
                    options: Mapping[str, Any]) -> None:
        """Refuses a player count outside the edition's (3–7, 3–10) and a deck
        that cannot be dealt (the config schema refused bad options when it
        was loaded)."""
        super().check_setup(players, rules, options)
        opts = options_from(options, rules)
        low, high = EDITIONS[opts.edition].players
        if not low <= len(players) <= high:
            raise Refusal("refuse.player_count", f"{opts.edition} needs {low} to {high} players, not {len(players)}",
                          count=len(players), low=low, high=high)
        deck_for(len(players), opts)

    @classmethod
    def setup_board(cls, rules: Sequence[str], options: Mapping[str, Any],
                    cards: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
        """The deck as tapped so far, on every page while it is built."""
        return views.deck_lines(options_from(options, rules).edition, tapped_deck(cards))

    @classmethod
    def check_cards(cls, players: Sequence[str], rules: Sequence[str], options: Mapping[str, Any],
                    cards: Sequence[str]) -> None:
        """The tapped deck (none: the edition's default) for these players:
        a lone mason, too few or too many cards are refused, naming them."""
        if cards:
            deck_for(len(players), options_from(options, rules), cards)

    @classmethod
    def more_lines(cls) -> tuple[Any, ...]:
        """The lines of roles added from outside the game's folder."""
        return tuple(r.lines for r in ROLES.values() if r.lines is not None)

    @classmethod
    def known_rules(cls) -> tuple[str, ...]:
        return tuple(e for e in EDITIONS if e != "jinrou")

    @classmethod
    def setup_card(cls, rules: Sequence[str], options: Mapping[str, Any], cards: Sequence[str],
                   card: str) -> list[Output]:
        """A role card tapped into the deck before the start: counted aloud,
        or refused with the reason (a role the edition lacks, a card too many
        for its set, the same card twice)."""
        opts = options_from(options, rules)
        if (refusal := card_problem(EDITIONS[opts.edition], cards, card)) is not None:
            raise refusal
        return list(tapped_lines(opts.edition, [*cards, card]))

    # ------------------------------------------------------------- lifecycle
    def start(self) -> list[Output]:
        return [*self._deck_lines(), *self.prompt()]

    def _deck_lines(self) -> list[Output]:
        total = sum(self.deck.values())
        return [
            Say("onw.deck.intro", {"count": len(self.players), "cards": total}),
            *(Say("onw.deck.role", {"role": spoken(role, self.edition), "count": n}) for role, n in self.deck.items()),
            Say("onw.deck.centre", {"count": total - len(self.players)}),
        ]

    def public_view(self) -> dict[str, Any]:
        return views.public_view(self)  # the read side is views.py's

    def board(self) -> list[tuple[str, dict[str, Any]]]:
        return views.board(self)

    def private_view(self, player: str) -> dict[str, Any]:
        return views.private_view(self, player)

    def page(self, player: str) -> list[tuple[str, dict[str, Any]]]:
        return views.page(self, player)

    def public_label(self, inp: Input) -> str:
        label = self._vote_label(inp)
        return inp.label if label is None else label

    def result(self) -> Result:
        v = self.state.verdict
        if v is None:
            raise RuntimeError("the game is not finished")
        roles = self.final_roles()
        # a tanner is a team of one (each tanner who dies wins): no team, so a
        # league rates each as a side alone, never two tanners as one team
        return Result({p: int(p in v.winners) for p in self.players}, v.winners, roles,
                      teams={p: acting(r).team for p, r in roles.items() if not acting(r).dies_to_win})

    # ------------------------------------------------------------------ deal
    def _nightfall(self, _: Press) -> list[Output]:
        return [self.draw]  # the night starts once its jitter is drawn

    # ----------------------------------------------------------------- night
    # The jitter draw, then only the script's own next beat — or, after a
    # restart replayed a turn, a beat of that turn again.  Anything the table
    # does is refused the same way, so neither the narration nor the refusals
    # tell anything.
    def _jitter_refusal(self, inp: Drawn) -> Refusal | None:
        if inp.name != self.draw.name or self.state.jitter_ms is not None:
            return self._not_taken("draw", inp)
        if not self.draw.accepts(inp.value):
            return Refusal("refuse.bad_draw", f"{inp.value!r} cannot be the draw {inp.name}")
        return None

    def _jitter(self, inp: Drawn) -> list[Output] | Goto:
        self.state.jitter_ms = list(inp.value)
        return self._night_beat(0)

    def _night_timer_refusal(self, inp: TimerFired) -> Refusal | None:
        names = [seg.name for seg in self.script]
        at = self.state.night_at
        if inp.name in names and turn_start(self.script, at) < names.index(inp.name) <= at + 1:
            return None
        return Refusal("onw.refuse.stale_timer", f"timer {inp.name} is not expected now", timer=inp.name)

    def _night_timer(self, inp: TimerFired) -> list[Output] | Goto:
        return self._night_beat([seg.name for seg in self.script].index(inp.name))

    def _night_beat(self, at: int) -> list[Output] | Goto:
        self.state.night_at = at
        beat = self.script[at]
        if at == len(self.script) - 1:
            return self._begin_discussion().after(*beat.outputs)
        return [*beat.outputs, SetTimer(self.script[at + 1].name, beat.delay)]

    # ------------------------------------------------------------ discussion
    def _begin_discussion(self) -> Goto:
        self.state.left_s = self._total_s
        return Goto("discussion", [minutes_line("onw.discussion.start", self._total_s), self._discussion_timer()])

    def _discussion_timer(self) -> SetTimer:
        left = self.state.left_s
        return SetTimer("discussion", left - next_point(left, self._total_s, self.opts.warnings_s))

    @property
    def _total_s(self) -> float:
        return self.opts.discussion_min * 60

    def _discussion_timer_refusal(self, inp: TimerFired) -> Refusal | None:
        return self._not_taken("timer", inp) if inp.name != "discussion" or self.state.paused else None

    def _discussion_tick(self, inp: TimerFired) -> list[Output] | Goto:
        s = self.state
        left = s.left_s = next_point(s.left_s, self._total_s, self.opts.warnings_s)
        if left == 0 and s.extra_s:  # the minutes asked for meanwhile, now
            s.left_s, s.extra_s = s.extra_s, 0.0
            return [minutes_line("onw.discussion.extended", s.left_s), self._discussion_timer()]
        if left == 0:
            return self._begin_vote().after(Say("onw.discussion.time_up"))
        said = [warning_line(left)] if left in self.opts.warnings_s else []
        return [*said, self._discussion_timer()]

    def _discussion_submit_refusal(self, inp: Submit) -> Refusal | None:
        asks = self._discussion_asks(inp.player)
        if inp.field not in asks:
            return Refusal("onw.refuse.discussion", f"{inp.field} is not asked now")
        if problem := asks[inp.field].check(inp.value):
            return Refusal("onw.refuse.discussion", f"{inp.field} {problem}")
        return None

    def _discussion_asks(self, player: str) -> dict[str, Ask]:
        """From any page: one more minute; pause (1) or go on (0)."""
        go_on = 0 if self.state.paused else 1
        return {"more_time": Ask("onw.field.more_time", 1, 1), "pause": Ask("onw.field.pause", go_on, go_on)}

    def _discussion_submit(self, inp: Submit) -> list[Output]:
        """+1 min (said aloud, added when the time is up), or a pause: the
        timer stops, and goes on from the last minute the journal holds."""
        s = self.state
        if inp.field == "more_time":
            s.extra_s += 60
            return [Say("onw.discussion.more_time", {"player": inp.player})]
        s.paused = bool(inp.value)
        if s.paused:
            return [CancelTimer("discussion"), Say("onw.discussion.paused", {"player": inp.player})]
        return [Say("onw.discussion.go_on", {"seconds": number(s.left_s + s.extra_s)}), self._discussion_timer()]

    def _end_discussion(self, _: Press) -> Goto:
        return self._begin_vote().after(CancelTimer("discussion"), Say("onw.discussion.ended"))

    # ------------------------------------------------------------------ vote
    def _begin_vote(self) -> Goto:
        self.state.vote_at = 0
        return Goto("vote", self._vote_call())

    def _vote_call(self) -> list[Output]:
        return [Say("onw.vote.call"), SetTimer("vote:1", 2 * self.opts.count_s * self.opts.pace)]

    def _count_refusal(self, inp: TimerFired) -> Refusal | None:
        """The count; a restart replays it from the call, so any number up to the
        next one is taken (the journal then holds some twice)."""
        n = inp.name.removeprefix("vote:")
        if not (inp.name.startswith("vote:") and n.isdigit()
                and 1 <= int(n) <= min(self.state.vote_at + 1, len(VOTE_COUNT))):
            return self._not_taken("timer", inp)
        return None

    def _count(self, inp: TimerFired) -> list[Output] | Goto:
        at = self.state.vote_at = int(inp.name.removeprefix("vote:"))
        said = Say(f"onw.vote.{VOTE_COUNT[at - 1]}")
        if at < len(VOTE_COUNT):
            return [said, SetTimer(f"vote:{at + 1}", self.opts.count_s * self.opts.pace)]
        if not self._to_vote():  # every phone has voted: the count, at once
            return Goto("reveal", [said, *self._close_count()], prompt=True)
        return Goto("count", [said], prompt=True)

    def undo_scope(self, state: Any) -> Any:
        """The count and the reveal are one scope for ``back``: the tap that
        closes the count, or the first card shown, moves to the reveal and
        may still be taken back."""
        return "reveal" if state.step in ("count", "reveal") else state.step  # two steps, one scope (why: above)

    # ---------------------------------------------------------------- helpers
    def _not_taken(self, kind: str, value: Any) -> Refusal:
        """A stale timer, a card of another game, or this step's own
        explanation — except at night and once it is over, when everything
        is refused alike."""
        if not (self.eyes_closed or self.finished):
            if isinstance(value, TimerFired):
                return Refusal("onw.refuse.stale_timer", f"timer {value.name} is not expected now",
                               timer=value.name)
            if isinstance(value, Tap) and not value.identity.startswith(("onw/", "player/")):
                return Refusal("onw.refuse.foreign", f"{value.identity} is not a One Night card",
                               card=value.identity)
        return super()._not_taken(kind, value)

    # ------------------------------------------------------------ the steps
    # step -> {input kind -> Take(handler, where it leads, its guard)}, the
    # step's own refusal for the rest, and what the step says (its prompt, its
    # lines after a restart), whom it waits for and its headline (the module's
    # docstring tells the story).  Night and vote say nothing of their own:
    # only the script speaks; by night the table names nobody.
    STEPS: ClassVar[dict[str, Step]] = {
        "deal": Step({"next": Take(_nightfall, ("night",))},
                     ("onw.refuse.deal", "deal the cards, then press next for the night"),
                     prompt=lambda g: [Say("onw.deal.prompt")],
                     resume=lambda g: [Say("onw.resume.deal"), *g._deck_lines(), *g.prompt()]),
        "night": Step({"draw": Take(_jitter, ("night", "discussion"), _jitter_refusal),
                       "timer": Take(_night_timer, ("night", "discussion"), _night_timer_refusal)},
                      ("onw.refuse.night", "not during the night"), resume=views.resume_night, quiet=True),
        "discussion": Step({"timer": Take(_discussion_tick, ("discussion", "vote"), _discussion_timer_refusal),
                            "next": Take(_end_discussion, ("vote",)),
                            "submit": Take(_discussion_submit, (), _discussion_submit_refusal,
                                           asks=_discussion_asks)},
                           ("onw.refuse.discussion",
                            "the discussion is on: press next to end it; cards are shown after the vote"),
                           prompt=lambda g: [Say("onw.discussion.prompt")], resume=views.resume_discussion,
                           waits=views.everyone, headline=views.discussion_headline),
        "vote": Step({"timer": Take(_count, ("vote", "count", "reveal"), _count_refusal),
                      "submit": Take(Reveal._phone_vote, (), Reveal._phone_vote_refusal, asks=Reveal._vote_asks)},
                     ("onw.refuse.counting", "wait for the count, then point"),
                     prompt=lambda g: [Say("onw.vote.prompt")], resume=views.resume_vote, waits=views.to_vote, headline=views.vote_headline),
        "count": Step({"next": Take(Reveal._reveal_done, ("hunter", "done"), Reveal._reveal_incomplete),
                       "tap": Take(Reveal._count_tap, ("count", "reveal"), Reveal._reveal_refusal),
                       "submit": Take(Reveal._phone_vote, ("count", "reveal"), Reveal._phone_vote_refusal,
                                      asks=Reveal._vote_asks)},
                      ("onw.refuse.reveal", "tap your player card, then your role card"),
                      prompt=views.reveal_prompt, resume=views.resume_reveal,
                      waits=views.count_waits, headline=views.vote_headline),
        "reveal": Step({"next": Take(Reveal._reveal_done, ("hunter", "done"), Reveal._reveal_incomplete),
                        "tap": Take(Reveal._reveal_tap, (), Reveal._reveal_refusal)},
                       ("onw.refuse.reveal", "tap your player card, then your role card"),
                       prompt=views.reveal_prompt, resume=views.resume_reveal,
                       waits=views.reveal_waits, headline=views.reveal_headline),
        "hunter": Step({"tap": Take(Reveal._hunter_shot, ("hunter", "done"), Reveal._hunter_refusal)},
                       ("onw.refuse.hunter", "tap the card of the player the hunter voted for"),
                       prompt=lambda g: [Say("onw.hunter.ask", {"player": g._hunters()[0]})],
                       waits=lambda g: g._hunters()[:1]),
        "done": Step({}, ("onw.refuse.finished", "the game is over"),
                     prompt=lambda g: [Say(r) for r in g.state.verdict.reasons] if g.state.verdict is not None else [],
                     resume=lambda g: [Say("onw.resume.done"), *g.prompt()], final=True),
    }
