"""One Night's count and reveal: the optional vote count (the pointing,
tapped, and the votes sealed on the phones), each player's final card (the
doppelganger's holder shows the role it copied), the executed, a dead
hunter's vote, then the verdict — the handlers and guards ``engine``'s step
table names for the steps ``vote``, ``count``, ``reveal`` and ``hunter``,
each a function of the game (``state.Game``) and the input.

A phone vote (``submit`` of ``vote``) lives in ``sealed["vote"]`` (which the
table's ``back`` never touches) until every player has voted, by phone or by
the table's taps; then all are counted as the pointing is.  Who has voted is
public (the count says "3 of 5 have voted"), for whom never before the count:
nothing a phone vote changes is public but that count, and a changed vote
changes nothing public at all.
"""

from __future__ import annotations

from companion.core.engine import Ask, Goto
from companion.core.events import Input, Output, Press, Refusal, Report, Say, Submit, Tap, Tell
from companion.games.one_night import tokens
from companion.games.one_night.roles import card_of, role_of, spoken
from companion.games.one_night.rules import count_votes, most_executed
from companion.games.one_night.state import (
    Game,
    all_votes,
    counting,
    executed,
    final_roles,
    guarded,
    hunters,
    missing,
    phone_votes,
    shielded,
    tally_for,
    to_vote,
    voted,
)
from companion.games.one_night.verdict import dead as verdict_dead
from companion.games.one_night.verdict import executed as guarded_executed
from companion.games.one_night.verdict import playing, result_fields, verdict


# ---------------------------------------------------------------- reveal
def reveal_incomplete(g: Game, _: Press) -> Refusal | None:
    left = missing(g)
    if left or g.state.pending or g.state.copying:
        return Refusal("onw.refuse.reveal_incomplete", "not everyone has revealed their card", players=left)
    return None


def reveal_done(g: Game, _: Press) -> list[Output] | Goto:
    s = g.state
    if s.counted and guarded(g):  # every card is shown: the bodyguards' choices are known (rule 11)
        s.executed = guarded_executed(g.players, final_roles(g), s.votes, s.artifacts)
    s.shown = None
    return Goto("hunter", prompt=True) if hunters(g) else Goto("done", judge(g))


# ---------------------------------------------------------------- hunter
def hunter_refusal(g: Game, inp: Tap) -> Refusal | None:
    if g._player_of(inp) is None:
        return Refusal("onw.refuse.hunter", "tap the card of the player the hunter voted for")
    return None


def hunter_shot(g: Game, inp: Tap) -> Goto:
    hunter, target = hunters(g)[0], g._player_of(inp)
    assert target is not None
    g.state.shots[hunter] = target
    said = [Say("onw.hunter.voted", {"player": hunter, "target": target})]
    if hunters(g):
        return Goto("hunter", said, prompt=True)
    return Goto("done", [*said, *judge(g)])


def reveal_refusal(g: Game, inp: Tap) -> Refusal | None:
    """A player card (the pointing of the count, a reveal, an execution)
    or a role card, when the reveal cannot take it (``player_card_refusal``,
    ``role_card_refusal``)."""
    if (player := g._player_of(inp)) is not None:
        return player_card_refusal(g, player)
    if inp.identity.startswith("onw/"):
        if tokens.is_token(g, inp.identity):
            return tokens.token_refusal(g, inp.identity)
        return role_card_refusal(g, inp.identity)
    return Refusal("onw.refuse.foreign", f"{inp.identity} is not a One Night card", card=inp.identity)


def reveal_tap(g: Game, inp: Tap) -> list[Output]:
    left = missing(g)
    if (player := g._player_of(inp)) is not None:
        return player_card(g, player, left)
    if tokens.is_token(g, inp.identity):
        return tokens.token(g, inp.identity)
    return role_card(g, inp.identity)


def player_card_refusal(g: Game, player: str) -> Refusal | None:
    s, left = g.state, missing(g)
    if s.copying:
        return Refusal("onw.refuse.copied_expected", f"tap a card of the role {s.copying} copied",
                       player=s.copying)
    if s.pending:
        if s.revealed or s.counted:  # the count is only before the first card is shown
            return Refusal("onw.refuse.role_card_expected", f"tap {s.pending}'s role card first",
                           player=s.pending)
        if s.pending in phone_votes(g):  # their vote is in: the pair would be a second one
            return Refusal("onw.refuse.already_voted", f"{s.pending} has voted already",
                           player=s.pending, n=len(to_vote(g)))
        return None
    if left:
        if counting(g) and player in voted(g):
            return Refusal("onw.refuse.already_voted", f"{player} has voted already",
                           player=player, n=len(to_vote(g)))
        if player in s.revealed:
            # Revealing twice, or an executed player tapped too early: both wait for the others.
            return Refusal("onw.refuse.already_revealed",
                           f"{player} has revealed; executed players come after everyone has",
                           player=player, players=left)
        return None
    if s.counted:  # the count said who is executed (or that nobody is): it holds
        return Refusal("onw.refuse.votes_counted", "the vote was counted: press next", player=player)
    if player in s.executed:
        return Refusal("onw.refuse.executed_twice", f"{player} is already marked executed", player=player)
    most = most_executed(len(g.players))
    if len(s.executed) >= most:
        return Refusal("onw.refuse.impossible_execution",
                       f"{len(g.players)} votes cannot execute more than {most} players",
                       count=len(g.players), most=most)
    return None


def player_card(g: Game, player: str, left: list[str]) -> list[Output]:
    """The count's pointing (a card pending, before any reveal), a player
    about to reveal, or — everyone revealed — an executed player."""
    s = g.state
    s.shown = None  # a player card ends the tokens of the card shown before it
    if s.pending:
        return vote_for(g, player)
    if left:
        s.pending = player
        return g.prompt()
    s.executed.append(player)
    return [Say("onw.reveal.executed", {"player": player})]


def vote_for(g: Game, choice: str) -> list[Output]:
    """The second card of a pair before the first reveal: the pending
    player points at ``choice``.  Once every player has voted (here or on
    a phone), the count decides the executed."""
    s = g.state
    voter, s.pending = s.pending, None
    assert voter is not None
    s.votes[voter] = choice
    out: list[Output] = [Say("onw.count.recorded", {"player": choice,
                                                    "n": len(voted(g)), "count": len(g.players)})]
    if to_vote(g):
        return out
    return [*out, *close_count(g), *g.prompt()]  # the reveal's: the state tells


def close_count(g: Game) -> list[Output]:
    """Every player has voted: the phones' sealed votes join the pointing
    the table tapped, and the count decides the executed (a tie executes
    all tied; one vote each, nobody).  The phones' votes are said as the
    totals each player got, never who voted for whom."""
    s = g.state
    phones = {p: c for p, c in phone_votes(g).items() if p not in s.votes}
    s.votes.update(phones)
    s.counted = True
    out: list[Output] = []
    if phones:
        got = tally_for(s.votes, g.players)
        out += [Say("onw.count.total_one" if n == 1 else "onw.count.total", {"player": p, "n": n})
                for p, n in got.items()]
    if guarded(g):  # who holds a bodyguard, and so whom it shields, is known only after the reveal
        return [*out, Say("onw.count.guarded")]
    s.executed = count_votes(g.players, s.votes)
    if not s.executed:
        return [*out, Say("onw.count.everyone_tied")]
    top = sum(1 for c in s.votes.values() if c == s.executed[0])
    key = "onw.count.executed" if len(s.executed) > 1 else "onw.count.executed_one"
    return [*out, Say(key, {"players": list(s.executed), "n": top})]


# ------------------------------------------------------------ phone votes
def vote_asks(g: Game, player: str) -> dict[str, Ask]:
    """A phone's vote, from the call until the count or the first card
    shown: any other player; changed freely until then.  Not for a player
    whose pointing the table tapped."""
    if player in g.state.votes or player not in g.players:
        return {}
    return {"vote": Ask("onw.field.vote", choices=tuple(p for p in g.players if p != player))}


def phone_vote_refusal(g: Game, inp: Submit) -> Refusal | None:
    asks = vote_asks(g, inp.player)
    if inp.field != "vote":
        return Refusal("onw.refuse.submit_not_now", f"{inp.field} is not taken now")
    if "vote" not in asks:
        return Refusal("onw.refuse.already_voted", f"{inp.player} has voted already",
                       player=inp.player, n=len(to_vote(g)))
    if problem := asks["vote"].check(inp.value):
        return Refusal("onw.refuse.vote_choice", f"the vote {problem}")
    return None


def phone_vote(g: Game, inp: Submit) -> list[Output] | Goto:
    """Sealed, acknowledged on that phone only; the last vote in closes the
    count (once the call's "three!" is said: the count step)."""
    g.sealed.setdefault("vote", {})[inp.player] = inp.value
    if g.state.pending == inp.player:  # their card was tapped for the pointing: the phone voted instead
        g.state.pending = None
    out: list[Output] = [Tell(inp.player, "onw.vote.taken", {"player": inp.value}, {"vote": inp.value})]
    # before "three!" the vote is not yet called: the last phone vote closes only an open count
    if g.state.step != "count" or to_vote(g):
        return out
    return Goto("reveal", [*out, *close_count(g)], prompt=True)


def vote_label(g: Game, inp: Input) -> str | None:
    """A changed phone vote is that phone's business alone (its acceptance
    is not public, so the pages show no trace of it); a first one is
    public as the count's "3 of 5 have voted" is."""
    if isinstance(inp, Submit) and inp.field == "vote" and inp.player in phone_votes(g):
        return ""
    return None


def count_tap(g: Game, inp: Tap) -> list[Output] | Goto:
    """A tap of the count: once the count is closed, or a first card shown
    (the table skips the count), it is the reveal."""
    out = reveal_tap(g, inp)
    s = g.state
    return Goto("reveal", out) if s.counted or s.revealed or s.copying else out


def role_card_refusal(g: Game, card: str) -> Refusal | None:
    s, card = g.state, card_of(card, g.edition)
    if s.copying is not None:  # any card of a role in the deck, shown before or not
        if role_of(card) not in g.deck or role_of(card) == "doppelganger":
            return Refusal("onw.refuse.not_copied", f"{role_of(card)} is not a role the doppelganger could copy",
                           role=spoken(role_of(card), g.edition), player=s.copying)
        return None
    if card not in g.cards:
        return Refusal("onw.refuse.not_in_deck", f"{card} is not in this game's deck",
                       card=card, count=len(g.players))
    holder = next((p for p, c in s.revealed.items() if c == card), None)
    if holder is not None:
        return Refusal("onw.refuse.card_twice", f"{card} was already revealed by {holder}",
                       card=card, role=role_of(card), player=holder)
    if not missing(g):
        return Refusal("onw.refuse.all_revealed", f"everyone has revealed; {card} is in the centre",
                       card=card, role=role_of(card))
    if s.pending is None:
        return Refusal("onw.refuse.player_first", "tap your player card before your role card",
                       card=card, role=role_of(card))
    if counting(g):
        return Refusal("onw.refuse.votes_incomplete", "finish the vote count first",
                       n=len(to_vote(g)), player=s.pending)
    return None


def role_card(g: Game, card: str) -> list[Output]:
    s, card = g.state, card_of(card, g.edition)
    if s.copying is not None:  # the doppelganger's holder shows the role they became
        player, s.copying = s.copying, None
        s.copied[player] = role_of(card)
        out: list[Output] = [Say("onw.reveal.copied", {"player": player,
                                                       "role": spoken(role_of(card), g.edition)})]
    else:
        assert s.pending is not None  # the guard saw to it
        player, s.pending = s.pending, None
        s.revealed[player] = card
        if role_of(card) == "doppelganger":
            s.copying = player
            return [Say("onw.reveal.doppelganger", {"player": player})]
        out = [Say("onw.reveal.role", {"player": player, "role": spoken(role_of(card), g.edition)})]
    s.shown = player  # an artifact token on the card (the PI: the card they became) may follow
    if len(s.revealed) == len(g.players):
        out.append(Say("onw.reveal.all_counted" if s.counted else "onw.reveal.all_done"))
    return out


def judge(g: Game) -> list[Output]:
    s = g.state
    roles, dying = final_roles(g), executed(g)
    votes, shields = all_votes(g), shielded(g)
    shot = [p for p in verdict_dead(dying, roles, votes, s.artifacts, shields) if p not in dying]
    v = s.verdict = verdict(g.players, roles, dying, shot, s.artifacts)
    # a dead hunter's shot at a player a bodyguard protects kills nobody (rule 11): said, so nobody wonders
    missed = [(p, votes[p]) for p in v.dead if playing(roles[p], s.artifacts.get(p)).hunter
              and votes.get(p) in shields and votes[p] not in v.dead]
    return [
        Say("onw.verdict.executed", {"players": dying}) if dying
        else Say("onw.verdict.nobody_executed"),
        *([Say("onw.verdict.shot", {"players": shot})] if shot else []),
        *(Say("onw.verdict.shielded", {"player": p, "target": t}) for p, t in missed),
        *(Say(reason) for reason in v.reasons),
        Say("onw.verdict.winners", {"players": list(v.winners)}) if v.winners
        else Say("onw.verdict.no_winners"),
        Report("onw_result", {"executed": dying, "winning_team": v.winning_team,
                              "winners": list(v.winners), "deck": dict(g.deck), "final_roles": roles,
                              "dead": list(v.dead), "winning_teams": list(v.winning_teams),
                              **result_fields(roles, s.artifacts)}),
    ]
