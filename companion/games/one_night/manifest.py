"""One Night Werewolf as the rest of the system knows it (core.manifest): its
result published (a field added here is one a venue checks and keeps); the
winning team against the others at a venue; the boxes its tags come in
(``boxes``: ``companion tags`` lists, prints and writes each on its own)."""

from companion.core.manifest import Event, choice, counts, describe, names, roles, words
from companion.games.one_night.engine import OneNight
from companion.games.one_night.roles import boxes
from companion.games.one_night.verdict import WINNING_TEAMS

MANIFEST = describe(OneNight, events=(
    Event("onw_result", {
        "executed": names(),  # who dies by the vote (after a bodyguard's choice)
        "winning_team": choice(*WINNING_TEAMS),
        "winners": names(),
        "deck": counts(),  # {role: count}: public, the table chose it
        "final_roles": roles(),  # {player: role}, the doppelganger as doppelganger:<role>, a PI as pi:<role>
        "dead": names(),  # the executed and whom a hunter shot
        "winning_teams": words(),
        "artifacts": roles(),  # {player: artifact}, the Daybreak tokens shown at the reveal ({} without)
        "teams": roles(),  # {player: village|werewolf|tanner}, after the artifacts and the PI
    }),
), rating="teams")

__all__ = ["MANIFEST", "boxes"]
