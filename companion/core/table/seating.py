"""Before a game: the language card, a game card (or next: the same game
again), rule cards and player cards in seat order, back, then next.  The
handlers and guards of the idle and gathering phases (phases.py), functions
of the table."""

from __future__ import annotations

import copy

from companion.core.events import Input, Output, Press, Refusal, Say, Tap
from companion.core.steps import Goto
from companion.core.table.pairing import begin, check_pages, no_pages, pairing_prompt
from companion.core.table.shape import TableShape
from companion.core.table.state import GATHERING, PAGES_OFF, PAGES_ON, PAIRING, TableState


def language(t: TableShape, inp: Tap) -> list[Output]:
    t.state.lang = inp.identity.split("/", 1)[1]
    return [Say("table.language")]


def quiet(t: TableShape, _: Input) -> Refusal | None:
    return Refusal("refuse.quiet", "not during the night") if t.eyes_closed else None


# idle: waiting for a game card (or next: the same game again)
def idle_refusal(t: TableShape, kind: str, _: Input) -> Refusal:
    if kind == "back":
        return Refusal("refuse.nothing_to_undo", "nothing to undo")
    return Refusal("refuse.tap_game_card", "tap a game card to begin")


def idle_resume(t: TableShape) -> list[Output]:
    return [Say("table.ready")]


def no_last_game(t: TableShape, _: Press) -> Refusal | None:
    return None if t.state.last else Refusal("refuse.tap_game_card", "tap a game card to begin")


def again(t: TableShape, _: Press) -> Goto:
    last = t.state.last
    assert last is not None
    back_to = copy.deepcopy(t.state)
    t.state.game, t.state.rules, t.state.seats = last["game"], list(last["rules"]), list(last["seats"])
    t.state.cards = list(last.get("cards", []))
    return start(t, back_to)


def game_card_refusal(t: TableShape, inp: Tap) -> Refusal | None:
    game = inp.identity.split("/", 1)[1]
    if game not in t.games:
        return Refusal("refuse.game_not_supported", f"{game} is not supported yet", game=game)
    if t.games[game].needs_pages and t.pages == PAGES_OFF:
        return no_pages(game)
    return None


def game_card(t: TableShape, inp: Tap) -> Goto:
    st, game = t.state, inp.identity.split("/", 1)[1]
    t.snapshots.append(copy.deepcopy(st))
    st.game, st.rules, st.seats, st.cards = game, [], [], []
    return Goto(GATHERING, [Say("table.game_chosen", {"game": f"game/{game}"}), Say("table.tap_players")])


# gathering: rule cards, player cards in seat order, then next
def gathering_refusal(t: TableShape, kind: str, inp: Input) -> Refusal:
    if isinstance(inp, Press):
        return Refusal("refuse.not_now", "that button does nothing now")
    if isinstance(inp, Tap):
        return Refusal("refuse.not_before_start", "seat the players first, then press next",
                       game=f"game/{t.state.game}")
    return Refusal("refuse.not_now", "not now")


def gathering_resume(t: TableShape) -> list[Output]:
    return [Say("table.resumed_gathering", {"game": f"game/{t.state.game}", "players": t.players})]


def nothing_to_undo(t: TableShape, _: Press) -> Refusal | None:
    return None if t.snapshots else Refusal("refuse.nothing_to_undo", "nothing to undo")


def back_to_snapshot(t: TableShape) -> None:
    """The table as it was before the last input of the seating: a language
    card, a phone paired, a name chosen are not seats, so back keeps them."""
    st = t.state
    lang, paired, called = st.lang, st.paired, st.called
    t.state = t.snapshots.pop()
    t.state.lang, t.state.paired, t.state.called = lang, paired, called


def ungather(t: TableShape, _: Press) -> list[Output]:
    back_to_snapshot(t)
    return [Say("undo.done")]


def start_refusal(t: TableShape, _: Press) -> Refusal | None:
    """Why the seated table cannot start its game (``start`` checks the same)."""
    game = t.state.game or ""
    try:
        opts = dict(t.settings["options"]).get(game, {})
        t.games[game].check_setup(t.players, t.state.rules, opts)
        t.games[game].check_cards(t.players, t.state.rules, opts, t.state.cards)
        check_pages(t, game)
    except Refusal as refusal:
        return refusal
    return None


def seated(t: TableShape, _: Press) -> Goto:
    return start(t, copy.deepcopy(t.state))


def rules_refusal(t: TableShape, inp: Tap) -> Refusal | None:
    st, name = t.state, inp.identity.partition("/")[2]
    if name not in t.games[st.game or ""].known_rules():
        return Refusal("refuse.rules_unknown", f"{st.game} has no rule set {name}", rules=name)
    if name in st.rules:
        return Refusal("refuse.rules_twice", f"rule card {name} is already in", rules=name)
    return None


def rules_card(t: TableShape, inp: Tap) -> list[Output]:
    st, name = t.state, inp.identity.partition("/")[2]
    t.snapshots.append(copy.deepcopy(st))
    st.rules.append(name)
    return [Say("table.rules_added", {"rules": name})]


def setup_card_refusal(t: TableShape, inp: Tap) -> Refusal | None:
    """A component before the start: the game's to take (a deck's cards), or refused."""
    st, cls = t.state, t.games[t.state.game or ""]
    if not (cls.setup_cards and inp.identity.startswith(cls.tag_prefixes)):
        return gathering_refusal(t, "tap", inp)
    try:
        cls.setup_card(st.rules, dict(t.settings["options"]).get(st.game or "", {}), st.cards, inp.identity)
    except Refusal as refusal:
        return refusal
    return None


def setup_card(t: TableShape, inp: Tap) -> list[Output]:
    st, cls = t.state, t.games[t.state.game or ""]
    said = cls.setup_card(st.rules, dict(t.settings["options"]).get(st.game or "", {}), st.cards, inp.identity)
    t.snapshots.append(copy.deepcopy(st))
    st.cards.append(inp.identity)
    return said


def seat_refusal(t: TableShape, inp: Tap) -> Refusal | None:
    st, cls = t.state, t.games[t.state.game or ""]
    seat, player = inp.identity.partition("/")[2], t.player_name(inp.identity)
    if seat in st.seats or player in t.players:  # one seat per name: the engine knows names
        return Refusal("refuse.player_twice", f"{player} is already seated", player=player)
    if len(st.seats) >= cls.max_players:
        return Refusal("refuse.too_many_players", f"at most {cls.max_players} players", high=cls.max_players)
    return None


def seat(t: TableShape, inp: Tap) -> list[Output]:
    st = t.state
    t.snapshots.append(copy.deepcopy(st))
    st.seats.append(inp.identity.partition("/")[2])
    return [Say("table.player_seated", {"player": t.player_name(inp.identity), "n": len(st.seats)})]


def start(t: TableShape, back_to: TableState) -> Goto:
    """Start the game; ``back_to`` is the table before ``next``, where
    ``back`` returns while the game is as it started."""
    st = t.state
    game = st.game or ""
    cls = t.games[game]
    opts = dict(t.settings["options"]).get(game, {})
    players = t.players
    if twice := next((p for i, p in enumerate(players) if p in players[:i]), None):
        # "play again" after the names changed so that two seats share one
        raise Refusal("refuse.player_twice", f"{twice} is already seated", player=twice)
    cls.check_setup(players, st.rules, opts)
    cls.check_cards(players, st.rules, opts, st.cards)
    check_pages(t, game)
    if cls.needs_pages and t.pages == PAGES_ON and t.unpaired():
        t.snapshots = [back_to]  # seated and counted: the game starts when the last phone is paired
        return Goto(PAIRING, pairing_prompt(t))
    return begin(t, back_to)
