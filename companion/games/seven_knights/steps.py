"""Seven Knights Bewitched: what each step does with what it takes — the
election, the command (§4), the formation, the scoring (§5, §6) and the
round's end: the handlers and guards, each a function of the game
(``state.Game``) and the value ``kind_of`` gave.  The step table
(``engine``) says which handler takes what, and where it leads; only these
functions change the state."""

from __future__ import annotations

from companion.core.engine import Goto
from companion.core.events import Output, Refusal, Report, Say
from companion.games.seven_knights.rules import (
    KNIGHTS,
    ROUNDS,
    WITCH,
    elect,
    judge,
    round_points,
    winners,
)
from companion.games.seven_knights.state import (
    GAME,
    Game,
    KnightsState,
    concede_hint,
    must_ask_for_the_captain,
    round_line,
    witch_holder_missing,
    witch_in_front,
)


def tile_refusal(g: Game, tile: str, *, own: bool = False) -> Refusal | None:
    """A tile outside this game's tile set; as a player's own tile
    (``own``), also the witch where it is never dealt (special: it can
    only lie in the centre, so it may still be laid or left out)."""
    if tile not in g.tiles:
        return Refusal("skb.refuse.not_in_tile_set",
                       f"{tile} is not used by {g.rule_name} with {len(g.players)} players",
                       tile=tile)
    if own and tile == WITCH and not g.rule.witch_dealt:
        return Refusal("skb.refuse.witch_not_dealt", "the witch is never dealt to a player in this rule set",
                       tile=tile)
    return None


def own_tile_refusal(g: Game, tile: str) -> Refusal | None:
    return tile_refusal(g, tile, own=True)


# ------------------------------------------------ before the command phase
def next_phase(g: Game, _: str) -> Goto:
    return Goto(prompt=True)  # quest → questions → recommendation: the table says


def election_begun(g: Game, _: str) -> Refusal | None:
    st = g.state
    if st.votes or st.voter:
        missing = len(g.players) - len(st.votes)
        return Refusal("skb.refuse.election_unfinished",
                       f"{missing} players have not recommended yet", n=missing)
    return None


def skip_election(g: Game, _: str) -> Goto:
    return Goto("command", prompt=True)


def recommended(g: Game, player: str) -> Refusal | None:
    st = g.state
    if st.voter is None and player in st.votes:
        return Refusal("skb.refuse.already_recommended", f"{player} has recommended already", player=player)
    return None


def recommend(g: Game, player: str) -> list[Output] | Goto:
    """Own card first, then the recommended player's card (self allowed)."""
    st = g.state
    if st.voter is None:
        st.voter = player
        return [Say("skb.vote.voter", {"player": player})]
    st.votes[st.voter] = player
    st.voter = None
    out: list[Output] = [Say("skb.vote.recorded", {"player": player, "n": len(st.votes),
                                                   "count": len(g.players)})]
    if len(st.votes) < len(g.players):
        return out
    st.election = dict(st.votes)
    st.captain = elect(g.players, st.start_seat, st.votes)
    count = sum(1 for choice in st.votes.values() if choice == st.captain)
    return Goto("command", [*out, Say("skb.election.captain", {"player": st.captain, "n": count})], prompt=True)


# ------------------------------------------------------------ command (§4)
def early_tile(g: Game, tile: str) -> Goto:
    """A tile tapped before the command phase: "the captain is ready", but
    it may have slipped over the reader (§ What the companion can know),
    so it is neither named nor checked — the line, and the beep, are the
    same whatever the tile — until ``next`` confirms it (``back`` drops it)."""
    g.state.early_tile = tile
    return Goto("captain_ready", prompt=True)


def early_tile_refusal(g: Game, _: str) -> Refusal | None:
    """The early tile as the captain's own (a secret until next: ``blind``)."""
    assert g.state.early_tile is not None
    return own_tile_refusal(g, g.state.early_tile)


def reveal_early_tile(g: Game, _: str) -> Goto:
    tile, g.state.early_tile = g.state.early_tile, None
    assert tile is not None
    go = captain_tile(g, tile)
    # The command phase's prompt (with the hint) was skipped: a concession is first possible now.
    return Goto(go.step, [*go.outputs[:1], *concede_hint(g), *go.outputs[1:]], go.prompt) \
        if tile != WITCH else go


def captain_tile(g: Game, tile: str) -> Goto:
    """The captain reveals their own tile (an unfinished election is dropped)."""
    st = g.state
    st.votes, st.voter = {}, None
    st.captain_tile = tile
    if tile != WITCH:
        return Goto("formation", [Say("skb.captain.knight", {"tile": tile})], prompt=True)
    # Captain's tile is the witch: the witch team wins at once.  The tile
    # is public now, so a known captain is known to hold it.
    if st.captain is not None:
        st.witch_team = [st.captain]
    return decide(g, "captain_witch").after(Say("skb.captain.witch", {"tile": tile}))


def concede_refusal(g: Game, player: str) -> Refusal | None:
    st = g.state
    if not g.rule.witch_team:
        return Refusal("skb.refuse.not_now", "nobody is bewitched in the cooperative rule set")
    if st.captain is not None and player != st.captain:
        return Refusal("skb.refuse.only_captain_concedes", f"only the captain, {st.captain}, can concede",
                       player=st.captain)
    return None


def concede(g: Game, player: str) -> list[Output] | Goto:
    """A bewitched captain may concede (FAQ): they tap their own card
    twice.  Once the captain is known, only the captain can."""
    st = g.state
    if st.conceding != player:
        st.conceding = player
        return [Say("skb.concede.confirm", {"player": player})]
    st.captain, st.conceding = player, None
    st.witch_team = [player]
    return decide(g, "captain_bewitched").after(Say("skb.concede.done", {"player": player}))


def decide(g: Game, reason: str) -> Goto:
    """The witch team has won before the formation was judged."""
    st = g.state
    st.verdict, st.reason, st.reported = "witch", reason, True
    report = Report("formation", {"tiles": list(st.formation), "excluded": list(st.excluded),
                                  "verdict": "witch"})
    return Goto("witch_team", [report, Say(f"skb.verdict.witch.{reason}")], prompt=True)


# ---------------------------------------------------------- formation (§4)
def new_tile_refusal(g: Game, tile: str) -> Refusal | None:
    if refusal := tile_refusal(g, tile):
        return refusal
    if tile in g.state.formation or tile in g.state.excluded:
        return Refusal("skb.refuse.tile_twice", f"{tile} is tapped already", tile=tile)
    return None


def lay_refusal(g: Game, tile: str) -> Refusal | None:
    if refusal := new_tile_refusal(g, tile):
        return refusal
    if len(g.state.formation) >= g.on_table:
        return Refusal("skb.refuse.too_many_tiles", f"only {g.on_table} tiles lie on the table",
                       n=g.on_table)
    return None


def lay(g: Game, tile: str) -> list[Output]:
    st = g.state
    st.formation.append(tile)
    return [Say("skb.formation.tile", {"tile": tile, "n": len(st.formation)})]


def captain_tile_missing(g: Game, _: str) -> Refusal | None:
    """``next`` ends the formation; the captain's own tile must be in it
    (the captain lays it, §4)."""
    st = g.state
    if st.captain_tile not in st.formation:
        return Refusal("skb.refuse.captain_tile_missing", "the captain's own tile belongs in the formation",
                       tile=st.captain_tile)
    return None


def formation_laid(g: Game, _: str) -> Goto:
    st = g.state
    if len(st.formation) == g.on_table:
        return formation_complete(g)
    return Goto("left_out", prompt=True)


def leave_out(g: Game, tile: str) -> list[Output] | Goto:
    st = g.state
    st.excluded.append(tile)
    out: list[Output] = [Say("skb.left_out.tile", {"tile": tile})]
    if len(st.formation) + len(st.excluded) < g.on_table:
        return out
    return formation_complete(g).after(*out)


def formation_complete(g: Game) -> Goto:
    if not g.rule.witch_team:  # cooperative: straight to the verdict
        return score(g, "next")
    return Goto("witch_team", [Say("skb.formation.done")], prompt=True)


# ------------------------------------------------------ scoring (§5, §6)
def joined(g: Game, player: str) -> Refusal | None:
    if player in g.state.witch_team:
        return Refusal("skb.refuse.player_twice", f"{player} has tapped already", player=player)
    return None


def join_witch_team(g: Game, player: str) -> list[Output]:
    st = g.state
    st.witch_team.append(player)
    return [Say("skb.witch_team.joined", {"player": player})]


def holder_refusal(g: Game, _: str) -> Refusal | None:
    """Scoring is refused while the witch tile lay in front of a player and
    nobody who could hold it tapped; the reason said is one the table saw:
    the witch tapped, else the deal (after a concession, say)."""
    if not witch_holder_missing(g):
        return None
    st = g.state
    if st.captain_tile != WITCH and WITCH not in (*st.formation, *st.excluded):
        return Refusal("skb.refuse.witch_dealt",
                       "every tile was dealt, so the witch is in front of a player: its holder must tap")
    return Refusal("skb.refuse.witch_holder_must_tap", "the witch's holder must tap their player card")


def score(g: Game, _: str) -> Goto:
    """Judge the round and hand out score cards (the holder is in: the
    guard, ``_holder_refusal``, or the step that led here saw to it)."""
    st = g.state
    if must_ask_for_the_captain(g):
        return Goto("captain_check", prompt=True)
    out: list[Output] = []
    if st.verdict is None:
        verdict = judge(st.formation, st.excluded, captain_tile=st.captain_tile,
                        captain_bewitched=st.captain in st.witch_team,
                        witch_team=st.witch_team, has_witch_team=g.rule.witch_team)
        st.verdict, st.reason = verdict.winner, verdict.reason
        out += [Report("formation", {"tiles": list(st.formation), "excluded": list(st.excluded),
                                     "verdict": verdict.winner}),
                *verdict_lines(g)]
    out += conduct(g)
    points = round_points(st.verdict, st.round, g.players, st.witch_team)
    for p in g.players:
        st.totals[p] += points[p]
    st.scored.append({"round": st.round, "points": dict(points), "totals": dict(st.totals)})
    out.append(Report("round_scored", {"game": GAME, **st.scored[-1]}))
    out += [Say("skb.score.player", {"player": p, "points": points[p], "total": st.totals[p]})
            for p in g.players]
    if st.round < ROUNDS:
        return Goto("round_over", out, prompt=True)
    st.winners = winners(g.players, st.totals)
    out.append(Report("game_over", {"game": GAME, "totals": dict(st.totals),
                                    "winners": list(st.winners)}))
    return Goto("game_over", out, prompt=True)


def name_captain(g: Game, player: str) -> Goto:
    """The captain check's answer, and nothing else: if the captain was
    the only one who tapped for the witch team, the witch's holder is
    still missing and is asked for in a step of its own (a tap here is
    never taken as the holder's, nor the holder's as the captain's)."""
    st = g.state
    st.captain, st.captain_checked = player, True
    if witch_holder_missing(g):
        return Goto("witch_holder", [Say("skb.captain_check.named", {"player": player})], prompt=True)
    return score(g, "next")


def holder_named(g: Game, player: str) -> Refusal | None:
    if player == g.state.captain:
        return Refusal("skb.refuse.captain_holds_a_knight",
                       f"{player}, the captain, holds a knight: the witch's holder must tap", player=player)
    return joined(g, player)


def name_witch_holder(g: Game, player: str) -> Goto:
    joined = join_witch_team(g, player)  # in the witch team before the round is scored
    return score(g, "next").after(*joined)


def captain_not_bewitched(g: Game, _: str) -> Goto:
    g.state.captain_checked = True
    return score(g, "next")


def conduct(g: Game) -> list[Output]:
    """§ Conduct: the witch may not recommend a bewitched player, nor a
    bewitched player the witch.  Public once the witch team has tapped;
    said (and logged) only where it is certain: a witch-team member
    recommended another, and the witch's holder — it lay in front of a
    player — can only be one of the two.  The verdict stands ([ruling])."""
    st = g.state
    if not st.election or not witch_in_front(g):
        return []
    if st.captain_tile == WITCH and st.captain is not None:
        holders = {st.captain}  # an elected captain revealed the witch
    else:
        known_knight = st.captain if st.captain_tile in KNIGHTS else None
        holders = {p for p in st.witch_team if p != known_knight}
    broken = [(voter, choice) for voter, choice in st.election.items()
              if voter != choice and voter in st.witch_team and choice in st.witch_team
              and holders <= {voter, choice}]
    if not broken:
        return []
    return [Report("conduct", {"round": st.round, "recommendations": [list(b) for b in broken]}),
            *(Say("skb.conduct.note", {"voter": v, "player": c}) for v, c in broken)]


def verdict_lines(g: Game) -> list[Output]:
    st = g.state
    if st.reason == "captain_bewitched":
        return [Say("skb.verdict.witch.captain_bewitched")]
    if st.verdict == "knights":
        holds = "skb.formation.holds" if g.rule.witch_team else "skb.formation.holds.cooperative"
        return [Say(holds), Say("skb.verdict.knights")]
    failed = Say(f"skb.formation.failed.{st.reason}",
                 {"tiles": [t for t in st.excluded if t != WITCH] if st.reason == "knight_left_out"
                  else list(st.formation)})
    if st.verdict == "witch":
        return [failed, Say("skb.verdict.witch")]
    why = "empty_witch_team" if g.rule.witch_team else "cooperative"
    return [failed, Say(f"skb.verdict.nobody.{why}")]


def next_round(g: Game, _: str) -> Goto:
    st = g.state
    if g.options.start_marker == "pass":
        st.start_seat = (st.start_seat + 1) % len(g.players)
    # a new round's state, its step kept until the table moves it (to the quest)
    g.state = KnightsState(step=st.step, round=st.round + 1, start_seat=st.start_seat, totals=st.totals,
                           scored=st.scored)
    return Goto("quest", [round_line(g)], prompt=True)
