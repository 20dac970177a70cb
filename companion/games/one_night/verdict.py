"""Who dies and who wins, judged on the final cards (rules: *Who wins*, and
*Daybreak*'s rules 9–12).  Pure functions of plain data, so the reveal only
gathers what the table showed and asks.

``roles`` maps each player to their final role card; the doppelganger's holder
as ``doppelganger:<role>``, a PI who saw a wolf or a tanner as ``pi:<role>`` —
who *are* that role (team, ability, verdict).  ``artifacts`` maps a player to
the artifact token on their card (``claw``, … rule 9), which overrides it.
``votes`` maps each voter to whom they pointed at.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from companion.games.one_night.roles import ARTIFACTS, ROLES, Role
from companion.games.one_night.rules import count_votes

WINNING_TEAMS = ("village", "werewolf", "tanner", "nobody")


def acting(role: str) -> Role:
    """The role a final card plays: the doppelganger's copied one."""
    return ROLES[role.rpartition(":")[2]]


def playing(role: str, artifact: str | None = None) -> Role:
    """Rule 9, a player's final role: the card's (the doppelganger's or the
    PI's as what it became), unless a role-changing artifact lies on it
    (claw → werewolf, brand → villager, cudgel → tanner; void, mask and
    shroud change nothing)."""
    becomes = ARTIFACTS.get(artifact) if artifact else None
    return ROLES[becomes] if becomes else acting(role)


def teams(roles: Mapping[str, str], artifacts: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each player's team (village, werewolf or tanner) after artifacts and the PI (rule 10)."""
    return {p: playing(r, (artifacts or {}).get(p)).team for p, r in roles.items()}


def protected(roles: Mapping[str, str], votes: Mapping[str, str],
              artifacts: Mapping[str, str] | None = None) -> set[str]:
    """Rule 11: whom each bodyguard voted for (an executed bodyguard still
    protects; two protect two)."""
    return {votes[p] for p, r in roles.items() if playing(r, (artifacts or {}).get(p)).bodyguard and p in votes}


def hunters_to_ask(executed: Sequence[str], roles: Mapping[str, str], votes: Mapping[str, str],
                   artifacts: Mapping[str, str] | None = None, shielded: Collection[str] = ()) -> list[str]:
    """The dead hunters (so far) whose vote the table has not told: each is
    asked for the player they voted for."""
    return [p for p in dead(executed, roles, votes, artifacts, shielded)
            if playing(roles[p], (artifacts or {}).get(p)).hunter and p not in votes]


def dead(executed: Sequence[str], roles: Mapping[str, str], votes: Mapping[str, str],
         artifacts: Mapping[str, str] | None = None, shielded: Collection[str] = ()) -> list[str]:
    """The executed, then whom each dead hunter voted for, in turn (a hunter
    shot so shoots too): the chain ends at a player already dead, or at one a
    bodyguard protects (rule 11: the shot kills nobody)."""
    out = list(executed)
    for p in out:  # grows as hunters shoot
        if (playing(roles[p], (artifacts or {}).get(p)).hunter and (target := votes.get(p)) is not None
                and target not in out and target not in shielded):
            out.append(target)
    return out


@dataclass(frozen=True)
class Verdict:
    winning_team: str  # the first of winning_teams, or "nobody"
    winners: tuple[str, ...]  # seat order
    reason: str  # narration key naming the rule applied (the first of reasons)
    winning_teams: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    dead: tuple[str, ...] = ()


def verdict(players: Sequence[str], roles: Mapping[str, str], executed: Sequence[str],
            shot: Sequence[str] = (), artifacts: Mapping[str, str] | None = None) -> Verdict:
    """The rules' table.  ``executed`` by the vote; ``shot`` by the hunters;
    each player as their final role (``playing``: rule 9; the werewolves of
    rule 10 are the roles that are ``werewolf``).

    1 every tanner who dies wins (team ``tanner``);
    2 the village wins iff (a) a werewolf dies, or (b) no player holds a
      werewolf and nobody dies — or [ruling 6] only minions/madmen die;
    3 the werewolf team wins iff a player holds a werewolf, no werewolf dies
      and no tanner dies; with no werewolf held, the minions/madmen win iff
      somebody other than them dies and no tanner dies;
    4 several teams may win, or none; 5 a dead minion still wins with them.
    """
    died = [*executed, *(p for p in shot if p not in executed)]
    role = {p: playing(roles[p], (artifacts or {}).get(p)) for p in players}
    wolves = [p for p in players if role[p].werewolf]
    minions = [p for p in players if role[p].minion]
    tanners = [p for p in died if role[p].dies_to_win]
    teams: list[str] = []
    reasons: list[str] = []
    werewolf_winners: list[str] = []
    if tanners:
        reasons.append("onw.verdict.tanner_dies")
    if wolves:
        if dead_wolves := [p for p in died if role[p].werewolf]:
            teams.append("village")
            reasons.append("onw.verdict.werewolf_executed" if any(p in executed for p in dead_wolves)
                           else "onw.verdict.werewolf_shot")
        elif tanners:
            reasons.append("onw.verdict.tanner_denies")
        else:
            teams.append("werewolf")
            werewolf_winners = wolves + minions
            reasons.append("onw.verdict.werewolves_survive")
    elif not died:
        teams.append("village")
        reasons.append("onw.verdict.no_werewolf_nobody_executed")
    elif all(p in minions for p in died):  # [ruling 6]
        teams.append("village")
        reasons.append("onw.verdict.only_minions_die")
    elif minions and not tanners:
        teams.append("werewolf")
        werewolf_winners = minions
        reasons.append("onw.verdict.minion_wins")
    elif not tanners:
        reasons.append("onw.verdict.no_werewolf_someone_executed")
    if tanners:
        teams.append("tanner")
    teams.sort(key=WINNING_TEAMS.index)
    winners = {p for p in players if "village" in teams and role[p].team == "village"}
    winners |= set(werewolf_winners) | set(tanners)
    return Verdict(teams[0] if teams else "nobody", tuple(p for p in players if p in winners), reasons[0],
                   tuple(teams), tuple(reasons), tuple(died))


def executed(players: Sequence[str], roles: Mapping[str, str], votes: Mapping[str, str],
             artifacts: Mapping[str, str] | None = None) -> list[str]:
    """Who dies by a counted vote once every final role is known (seat
    order): the most votes, a bodyguard's choice passed over (rule 11)."""
    return count_votes(players, votes, protected(roles, votes, artifacts))


def result_fields(roles: Mapping[str, str], artifacts: Mapping[str, str] | None = None) -> dict[str, dict[str, str]]:
    """What Daybreak adds to ``onw_result``: ``artifacts`` {player: artifact}
    and ``teams`` {player: village|werewolf|tanner} after artifacts and the PI."""
    found = artifacts or {}
    return {"artifacts": {p: found[p] for p in roles if p in found}, "teams": teams(roles, found)}
