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
                card of the role it copied; after a card, the ``onw/artifact/<id>``
                on it (Daybreak), and a PI who saw a wolf or a tanner that card
                (``tokens``); a counted vote with a bodyguard in the deck names
                the executed at `next`, once whom it protects is known
    hunter      a dead hunter whose vote was not counted: the ``player/<name>`` they
                voted for (who dies too; a hunter so shot is asked in turn) → done
    done        nothing

Before the start, the table may tap the deck's role cards (``setup_card``,
``check_cards``).  The game is composed of its state (``state``), its steps
(the table below; the handlers are ``steps``' and ``reveal``'s functions)
and one read function (``views.view``).  The roles and editions are
``roles``' entries; the options and the deck ``rules``', the night
``night``'s, the verdict ``verdict``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from companion.core.engine import Engine, Outcome, Result, Setup, Step, Take
from companion.core.events import Input, Output, Refusal, Say, Tap, TimerFired
from companion.games.one_night import reveal, steps, views
from companion.games.one_night.night import Segment, jitter_draw, night_script
from companion.games.one_night.roles import (
    EDITIONS,
    ROLES,
    Registered,
    card_ids,
    every_card,
    rule_cards,
    spoken,
)
from companion.games.one_night.rules import (
    card_problem,
    centre_lines,
    deck_for,
    options_from,
    settings_for,
    tapped_deck,
    tapped_lines,
)
from companion.games.one_night.show import SHOWS
from companion.games.one_night.state import OneNightState, final_roles, hunters, to_vote
from companion.games.one_night.verdict import WINNING_TEAMS, teams


class OneNight(Engine):
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
        "discussion.start", "discussion.start_one", "discussion.start_seconds", "discussion.start_one_and",
        "discussion.start_minutes_and", "discussion.one_minute_left", "discussion.minutes_left",
        "discussion.seconds_left", "discussion.one_minute_and_left", "discussion.minutes_and_left",
        "resume.discussion"))
    state: OneNightState

    def __init__(self, setup: Setup) -> None:
        super().__init__(setup)
        self.opts = options_from(setup.options, setup.rules)  # checked by the config schema (settings)
        self.edition = self.opts.edition
        self.deck = deck_for(len(self.players), self.opts, setup.cards)
        self.cards = card_ids(self.deck)
        self.draw = jitter_draw(self.deck, self.opts)
        self.state = OneNightState()
        self._script: tuple[tuple[int, ...], tuple[Segment, ...]] = ((), ())

    @property
    def script(self) -> tuple[Segment, ...]:
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
        return rule_cards()  # rules/ultimate, rules/daybreak

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
            *centre_lines(len(self.players), self.deck),  # the alpha wolf's centre werewolf card set apart
        ]

    view = views.view  # the one read function: what the table or a seat may see

    def public_label(self, inp: Input) -> str:
        label = reveal.vote_label(self, inp)
        return inp.label if label is None else label

    def result(self) -> Result:
        v = self.state.verdict
        if v is None:
            raise RuntimeError("the game is not finished")
        roles = final_roles(self)
        # a tanner is a team of one (each tanner who dies wins): no team, so a
        # league rates each as a side alone, never two tanners as one team; a
        # PI who saw a wolf, or a claw's holder, plays for the werewolves
        return Result({p: int(p in v.winners) for p in self.players}, v.winners, roles,
                      teams={p: t for p, t in teams(roles, self.state.artifacts).items() if t != "tanner"})

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
        "deal": Step({"next": Take(steps.nightfall, ("night",))},
                     ("onw.refuse.deal", "deal the cards, then press next for the night"),
                     prompt=lambda g: [Say("onw.deal.prompt")],
                     resume=lambda g: [Say("onw.resume.deal"), *g._deck_lines(), *g.prompt()]),
        "night": Step({"draw": Take(steps.jitter, ("night", "discussion"), steps.jitter_refusal),
                       "timer": Take(steps.night_timer, ("night", "discussion"), steps.night_timer_refusal)},
                      ("onw.refuse.night", "not during the night"), resume=steps.resume_night, quiet=True),
        "discussion": Step({"timer": Take(steps.discussion_tick, ("discussion", "vote"),
                                          steps.discussion_timer_refusal),
                            "next": Take(steps.end_discussion, ("vote",)),
                            "submit": Take(steps.discussion_submit, (), steps.discussion_submit_refusal,
                                           asks=steps.discussion_asks)},
                           ("onw.refuse.discussion",
                            "the discussion is on: press next to end it; cards are shown after the vote"),
                           prompt=lambda g: [Say("onw.discussion.prompt")], resume=steps.resume_discussion,
                           waits=views.everyone, headline=views.discussion_headline),
        "vote": Step({"timer": Take(steps.count, ("vote", "count", "reveal"), steps.count_refusal),
                      "submit": Take(reveal.phone_vote, (), reveal.phone_vote_refusal, asks=reveal.vote_asks)},
                     ("onw.refuse.counting", "wait for the count, then point"),
                     prompt=lambda g: [Say("onw.vote.prompt")], resume=steps.resume_vote, waits=to_vote,
                     headline=views.vote_headline),
        "count": Step({"next": Take(reveal.reveal_done, ("hunter", "done"), reveal.reveal_incomplete),
                       "tap": Take(reveal.count_tap, ("count", "reveal"), reveal.reveal_refusal),
                       "submit": Take(reveal.phone_vote, ("count", "reveal"), reveal.phone_vote_refusal,
                                      asks=reveal.vote_asks)},
                      ("onw.refuse.reveal", "tap your player card, then your role card"),
                      prompt=views.reveal_prompt, resume=views.resume_reveal,
                      waits=views.count_waits, headline=views.vote_headline),
        "reveal": Step({"next": Take(reveal.reveal_done, ("hunter", "done"), reveal.reveal_incomplete),
                        "tap": Take(reveal.reveal_tap, (), reveal.reveal_refusal)},
                       ("onw.refuse.reveal", "tap your player card, then your role card"),
                       prompt=views.reveal_prompt, resume=views.resume_reveal,
                       waits=views.reveal_waits, headline=views.reveal_headline),
        "hunter": Step({"tap": Take(reveal.hunter_shot, ("hunter", "done"), reveal.hunter_refusal)},
                       ("onw.refuse.hunter", "tap the card of the player the hunter voted for"),
                       prompt=lambda g: [Say("onw.hunter.ask", {"player": hunters(g)[0]})],
                       waits=lambda g: hunters(g)[:1]),
        "done": Step({}, ("onw.refuse.finished", "the game is over"),
                     prompt=lambda g: [Say(r) for r in g.state.verdict.reasons] if g.state.verdict is not None else [],
                     resume=lambda g: [Say("onw.resume.done"), *g.prompt()], final=True),
    }
