"""Madness Hour: what each step does with what it takes — the Girl's set-up,
the exploration, the discussion, the vote, the battle and the ending.  The
step table (``engine``) says which handler takes what, and where it leads:
the handlers and guards are functions of the game (``state.Game``) and the
input, and only they change the state.  Here too what re-arms a step's
timers after a restart."""

from __future__ import annotations

from collections.abc import Mapping

from companion.core.countdown import next_point, time_line
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
    Game,
    ending_missing,
    girl,
)


def turn_timer(g: Game) -> list[Output]:
    o, n = g.opts, g.state.turns
    if not o.turn_s:
        return []
    if o.turn_warning_s and o.turn_warning_s < o.turn_s:
        return [SetTimer(f"turn:{n}:warn", o.turn_s - o.turn_warning_s)]
    return [SetTimer(f"turn:{n}:up", o.turn_s)]


def cancel_turn(g: Game) -> list[Output]:
    n = g.state.turns
    return [CancelTimer(f"turn:{n}:warn"), CancelTimer(f"turn:{n}:up")] if g.opts.turn_s and n else []


def discussion_timer(g: Game) -> SetTimer:
    left = g.state.left_s
    return SetTimer("discussion", left - next_point(left, g.opts.discussion_s, g.opts.warnings_s))


# --------------------------------------------------------- the Girl's set-up
def girl_refusal(g: Game, inp: Tap) -> Refusal | None:
    return g._not_taken("tap", inp) if g._player_of(inp) is None else None


def pick_girl(g: Game, inp: Tap) -> Goto:
    player = g.state.girl = g._player_of(inp)
    return Goto("card", [Say("mh.girl.chosen", {"player": player})], prompt=True)


def card_refusal(g: Game, inp: Tap) -> Refusal | None:
    s = g.state
    if inp.identity in GIRL_CARDS:
        return None
    if (player := g._player_of(inp)) is not None and player != s.girl:
        return Refusal("mh.refuse.not_girl_seat", f"only the Girl ({s.girl}) draws a Girl card", player=s.girl)
    return g._not_taken("tap", inp)


def card(g: Game, inp: Tap) -> Goto:
    # Both cards take this very path: the same line, the same step, nothing else.
    g.state.card, g.state.held = inp.identity.removeprefix("mh/girl/"), True
    return Goto("explore", [Say("mh.girl.card_held")], prompt=True)


def keep_card(g: Game, _: Press) -> Goto:
    return Goto("explore", [Say("mh.girl.card_kept")], prompt=True)


# ------------------------------------------------------------ exploration
def turn_timer_refusal(g: Game, inp: TimerFired) -> Refusal | None:
    n = g.state.turns
    return None if inp.name in (f"turn:{n}:warn", f"turn:{n}:up") else g._not_taken("timer", inp)


def turn_timer_fired(g: Game, inp: TimerFired) -> list[Output]:
    s = g.state
    if inp.name == f"turn:{s.turns}:warn":
        return [Say(*time_line("mh.turn.warning", g.opts.turn_warning_s)),
                SetTimer(f"turn:{s.turns}:up", g.opts.turn_warning_s)]
    return [Say("mh.turn.time_up", {"player": s.turn_of})]


def explore_refusal(g: Game, inp: Tap) -> Refusal | None:
    if inp.identity == CLIMAX:
        return None
    return dead_card_refusal(g, inp) if marks_death(inp) else g._not_taken("tap", inp)


def explore(g: Game, inp: Tap) -> list[Output] | Goto:
    if inp.identity == CLIMAX:
        if not g.living:  # [ruling] nobody left to discuss or vote: the Girl walks out
            return outcome(g, "keep").after(*cancel_turn(g), Say("mh.climax.nobody_left"))
        return begin_discussion(g).after(*cancel_turn(g))
    return dead_card(g, inp)


def call_turn(g: Game, _: Press) -> list[Output]:
    """The next living player after the last one called, in turn order; back
    at the Girl, a new round."""
    s = g.state
    order = turn_order(g.players, girl(g))
    at = order.index(s.turn_of) + 1 if s.turn_of else 0
    who = next(p for p in (order[at:] + order) if p not in s.dead)  # the Girl is alive until the climax
    out: list[Output] = list(cancel_turn(g))
    s.turn_of, s.turns, s.pending = who, s.turns + 1, None  # a player card left hanging is dropped
    if who == s.girl:
        s.round += 1
        out.append(Say("mh.turn.round", {"round": s.round}))
    out.append(Say("mh.turn.girl" if who == s.girl else "mh.turn.investigator", {"player": who}))
    return [*out, *turn_timer(g)]


def dead_card_refusal(g: Game, inp: Tap) -> Refusal | None:
    """A player card, then (as the next input) ``mh/state/dead``: one who died
    before the climax — refused for the Girl, the dead, a dead card first."""
    s = g.state
    if (player := g._player_of(inp)) is not None:
        if player == s.girl:
            return Refusal("mh.refuse.girl_not_here", "the Girl is not marked now", player=player)
        if player in s.dead:
            return Refusal("mh.refuse.dead", f"{player} is dead already", player=player)
        return None
    if s.pending is None:
        return Refusal("mh.refuse.player_first", "tap the player card first")
    return None


def dead_card(g: Game, inp: Tap) -> list[Output]:
    s = g.state
    if (player := g._player_of(inp)) is not None:
        s.pending = player
        return [Say("mh.dead.which", {"player": player})]
    player, s.pending = s.pending, None
    assert player is not None
    s.dead.append(player)
    s.votes.pop(player, None)
    return [Say("mh.dead.marked", {"player": player})]


# ---------------------------------------------------------- the discussion
def begin_discussion(g: Game) -> Goto:
    s = g.state
    s.pending = None
    s.left_s = g.opts.discussion_s
    return Goto("discussion", [Say("mh.climax.gather"), Say(*time_line("mh.climax.discuss", s.left_s)),
                               discussion_timer(g)])


def discussion_timer_refusal(g: Game, inp: TimerFired) -> Refusal | None:
    return g._not_taken("timer", inp) if inp.name != "discussion" else None


def discussion_tick(g: Game, inp: TimerFired) -> list[Output] | Goto:
    s = g.state
    left = s.left_s = next_point(s.left_s, g.opts.discussion_s, g.opts.warnings_s)
    if left == 0:
        return Goto("vote", [Say("mh.climax.time_up")], prompt=True)
    return [Say(*time_line("mh.climax.seconds_left", left)), discussion_timer(g)]


def end_discussion(g: Game, _: Press) -> Goto:
    return Goto("vote", [CancelTimer("discussion"), Say("mh.climax.ended")], prompt=True)


# --------------------------------------------------------------- the vote
def vote_refusal(g: Game, inp: Tap) -> Refusal | None:
    s = g.state
    if inp.identity in SIDE_CARDS:
        if s.pending is None:
            return Refusal("mh.refuse.side_before_player", "tap your player card before your side card")
        return None
    if (voter := g._player_of(inp)) is not None and voter == s.girl:
        return Refusal("mh.refuse.girl_votes", "the Girl does not vote", player=voter)
    return dead_card_refusal(g, inp) if marks_death(inp) else g._not_taken("tap", inp)


def vote(g: Game, inp: Tap) -> list[Output] | Goto:
    s = g.state
    if inp.identity in SIDE_CARDS:
        player, s.pending = s.pending, None
        assert player is not None
        side = s.votes[player] = inp.identity.removeprefix("mh/side/")
        out: list[Output] = [Say(f"mh.vote.recorded_{side}",
                                 {"player": player, "n": len(s.votes), "count": len(g.living)})]
        closed = close_vote(g)
        return out if closed is None else closed.after(*out)
    dead = dead_card(g, inp)
    if s.pending is not None:  # a player card: now their side card (or dead)
        return [Say("mh.vote.which", {"player": s.pending})]
    closed = close_vote(g)
    return [*dead, *g.prompt()] if closed is None else closed.after(*dead)


def close_vote(g: Game) -> Goto | None:
    """[ruling] The vote closes as soon as every living investigator has
    voted — after a vote or after a death marked meanwhile, which removes
    the dead one's vote; nobody left alive: the Girl walks out.  None
    while votes are still missing."""
    s = g.state
    if not g.living:
        return outcome(g, "keep").after(Say("mh.vote.nobody_left"))
    if any(p not in s.votes for p in g.living):
        return None
    agreed = unanimous(s.votes)
    if agreed is not None:
        return outcome(g, agreed).after(Say(f"mh.vote.unanimous_{agreed}"))
    return Goto("battle", [Say("mh.vote.split")], prompt=True)


# ------------------------------------------------------------- the battle
def battle_asks(g: Game, player: str) -> Mapping[str, Ask]:
    """The battle's fields, for those who voted (they fight)."""
    return dict(BATTLE_FIELDS) if player in g.state.votes else {}


def fight_refusal(g: Game, inp: Submit) -> Refusal | None:
    if not battle_asks(g, inp.player):
        return Refusal("mh.refuse.not_fighting", f"{inp.player} is not in the battle", player=inp.player)
    ask = BATTLE_FIELDS.get(inp.field)
    if ask is None:
        return Refusal("mh.refuse.field", f"the battle takes {', '.join(BATTLE_FIELDS)}, not {inp.field}")
    if problem := ask.check(inp.value):
        return Refusal("mh.refuse.value", f"{inp.field} {problem}", field=inp.field)
    return None


def fight(g: Game, inp: Submit) -> list[Output]:
    entry = dict(g.sealed.get(inp.player, {}))
    if inp.value == 0 and inp.field in CLEARED_BY_0:
        # [ruling] 0 items or mystic items is no entry: a mystic 0 is no reveal, and
        # sending 0 clears what was sent before (until the battle is counted)
        entry.pop(inp.field, None)
        g.sealed[inp.player] = entry
        return [Tell(inp.player, f"mh.battle.cleared_{inp.field}", {}, entry)]
    entry[inp.field] = inp.value
    g.sealed[inp.player] = entry
    return [Tell(inp.player, f"mh.battle.taken_{inp.field}", {"value": inp.value}, entry)]


def strength_missing(g: Game, _: Press) -> Refusal | None:
    missing = [p for p in g.state.votes if "strength" not in g.sealed.get(p, {})]
    if missing:
        return Refusal("mh.refuse.strength_missing", "not every fighter has sent their strength",
                       players=missing)
    return None


def battle_counted(g: Game, _: Press) -> Goto:
    s = g.state
    entries = {p: g.sealed[p] for p in s.votes}
    s.totals, won = battle(s.votes, entries)
    s.revealed = [p for p in s.votes if entries[p].get("mystic", 0) >= 1]  # [ruling] a reveal is ≥ 1
    out: list[Output] = []
    if s.revealed:
        out.append(Say("mh.battle.revealed", {"players": list(s.revealed)}))
    out += [Say("mh.battle.totals", {"keep": s.totals["keep"], "kill": s.totals["kill"]}),
            Say(f"mh.battle.won_{won}" + ("_tie" if s.totals["keep"] == s.totals["kill"] else ""))]
    return outcome(g, won).after(*out)


def side_refusal(g: Game, inp: Tap) -> Refusal | None:
    return g._not_taken("tap", inp) if inp.identity not in SIDE_CARDS else None


def battle_side(g: Game, inp: Tap) -> Goto:
    won = inp.identity.removeprefix("mh/side/")  # no phones: the table counted aloud
    return outcome(g, won).after(Say(f"mh.battle.won_{won}"))


def outcome(g: Game, won: str) -> Goto:
    s = g.state
    fallen = battle_dead(s.votes, won)
    s.dead += fallen
    s.girl_alive = won == "keep"
    out: list[Output] = [Say("mh.outcome.fallen", {"players": fallen})] if fallen else []
    out.append(Say("mh.outcome.girl_lives" if s.girl_alive else "mh.outcome.girl_dies"))
    return Goto("ending", out, prompt=True)


# ------------------------------------------------------------- the ending
def ending_refusal(g: Game, inp: Tap) -> Refusal | None:
    s = g.state
    if inp.identity in GIRL_CARDS:
        return Refusal("mh.refuse.girl_card_twice", "the Girl's card is in already") if (
            s.held or s.card is not None) else None
    if (player := g._player_of(inp)) is not None:
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
    return g._not_taken("tap", inp)


def ending(g: Game, inp: Tap) -> list[Output]:
    s = g.state
    if inp.identity in GIRL_CARDS:
        s.card = inp.identity.removeprefix("mh/girl/")
        return [Say("mh.ending.card_in"), *g.prompt()]
    if (player := g._player_of(inp)) is not None:
        s.pending = player
        return [Say("mh.ending.which", {"player": player})]
    player, s.pending = s.pending, None
    assert player is not None
    shown = inp.identity.removeprefix("mh/state/")
    if shown == "dead":
        s.dead.append(player)
        s.states.pop(player, None)
        return [Say("mh.dead.marked", {"player": player}), *g.prompt()]
    s.states[player] = shown
    return [Say(f"mh.ending.state_{shown}", {"player": player}), *g.prompt()]


def ending_incomplete(g: Game, _: Press) -> Refusal | None:
    missing = ending_missing(g)
    if g.state.card is None or missing:
        return Refusal("mh.refuse.ending_incomplete", "the Girl's card and every survivor's state first",
                       players=missing)
    return None


def ending_done(g: Game, _: Press) -> list[Output]:
    return verdict(g)


def verdict(g: Game) -> list[Output]:
    s = g.state
    assert s.card is not None and s.girl_alive is not None
    s.states.update({p: "mad" for p in s.revealed})  # shown in the battle already
    s.winners = winners(g.players, girl(g), s.card, s.girl_alive, s.states, s.dead)
    dead = [p for p in g.players if p in s.dead or (p == s.girl and not s.girl_alive)]
    alive = [p for p in g.players if p not in dead]
    return [
        Say(f"mh.verdict.girl_{s.card.replace('-', '_')}", {"player": s.girl}),
        Say("mh.verdict.escaped", {"players": alive}) if alive else Say("mh.verdict.nobody_escaped"),
        Say("mh.verdict.winners", {"players": list(s.winners)}) if s.winners else Say("mh.verdict.no_winners"),
        Report("mh_result", {"girl": s.card, "girl_alive": s.girl_alive, "dead": dead,
                             "winners": list(s.winners)}),
    ]


def marks_death(inp: Tap) -> bool:
    """Is ``inp`` a card of marking a death: a player's card, or ``mh/state/dead``?"""
    return inp.identity.startswith("player/") or inp.identity == "mh/state/dead"


# After a restart: the discussion goes on from the last tick the journal
# holds (said aloud), a turn timer starts that turn again.
def resume_explore(g: Game) -> list[Output]:
    return [Say("mh.resume.step"), *g.prompt(), *(turn_timer(g) if g.state.turns else [])]


def resume_discussion(g: Game) -> list[Output]:
    return [Say(*time_line("mh.resume.discussion", g.state.left_s)), discussion_timer(g)]
