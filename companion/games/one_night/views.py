"""One Night Werewolf: what the table sees and hears at each step — the read side.

The public view, and what each step is to the table — its prompt, its lines
after a restart, whom it waits for, its headline — which the step table in
``engine`` declares beside what each step takes.  Reads of the engine: the
state changes only in ``engine``'s handlers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from companion.core.countdown import next_point, spoken
from companion.core.events import CancelTimer, Output, Say, SetTimer, Sound
from companion.games.one_night.night import turn_start

if TYPE_CHECKING:
    from companion.games.one_night.engine import OneNight


def public_view(game: OneNight) -> dict[str, Any]:
    """The step and whom the table waits for.  By night nobody: naming the
    role called would give the night's order (and so the deck's) away.
    Once the table counts the pointing, the tally as it was said: the votes
    each player got and how many have voted (the TV board's); never who
    pointed at whom, which no line says.  The edition and the deck (role →
    count) for the whole game: the table chose them, and they were said."""
    s = game.state
    view: dict[str, Any] = {"step": s.step, "whose_turn": game.waiting(),
                            "edition": game.edition, "deck": dict(game.deck)}  # public: the table chose it
    if s.votes:  # the count, as each vote was said aloud: "A vote for red: 2 of 5 have voted"
        view["tally"] = {"for": {p: n for p in game.players if (n := list(s.votes.values()).count(p))},
                         "done": len(s.votes), "of": len(game.players)}
    return view


def everyone(game: OneNight) -> list[str]:
    return list(game.players)


def reveal_waits(game: OneNight) -> list[str]:
    return [game.state.pending] if game.state.pending else game._missing()


def reveal_prompt(game: OneNight) -> list[Output]:
    s = game.state
    if s.pending:
        if game._counting():
            return [Say("onw.count.voter", {"player": s.pending})]
        if not s.revealed and not s.counted:  # a vote may follow, or the role card
            return [Say("onw.reveal.card_or_vote", {"player": s.pending})]
        return [Say("onw.reveal.role_card", {"player": s.pending})]
    if game._counting():
        return [Say("onw.count.waiting", {"n": len(s.votes), "count": len(game.players)})]
    missing = [p for p in game.players if p not in s.revealed]
    if missing and not s.revealed and not s.counted:
        return [Say("onw.reveal.prompt.first", {"players": missing})]
    if missing:
        return [Say("onw.reveal.prompt", {"players": missing})]
    return [Say("onw.reveal.all_counted" if s.counted else "onw.reveal.executed_prompt")]


def discussion_headline(game: OneNight) -> dict[str, Any]:
    """The discussion ends on its countdown (with the minutes asked for); paused, on none."""
    s = game.state
    return {"timer": None if s.paused else
            ("discussion", next_point(s.left_s, game._total_s, game.opts.warnings_s) + s.extra_s)}


def vote_headline(game: OneNight) -> dict[str, Any]:
    """Once the table counts the pointing (at the reveal), the votes so far."""
    s = game.state
    return {"count": {"done": len(s.votes), "of": len(game.players), "what": "votes"}} if game._counting() else {}


def reveal_headline(game: OneNight) -> dict[str, Any]:
    """The reveal counts who has shown their cards (taps everyone saw)."""
    return {"count": {"done": len(game.state.revealed), "of": len(game.players), "what": "revealed"}}


def resume_night(game: OneNight) -> list[Output]:
    """The night restarts the current turn from its wake line (a turn is
    never skipped) and cancels the beat that was pending; cut before the
    draw, it asks for the draw again."""
    s = game.state
    if s.jitter_ms is None:
        return [Say("onw.resume.night"), game.draw]
    start = turn_start(game.script, s.night_at)
    out: list[Output] = [Say("onw.resume.night")]
    if start > 0:  # beat 0 starts the ambience itself
        out += [o for o in game.script[0].outputs if isinstance(o, Sound)]
    if s.night_at != start:  # the beat that was pending is not the one re-armed
        out.append(CancelTimer(game.script[s.night_at + 1].name))
    beat = game.script[start]
    return [*out, *beat.outputs, SetTimer(game.script[start + 1].name, beat.delay)]


def resume_discussion(game: OneNight) -> list[Output]:
    """Re-armed from the last tick the journal holds, said aloud."""
    s = game.state
    said = [Say("onw.resume.discussion", {"seconds": spoken(s.left_s + s.extra_s)}), *game.prompt()]
    return said if s.paused else [*said, game._discussion_timer()]


def resume_vote(game: OneNight) -> list[Output]:
    """The count starts again from the call."""
    s = game.state
    cancel = [CancelTimer(f"vote:{s.vote_at + 1}")] if s.vote_at else []
    return [Say("onw.resume.vote"), *cancel, *game._vote_call()]
