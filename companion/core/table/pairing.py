"""The pairing gate: a game that needs every player's page waits, seated and
counted, until the last phone is paired; then the game begins (``begin``).
Functions of the table (phases.py names them)."""

from __future__ import annotations

from companion.core import display_names
from companion.core.contract import Setup
from companion.core.events import Housekeeping, Input, Output, Refusal, Report, Say, Tap
from companion.core.steps import Goto
from companion.core.table.shape import TableShape
from companion.core.table.state import PAGES_OFF, PLAYING, TableState


def pairing_prompt(t: TableShape) -> list[Output]:
    """Who still has to pair, and what the game has the table set out meanwhile."""
    game = t.state.game or ""
    cls = t.games[game]
    opts = dict(t.settings["options"]).get(game, {})
    return [*cls.pairing_lines(t.players, t.state.rules, opts),
            Say("pairing.needed", {"game": f"game/{game}", "players": t.unpaired()})]


def pairing_refusal(t: TableShape, kind: str, inp: Input) -> Refusal:
    if isinstance(inp, Tap) and kind == "player":
        # no phone was waiting for this card: the page asks first
        return Refusal("pairing.refuse.page_first", "pick your seat on your phone's page first, then tap",
                       player=t.player_name(inp.identity))
    return Refusal("pairing.refuse.missing", "every phone must be paired first", players=t.unpaired())


def begin(t: TableShape, back_to: TableState) -> Goto:
    """The game begins: it plays once the driver has moved the phase."""
    st = t.state
    game = st.game or ""
    cls = t.games[game]
    opts = dict(t.settings["options"]).get(game, {})
    players = t.players
    st.games_started += 1
    t.engine = cls(Setup(tuple(players), tuple(st.rules), opts, tuple(st.cards)))
    st.last = {"game": game, "rules": list(st.rules), "seats": list(st.seats), "cards": list(st.cards)}
    t.snapshots = [back_to]
    st.result = None  # the next game has started: the last one's result is in the history
    st.record_names = display_names.record_names(st.seats, {i: t.name_of(i) for i in st.seats}, st.called)
    started = Report("game_started", {"game": game, "rules": list(st.rules), "players": players})
    return Goto(PLAYING, [started, *t.engine.start()])


def check_pages(t: TableShape, game: str) -> None:
    if t.games[game].needs_pages and t.pages == PAGES_OFF:
        raise no_pages(game)


def no_pages(game: str) -> Refusal:
    return Refusal("pairing.refuse.no_pages", f"{game} needs the players' phones: turn the web pages on",
                   game=f"game/{game}")


def paired(t: TableShape, inp: Housekeeping) -> list[Output]:
    """A phone became this seat's page: a fact, in force at once."""
    st, seat = t.state, str(inp.data.get("seat", ""))
    if not seat:
        raise Refusal("refuse.not_now", "a pairing names its seat")
    if seat not in st.paired:
        st.paired.append(seat)
    return [Say("pairing.done", {"player": t.name_of(seat)})]


def paired_at_the_gate(t: TableShape, inp: Housekeeping) -> list[Output] | Goto:
    """At the gate: the last phone paired starts the game."""
    out = paired(t, inp)
    if missing := t.unpaired():
        return [*out, Say("pairing.missing", {"players": missing})]
    return begin(t, t.snapshots.pop()).after(*out, Say("pairing.all_in"))
