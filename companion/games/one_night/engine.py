"""One Night Werewolf (ワンナイト人狼): the rule engine.

Steps, and what each takes (everything else is refused and changes nothing):

    deal        `next` → night, asking for the secret draw ``onw.jitter``
    night       the draw (then the first beat), then only its own timers
                (``night:<role>:wake|sleep``, ``night:morning``); eyes closed:
                every tap and button is refused, the script never reacts
    discussion  timer ``discussion`` (a tick each minute and at each warning), `next` ends early
    vote        timers ``vote:1`` … ``vote:3`` (the count) → reveal
    reveal      optionally first the vote count: each player's ``player/<name>`` then the
                ``player/<name>`` they point at; then each ``player/<name>`` then that
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
from dataclasses import dataclass, field
from typing import Any, ClassVar

from companion.core.countdown import next_point
from companion.core.engine import Engine, Goto, Outcome, Result, Setup, Step, Take
from companion.core.events import (
    CancelTimer,
    Drawn,
    Output,
    Press,
    Refusal,
    Report,
    Say,
    SetTimer,
    Tap,
    TimerFired,
)
from companion.games.one_night import views
from companion.games.one_night.night import jitter_draw, night_script, turn_start
from companion.games.one_night.roles import EDITIONS, ROLES, card_ids, card_of, every_card, role_of, spoken
from companion.games.one_night.rules import (
    VOTE_COUNT,
    card_problem,
    count_votes,
    deck_for,
    minutes_line,
    most_executed,
    options_from,
    settings_for,
    tapped_lines,
    warning_line,
)
from companion.games.one_night.verdict import WINNING_TEAMS, Verdict, acting, hunters_to_ask, verdict
from companion.games.one_night.verdict import dead as verdict_dead
from companion.games.one_night.show import SHOWS


@dataclass
class OneNightState:
    step: str = "deal"  # deal | night | discussion | vote | reveal | done
    jitter_ms: list[int] | None = None  # the night's secret draw, once made
    night_at: int = -1  # the last night beat played
    left_s: float = 0.0  # discussion time left at the last discussion timer
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


class OneNight(Engine):
    game: ClassVar[str] = "one-night"
    tag_prefixes: ClassVar[tuple[str, ...]] = ("onw/",)
    components: ClassVar[tuple[str, ...]] = every_card()
    shows: ClassVar[Mapping[str, Callable[[Mapping[str, Any]], str]]] = SHOWS
    settings: ClassVar[Mapping[str, Any]] = settings_for(components)  # a deck is bounded by the cards
    min_players: ClassVar[int] = 3
    max_players: ClassVar[int] = max(e.players[1] for e in EDITIONS.values())  # the edition's, checked at setup
    setup_cards: ClassVar[bool] = True  # the table taps the deck's role cards before it starts
    no_points: ClassVar[bool] = True  # a team wins (the export)
    unknown_player: ClassVar[str] = "onw.refuse.unknown_player"
    outcomes: ClassVar[tuple[Outcome, ...]] = (Outcome("onw_result", "winning_team", WINNING_TEAMS),)
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
    def check_cards(cls, players: Sequence[str], rules: Sequence[str], options: Mapping[str, Any],
                    cards: Sequence[str]) -> None:
        """The tapped deck (none: the edition's default) for these players:
        a lone mason, too few or too many cards are refused, naming them."""
        if cards:
            deck_for(len(players), options_from(options, rules), cards)

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

    def result(self) -> Result:
        v = self.state.verdict
        if v is None:
            raise RuntimeError("the game is not finished")
        roles = self.final_roles()
        return Result({p: int(p in v.winners) for p in self.players}, v.winners, roles,
                      teams={p: acting(r).team for p, r in roles.items()})

    def final_roles(self) -> dict[str, str]:
        """Each revealed player's final role (the doppelganger's as ``doppelganger:<role>``)."""
        s = self.state
        return {p: f"{role_of(c)}:{s.copied[p]}" if p in s.copied else role_of(c) for p, c in s.revealed.items()}

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
        return self._not_taken("timer", inp) if inp.name != "discussion" else None

    def _discussion_tick(self, inp: TimerFired) -> list[Output] | Goto:
        left = self.state.left_s = next_point(self.state.left_s, self._total_s, self.opts.warnings_s)
        if left == 0:
            return self._begin_vote().after(Say("onw.discussion.time_up"))
        said = [warning_line(left)] if left in self.opts.warnings_s else []
        return [*said, self._discussion_timer()]

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
        return Goto("reveal", [said], prompt=True)

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
        s, card = self.state, card_of(card)
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
        s, card = self.state, card_of(card)
        if s.copying is not None:  # the doppelganger's holder shows the role they became
            player, s.copying = s.copying, None
            s.copied[player] = role_of(card)
            out: list[Output] = [Say("onw.reveal.copied", {"player": player,
                                                           "role": spoken(role_of(card), self.edition)})]
        else:
            player, s.pending = s.pending, None
            assert player is not None  # the guard saw to it
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
                            "next": Take(_end_discussion, ("vote",))},
                           ("onw.refuse.discussion",
                            "the discussion is on: press next to end it; cards are shown after the vote"),
                           prompt=lambda g: [Say("onw.discussion.prompt")], resume=views.resume_discussion,
                           waits=views.everyone, headline=views.discussion_headline),
        "vote": Step({"timer": Take(_count, ("vote", "reveal"), _count_refusal)},
                     ("onw.refuse.counting", "wait for the count, then point"),
                     resume=views.resume_vote, waits=views.everyone, headline=views.vote_headline),
        "reveal": Step({"next": Take(_reveal_done, ("hunter", "done"), _reveal_incomplete),
                        "tap": Take(_reveal_tap, (), _reveal_refusal)},
                       ("onw.refuse.reveal", "tap your player card, then your role card"),
                       prompt=views.reveal_prompt,
                       resume=lambda g: [Say("onw.resume.reveal", {"players": list(g.state.revealed)}), *g.prompt()],
                       waits=views.reveal_waits, headline=views.reveal_headline),
        "hunter": Step({"tap": Take(_hunter_shot, ("hunter", "done"), _hunter_refusal)},
                       ("onw.refuse.hunter", "tap the card of the player the hunter voted for"),
                       prompt=lambda g: [Say("onw.hunter.ask", {"player": g._hunters()[0]})],
                       waits=lambda g: g._hunters()[:1]),
        "done": Step({}, ("onw.refuse.finished", "the game is over"),
                     prompt=lambda g: [Say(r) for r in g.state.verdict.reasons] if g.state.verdict is not None else [],
                     resume=lambda g: [Say("onw.resume.done"), *g.prompt()], final=True),
    }
