"""One Night's steps before the reveal: the deal, the night, the discussion
and the vote's call — the handlers and guards the step table (``engine``)
names, each a function of the game (``state.Game``) and the input, and
what re-arms each step's timers after a restart.  Only these functions and
``reveal``'s change the state; the driver moves the step where a handler's
entry leads.
"""

from __future__ import annotations

from companion.core.countdown import next_point
from companion.core.engine import Ask, Goto
from companion.core.events import (
    CancelTimer,
    Drawn,
    Output,
    Press,
    Refusal,
    Say,
    SetTimer,
    Sound,
    Submit,
    TimerFired,
)
from companion.games.one_night.night import turn_start
from companion.games.one_night.reveal import close_count
from companion.games.one_night.rules import VOTE_COUNT, start_line, warning_line
from companion.games.one_night.state import Game, discussion_s, to_vote


# ------------------------------------------------------------------ deal
def nightfall(g: Game, _: Press) -> list[Output]:
    return [g.draw]  # the night starts once its jitter is drawn


# ----------------------------------------------------------------- night
# The jitter draw, then only the script's own next beat — or, after a
# restart replayed a turn, a beat of that turn again.  Anything the table
# does is refused the same way, so neither the narration nor the refusals
# tell anything.
def jitter_refusal(g: Game, inp: Drawn) -> Refusal | None:
    if inp.name != g.draw.name or g.state.jitter_ms is not None:
        return g._not_taken("draw", inp)
    if not g.draw.accepts(inp.value):
        return Refusal("refuse.bad_draw", f"{inp.value!r} cannot be the draw {inp.name}")
    return None


def jitter(g: Game, inp: Drawn) -> list[Output] | Goto:
    g.state.jitter_ms = list(inp.value)
    return night_beat(g, 0)


def night_timer_refusal(g: Game, inp: TimerFired) -> Refusal | None:
    names = [seg.name for seg in g.script]
    at = g.state.night_at
    if inp.name in names and turn_start(g.script, at) < names.index(inp.name) <= at + 1:
        return None
    return Refusal("onw.refuse.stale_timer", f"timer {inp.name} is not expected now", timer=inp.name)


def night_timer(g: Game, inp: TimerFired) -> list[Output] | Goto:
    return night_beat(g, [seg.name for seg in g.script].index(inp.name))


def night_beat(g: Game, at: int) -> list[Output] | Goto:
    g.state.night_at = at
    beat = g.script[at]
    if at == len(g.script) - 1:
        return begin_discussion(g).after(*beat.outputs)
    return [*beat.outputs, SetTimer(g.script[at + 1].name, beat.delay)]


def resume_night(g: Game) -> list[Output]:
    """The night restarts the current turn from its wake line (a turn is
    never skipped) and cancels the beat that was pending; cut before the
    draw, it asks for the draw again."""
    s = g.state
    if s.jitter_ms is None:
        return [Say("onw.resume.night"), g.draw]
    start = turn_start(g.script, s.night_at)
    out: list[Output] = [Say("onw.resume.night")]
    if start > 0:  # beat 0 starts the ambience itself
        out += [o for o in g.script[0].outputs if isinstance(o, Sound)]
    if s.night_at != start:  # the beat that was pending is not the one re-armed
        out.append(CancelTimer(g.script[s.night_at + 1].name))
    beat = g.script[start]
    return [*out, *beat.outputs, SetTimer(g.script[start + 1].name, beat.delay)]


# ------------------------------------------------------------ discussion
def begin_discussion(g: Game) -> Goto:
    g.state.left_s = discussion_s(g)
    return Goto("discussion", [start_line(discussion_s(g)), discussion_timer(g)])


def discussion_timer(g: Game) -> SetTimer:
    left = g.state.left_s
    return SetTimer("discussion", left - next_point(left, discussion_s(g), g.opts.warnings_s))


def discussion_timer_refusal(g: Game, inp: TimerFired) -> Refusal | None:
    return g._not_taken("timer", inp) if inp.name != "discussion" or g.state.paused else None


def discussion_tick(g: Game, inp: TimerFired) -> list[Output] | Goto:
    """The minutes asked for since the last tick join the time left here, so
    the warnings are said from the deadline the clocks show (the headline's)."""
    s = g.state
    left = s.left_s = next_point(s.left_s, discussion_s(g), g.opts.warnings_s) + s.extra_s
    s.extra_s = 0.0
    if left == 0:
        return begin_vote(g).after(Say("onw.discussion.time_up"))
    said = [warning_line(left)] if left in g.opts.warnings_s else []
    return [*said, discussion_timer(g)]


def discussion_asks(g: Game, player: str) -> dict[str, Ask]:
    """From any page, two buttons: one more minute; pause (sends 1) or go on (0)."""
    label, go_on = ("onw.field.go_on", 0) if g.state.paused else ("onw.field.pause", 1)
    return {"more_time": Ask("onw.field.more_time", 1, 1, kind="button"),
            "pause": Ask(label, go_on, go_on, kind="button")}


def discussion_submit_refusal(g: Game, inp: Submit) -> Refusal | None:
    asks = discussion_asks(g, inp.player)
    if inp.field not in asks:
        return Refusal("onw.refuse.discussion", f"{inp.field} is not asked now")
    if problem := asks[inp.field].check(inp.value):
        return Refusal("onw.refuse.discussion", f"{inp.field} {problem}")
    return None


def discussion_submit(g: Game, inp: Submit) -> list[Output]:
    """+1 min (said aloud; the clocks show it at once, the next tick counts
    it in), or a pause: the timer stops, and goes on from the last point the
    journal holds — the time the paused clocks show, said when it goes on."""
    s = g.state
    if inp.field == "more_time":
        if s.paused:  # the paused clocks show the time it goes on from: the minute joins it now
            s.left_s += 60
        else:
            s.extra_s += 60
        return [Say("onw.discussion.more_time", {"player": inp.player})]
    s.paused = bool(inp.value)
    if s.paused:  # no tick counts the minutes asked for while paused: they join the time left now
        s.left_s, s.extra_s = s.left_s + s.extra_s, 0.0
        return [CancelTimer("discussion"), Say("onw.discussion.paused", {"player": inp.player})]
    return [Say("onw.discussion.go_on"), warning_line(s.left_s + s.extra_s), discussion_timer(g)]


def end_discussion(g: Game, _: Press) -> Goto:
    return begin_vote(g).after(CancelTimer("discussion"), Say("onw.discussion.ended"))


def resume_discussion(g: Game) -> list[Output]:
    """Re-armed from the last tick the journal holds, said aloud."""
    s = g.state
    said = [Say("onw.resume.discussion"), warning_line(s.left_s + s.extra_s), *g.prompt()]
    return said if s.paused else [*said, discussion_timer(g)]


# ------------------------------------------------------------------ vote
def begin_vote(g: Game) -> Goto:
    g.state.vote_at = 0
    return Goto("vote", vote_call(g))


def vote_call(g: Game) -> list[Output]:
    return [Say("onw.vote.call"), SetTimer("vote:1", 2 * g.opts.count_s * g.opts.pace)]


def count_refusal(g: Game, inp: TimerFired) -> Refusal | None:
    """The count; a restart replays it from the call, so any number up to the
    next one is taken (the journal then holds some twice)."""
    n = inp.name.removeprefix("vote:")
    if not (inp.name.startswith("vote:") and n.isdigit()
            and 1 <= int(n) <= min(g.state.vote_at + 1, len(VOTE_COUNT))):
        return g._not_taken("timer", inp)
    return None


def count(g: Game, inp: TimerFired) -> list[Output] | Goto:
    at = g.state.vote_at = int(inp.name.removeprefix("vote:"))
    said = Say(f"onw.vote.{VOTE_COUNT[at - 1]}")
    if at < len(VOTE_COUNT):
        return [said, SetTimer(f"vote:{at + 1}", g.opts.count_s * g.opts.pace)]
    if not to_vote(g):  # every phone has voted: the count, at once
        return Goto("reveal", [said, *close_count(g)], prompt=True)
    return Goto("count", [said], prompt=True)


def resume_vote(g: Game) -> list[Output]:
    """The count starts again from the call."""
    s = g.state
    cancel = [CancelTimer(f"vote:{s.vote_at + 1}")] if s.vote_at else []
    return [Say("onw.resume.vote"), *cancel, *vote_call(g)]
