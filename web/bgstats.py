"""A finished play in BG Stats' push format, and its one-tap link.

BG Stats (the board-game logging app) takes a play pushed as JSON in
``https://app.bgstatsapp.com/createPlay.html?data=<JSON>`` (its published
format, "Push plays to BG Stats from other apps"): ``sourceName``,
``sourcePlayId``, ``playDate`` (local time, ``YYYY-MM-DD HH:MM:SS``),
``durationMin``, ``location`` (a name: a string, not an object), ``game``
{name, sourceGameId, highestWins, noPoints, bggId (a number, where known)} and
``players`` [{name, score, winner, startPlayer, role, sourcePlayerId}].  The
file export is the same records, so an import and a push agree.  No bggId is
given: we know of none for these games we could vouch for, and a wrong one
would file the plays under another game (BG Stats matches by name then, and
remembers the user's match).

No game is named here: each game's name and scoring come with the call
(``games``: the app's ``catalogue.export_games``, from the games' folders).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

PUSH = "https://app.bgstatsapp.com/createPlay.html?data="
SOURCE = "Table companion"



@dataclass(frozen=True)
class ExportGame:
    """A game as BG Stats files it: its name, and how it is scored."""

    name: str
    highest_wins: bool = True
    no_points: bool = False  # a side wins; the totals are only 1 or 0


def local_date(utc: str) -> str:
    """The journal's UTC play date in this machine's local time, same format."""
    moment = datetime.strptime(utc, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def record(play: Mapping[str, Any], location: str = "Home",
           games: Mapping[str, ExportGame] | None = None) -> dict[str, Any]:
    """One journal play as BG Stats' play (a game with roles: its players
    carry their final role); a game not in ``games`` goes by its id."""
    game = (games or {}).get(play["game"]) or ExportGame(play["game"])
    players = []
    for p in play["players"]:
        player = {"name": p["name"], "score": p["score"], "winner": bool(p["winner"]),
                  "startPlayer": bool(p["startPlayer"]), "sourcePlayerId": p.get("sourcePlayerId", p["name"])}
        if p.get("role"):
            player["role"] = p["role"]
        players.append(player)
    return {
        "sourceName": SOURCE,
        "sourcePlayId": f"{play.get('evening', 0)}-{play['id']}-{play['playDate']}",
        "playDate": local_date(play["playDate"]),
        "durationMin": play["durationMin"],
        "location": location,
        "game": {"name": game.name, "sourceGameId": play["game"], "highestWins": game.highest_wins,
                 "noPoints": game.no_points},
        "players": players,
    }


def push_url(play: Mapping[str, Any], location: str = "Home",
             games: Mapping[str, ExportGame] | None = None) -> str:
    data = json.dumps(record(play, location, games), ensure_ascii=False, separators=(",", ":"))
    return PUSH + quote(data, safe="")
