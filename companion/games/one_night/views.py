"""One Night Werewolf: what the table sees and hears at each step — the read side.

The public view, and what each step is to the table — its prompt, its lines
after a restart, whom it waits for, its headline — which the step table in
``engine`` declares beside what each step takes.  Reads of the engine: the
state changes only in ``engine``'s handlers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from companion.core.countdown import next_point, spoken
from companion.core.events import CancelTimer, Output, Say, SetTimer, Sound
from companion.games.one_night.night import turn_start
from companion.games.one_night.roles import spoken as spoken_role

if TYPE_CHECKING:
    from companion.games.one_night.engine import OneNight


def public_view(game: OneNight) -> dict[str, Any]:
    """The step and whom the table waits for.  By night nobody: naming the
    role called would give the night's order (and so the deck's) away.
    While the vote is open, the tally: the votes each player got as the
    pointing was said, how many have voted and who still has to (a phone's
    vote is counted in, never whom it is for); after the count, the votes
    each player got.  The executed once the table knows them.  The edition
    and the deck (role → count) for the whole game: the table chose them,
    and they were said."""
    s = game.state
    view: dict[str, Any] = {"step": s.step, "whose_turn": game.waiting(),
                            "edition": game.edition, "deck": dict(game.deck)}  # public: the table chose it
    voted = game._voted()
    # the count, as each vote was said aloud ("A vote for red: 2 of 5 have voted"); at the count even when 0 of 5
    if voted or s.step == "count":
        view["tally"] = {"for": {p: n for p in game.players if (n := list(s.votes.values()).count(p))},
                         "done": len(voted), "of": len(game.players), "still": game._to_vote()}
    if s.executed:  # said aloud as the count or the taps decided it: kept to the end, and in the result
        view["executed"] = game._executed()
    if s.verdict is not None:
        view["dead"] = list(s.verdict.dead)
    return view


def board(game: OneNight) -> list[tuple[str, dict[str, Any]]]:
    """The public view as lines for every page and the TV: the deck in play,
    the tally and who still has to vote, the executed."""
    view = public_view(game)
    lines = deck_lines(game.edition, game.deck)
    if (tally := view.get("tally")) is not None:
        lines += [("onw.board.votes_for_one" if n == 1 else "onw.board.votes_for", {"player": p, "n": n})
                  for p, n in tally["for"].items()]
        lines.append(("onw.board.voted", {"n": tally["done"], "count": tally["of"]}))
        if tally["still"]:
            lines.append(("onw.board.to_vote", {"players": tally["still"]}))
    if game.state.counted and not game.state.executed:
        lines.append(("onw.board.nobody_executed", {}))
    if view.get("executed"):
        lines.append(("onw.board.executed", {"players": view["executed"]}))
    if shot := [p for p in view.get("dead", []) if p not in view.get("executed", [])]:
        lines.append(("onw.board.shot", {"players": shot}))
    return lines


def deck_lines(edition: str, deck: Mapping[str, int]) -> list[tuple[str, dict[str, Any]]]:
    """The roles in play, as the deal said them: how many cards, then each role and its count."""
    return [("onw.board.deck", {"cards": sum(deck.values())}),
            *(("onw.board.deck_role_one" if n == 1 else "onw.board.deck_role",
               {"role": spoken_role(role, edition), "count": n})
              for role, n in deck.items())]


def private_view(game: OneNight, player: str) -> dict[str, Any]:
    """A player's own phone vote, while it may change and once counted."""
    vote = game._phone_votes().get(player)
    # a phone vote is shown from the call to the end of the game (after the count, as counted)
    if vote is None or not (game.state.step in ("vote", "count") or game.state.counted):
        return {}
    return {"vote": vote, "open": not game.state.counted}


def page(game: OneNight, player: str) -> list[tuple[str, dict[str, Any]]]:
    view = private_view(game, player)
    if not view:
        return []
    return [("onw.page.vote_open" if view["open"] else "onw.page.vote", {"player": view["vote"]})]


def everyone(game: OneNight) -> list[str]:
    return list(game.players)


def to_vote(game: OneNight) -> list[str]:
    """The vote waits for who has not voted yet (who has is public, never for whom)."""
    return game._to_vote()


def count_waits(game: OneNight) -> list[str]:
    return [game.state.pending] if game.state.pending else game._to_vote()


def reveal_waits(game: OneNight) -> list[str]:
    return [game.state.pending] if game.state.pending else game._missing()


def reveal_prompt(game: OneNight) -> list[Output]:
    """The count's and the reveal's prompt (the state tells which is asked)."""
    s = game.state
    if s.pending:
        if game._counting():
            return [Say("onw.count.voter", {"player": s.pending})]
        if not s.revealed and not s.counted:  # a vote may follow, or the role card
            return [Say("onw.reveal.card_or_vote", {"player": s.pending})]
        return [Say("onw.reveal.role_card", {"player": s.pending})]
    if game._counting():
        return [Say("onw.count.waiting", {"n": len(game._voted()), "count": len(game.players)})]
    missing = [p for p in game.players if p not in s.revealed]
    if s.step == "count" and not s.counted:  # the count closing says the reveal's prompt
        return [Say("onw.count.prompt", {"players": game._to_vote()})]
    if missing and not s.revealed and not s.counted:
        return [Say("onw.reveal.prompt.first", {"players": missing})]
    if missing:
        return [Say("onw.reveal.prompt", {"players": missing})]
    return [Say("onw.reveal.all_counted" if s.counted else "onw.reveal.executed_prompt")]


def resume_reveal(game: OneNight) -> list[Output]:
    return [Say("onw.resume.reveal", {"players": list(game.state.revealed)}), *game.prompt()]


def discussion_headline(game: OneNight) -> dict[str, Any]:
    """The discussion ends on its countdown (with the minutes asked for); paused, on none."""
    s = game.state
    return {"timer": None if s.paused else
            ("discussion", next_point(s.left_s, game._total_s, game.opts.warnings_s) + s.extra_s)}


def vote_headline(game: OneNight) -> dict[str, Any]:
    """The vote and the count count who has voted (tapped or on a phone), never for whom."""
    return {"count": {"done": len(game._voted()), "of": len(game.players), "what": "votes"}}


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
