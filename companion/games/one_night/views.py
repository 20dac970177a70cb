"""One Night Werewolf: what the table sees and hears at each step — the read side.

``view``, what an audience may see (the engine's one read function: the
board, the pages and the headline come from it), and what each step is to
the table — its prompt, its lines after a restart, whom it waits for, its
headline's count or countdown — which the step table in ``engine``
declares beside what each step takes.  All of it reads the state
(``state.Game``); nothing here changes it or arms a timer (the restarts
that re-arm one are ``steps``').
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.core.contract import View
from companion.core.countdown import next_point
from companion.core.events import Output, Say
from companion.games.one_night.roles import role_of, spoken
from companion.games.one_night.state import (
    Game,
    counting,
    discussion_s,
    executed,
    guarded,
    missing,
    phone_votes,
    tally_for,
    to_vote,
    voted,
)


def view(g: Game, seat: str | None = None) -> View:
    """What the table (``None``) or ``seat`` may see now — the one read
    function the engine's board, page and headline come from."""
    return table_view(g) if seat is None else seat_view(g, seat)


def table_view(g: Game) -> View:
    """The step and whom the table waits for.  By night nobody: naming the
    role called would give the night's order (and so the deck's) away.
    While the vote is open, the tally: the votes each player got as the
    pointing was said, how many have voted and who still has to (a phone's
    vote is counted in, never whom it is for); after the count, the votes
    each player got.  The executed once the table knows them (with a
    bodyguard in the deck, a counted vote's only after the reveal), and whom a
    dead hunter shot once the verdict decided it (``shot``).  Each card shown
    at the reveal (``cards``: player → the names of the role it is, by the
    edition's names: ``["robber"]``, the doppelganger's ``["doppelganger",
    "villager"]``) — turned face up, said aloud — and never one not yet shown.
    The artifact tokens shown at the reveal, on whose card each lies.  The edition
    and the deck (role → count) for the whole game: the table chose them,
    and they were said.  Its lines: the deck in play, the tally and who
    still has to vote, the executed and the shot."""
    s = g.state
    facts: dict[str, Any] = {"step": s.step, "whose_turn": g.waiting(),
                             "edition": g.edition, "deck": dict(g.deck)}  # public: the table chose it
    lines = deck_lines(g.edition, g.deck)
    if s.step == "discussion" and s.paused:  # no deadline while stopped: the time it goes on from ("Paused 2:00")
        facts["paused_s"] = s.left_s
    done = voted(g)
    # the count, as each vote was said aloud ("A vote for red: 2 of 5 have voted"); at the count even when 0 of 5
    if done or s.step == "count":
        tally = facts["tally"] = {"for": tally_for(s.votes, g.players), "done": len(done),
                                  "of": len(g.players), "still": to_vote(g)}
        lines += [("onw.board.votes_for_one" if n == 1 else "onw.board.votes_for", {"player": p, "n": n})
                  for p, n in tally["for"].items()]
        lines.append(("onw.board.voted", {"n": tally["done"], "count": tally["of"]}))
        if tally["still"]:
            lines.append(("onw.board.to_vote", {"players": tally["still"]}))
    if s.counted and guarded(g) and s.verdict is None:  # the bodyguards' choices are known after the reveal
        lines.append(("onw.board.guarded", {}))
    elif s.counted and not s.executed:
        lines.append(("onw.board.nobody_executed", {}))
    if s.executed:  # said aloud as the count or the taps decided it: kept to the end, and in the result
        facts["executed"] = executed(g)
        lines.append(("onw.board.executed", {"players": facts["executed"]}))
    if s.revealed:  # face up on the table and said aloud as each was shown: public from then on
        facts["cards"] = {p: card_names(g, p) for p in g.players if p in s.revealed}
    if s.artifacts:  # each shown face up at the reveal, on the card it lies on
        facts["artifacts"] = {p: s.artifacts[p] for p in g.players if p in s.artifacts}
        lines += [("onw.board.artifact", {"player": p, "artifact": f"artifact/{a}"})
                  for p, a in facts["artifacts"].items()]
    if s.verdict is not None and (shot := [p for p in s.verdict.dead if p not in facts.get("executed", [])]):
        facts["shot"] = shot  # the dead are the executed and the shot: each marked once
        lines.append(("onw.board.shot", {"players": shot}))
    return View(facts, lines)


def card_names(g: Game, player: str) -> list[str]:
    """The names (``name.<id>`` lines) of the card ``player`` showed: its role as the edition
    names it, then the role the doppelganger copied, the wolf or tanner a PI became."""
    s = g.state
    return [spoken(role_of(s.revealed[player]), g.edition),
            *(spoken(r, g.edition) for r in (s.copied.get(player), s.became.get(player)) if r)]


def deck_lines(edition: str, deck: Mapping[str, int]) -> list[tuple[str, dict[str, Any]]]:
    """The roles in play, as the deal said them: how many cards, then each role and its count."""
    return [("onw.board.deck", {"cards": sum(deck.values())}),
            *(("onw.board.deck_role_one" if n == 1 else "onw.board.deck_role",
               {"role": spoken(role, edition), "count": n})
              for role, n in deck.items())]


def seat_view(g: Game, player: str) -> View:
    """A player's own phone vote, while it may change and once counted."""
    vote = phone_votes(g).get(player)
    # a phone vote is shown from the call to the end of the game (after the count, as counted)
    if vote is None or not (g.state.step in ("vote", "count") or g.state.counted):
        return View()
    is_open = not g.state.counted
    return View({"vote": vote, "open": is_open},
                [("onw.page.vote_open" if is_open else "onw.page.vote", {"player": vote})])


def everyone(g: Game) -> list[str]:
    return list(g.players)


def count_waits(g: Game) -> list[str]:
    return [g.state.pending] if g.state.pending else to_vote(g)


def reveal_waits(g: Game) -> list[str]:
    return [g.state.pending] if g.state.pending else missing(g)


def reveal_prompt(g: Game) -> list[Output]:
    """The count's and the reveal's prompt (the state tells which is asked)."""
    s = g.state
    if s.pending:
        if counting(g):
            return [Say("onw.count.voter", {"player": s.pending})]
        if not s.revealed and not s.counted:  # a vote may follow, or the role card
            return [Say("onw.reveal.card_or_vote", {"player": s.pending})]
        return [Say("onw.reveal.role_card", {"player": s.pending})]
    if counting(g):
        return [Say("onw.count.waiting", {"n": len(voted(g)), "count": len(g.players)})]
    left = missing(g)
    if s.step == "count" and not s.counted:  # the count closing says the reveal's prompt
        return [Say("onw.count.prompt", {"players": to_vote(g)})]
    if left and not s.revealed and not s.counted:
        return [Say("onw.reveal.prompt.first", {"players": left})]
    if left:
        return [Say("onw.reveal.prompt", {"players": left})]
    return [Say("onw.reveal.all_counted" if s.counted else "onw.reveal.executed_prompt")]


def resume_reveal(g: Game) -> list[Output]:
    return [Say("onw.resume.reveal", {"players": list(g.state.revealed)}), *g.prompt()]


def discussion_headline(g: Game) -> dict[str, Any]:
    """The discussion ends on its countdown (with the minutes asked for); paused, on none."""
    s = g.state
    return {"timer": None if s.paused else
            ("discussion", next_point(s.left_s, discussion_s(g), g.opts.warnings_s) + s.extra_s)}


def vote_headline(g: Game) -> dict[str, Any]:
    """The vote and the count count who has voted (tapped or on a phone), never for whom."""
    return {"count": {"done": len(voted(g)), "of": len(g.players), "what": "votes"}}


def reveal_headline(g: Game) -> dict[str, Any]:
    """The reveal counts who has shown their cards (taps everyone saw)."""
    return {"count": {"done": len(g.state.revealed), "of": len(g.players), "what": "revealed"}}
