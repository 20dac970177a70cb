"""Before a game: the language card, a game card (or next: the same game
again), rule cards and player cards in seat order, back, then next."""

from __future__ import annotations

import copy
from collections.abc import Callable

from companion.core.events import (
    Input,
    Output,
    Press,
    Refusal,
    Say,
    Tap,
)
from companion.core.steps import Goto
from companion.core.table.pairing import TablePairing
from companion.core.table.state import (
    GATHERING,
    PAGES_OFF,
    PAGES_ON,
    PAIRING,
    PLAYING,
    TableState,
)


class TableSeating(TablePairing):
    """Idle and gathering: the game card, rule cards, player cards, next."""
    _not_taken: Callable[[str, Input], Refusal]  # the phase's refusal for what it does not take (the hub)

    def _language(self, inp: Tap) -> list[Output]:
        self.state.lang = inp.identity.split("/", 1)[1]
        return [Say("table.language")]

    def _quiet(self, _: Input) -> Refusal | None:
        return Refusal("refuse.quiet", "not during the night") if self.eyes_closed else None

    # idle: waiting for a game card (or next: the same game again)
    def _no_last_game(self, _: Press) -> Refusal | None:
        return None if self.state.last else Refusal("refuse.tap_game_card", "tap a game card to begin")

    def _again(self, _: Press) -> Goto:
        last = self.state.last
        assert last is not None
        back_to = copy.deepcopy(self.state)
        self.state.game, self.state.rules, self.state.seats = last["game"], list(last["rules"]), list(last["seats"])
        self.state.cards = list(last.get("cards", []))
        return self._start(back_to)

    def _game_card_refusal(self, inp: Tap) -> Refusal | None:
        st, game = self.state, inp.identity.split("/", 1)[1]
        if st.phase == PLAYING:
            return Refusal("refuse.game_in_progress", "a game is in progress; hold back to abandon it", game=st.game)
        if game not in self.games:
            return Refusal("refuse.game_not_supported", f"{game} is not supported yet", game=game)
        if self.games[game].needs_pages and self.pages == PAGES_OFF:
            return self._no_pages(game)
        return None

    def _game_card(self, inp: Tap) -> Goto:
        st, game = self.state, inp.identity.split("/", 1)[1]
        self._undo.append(copy.deepcopy(st))
        st.game, st.rules, st.seats, st.cards = game, [], [], []
        return Goto(GATHERING, [Say("table.game_chosen", {"game": f"game/{game}"}), Say("table.tap_players")])

    # gathering: rule cards, player cards in seat order, then next
    def _nothing_to_undo(self, _: Press) -> Refusal | None:
        return None if self._undo else Refusal("refuse.nothing_to_undo", "nothing to undo")

    def _ungather(self, _: Press) -> list[Output]:
        st = self.state
        lang, paired, called = st.lang, st.paired, st.called  # a language card, a phone, a name: not seats, back keeps them
        self.state = self._undo.pop()
        self.state.lang, self.state.paired, self.state.called = lang, paired, called
        return [Say("undo.done")]

    def _start_refusal(self, _: Press) -> Refusal | None:
        """Why the seated table cannot start its game (``_start`` checks the same)."""
        game = self.state.game or ""
        try:
            opts = dict(self.settings["options"]).get(game, {})
            self.games[game].check_setup(self.players, self.state.rules, opts)
            self.games[game].check_cards(self.players, self.state.rules, opts, self.state.cards)
            self._check_pages(game)
        except Refusal as refusal:
            return refusal
        return None

    def _seated(self, _: Press) -> Goto:
        return self._start(copy.deepcopy(self.state))

    def _rules_refusal(self, inp: Tap) -> Refusal | None:
        st, name = self.state, inp.identity.partition("/")[2]
        if name not in self.games[st.game or ""].known_rules():
            return Refusal("refuse.rules_unknown", f"{st.game} has no rule set {name}", rules=name)
        if name in st.rules:
            return Refusal("refuse.rules_twice", f"rule card {name} is already in", rules=name)
        return None

    def _rules_card(self, inp: Tap) -> list[Output]:
        st, name = self.state, inp.identity.partition("/")[2]
        self._undo.append(copy.deepcopy(st))
        st.rules.append(name)
        return [Say("table.rules_added", {"rules": name})]

    def _setup_card_refusal(self, inp: Tap) -> Refusal | None:
        """A component before the start: the game's to take (a deck's cards), or refused."""
        st, cls = self.state, self.games[self.state.game or ""]
        if not (cls.setup_cards and inp.identity.startswith(cls.tag_prefixes)):
            return self._not_taken(GATHERING, inp)
        try:
            cls.setup_card(st.rules, dict(self.settings["options"]).get(st.game or "", {}), st.cards, inp.identity)
        except Refusal as refusal:
            return refusal
        return None

    def _setup_card(self, inp: Tap) -> list[Output]:
        st, cls = self.state, self.games[self.state.game or ""]
        said = cls.setup_card(st.rules, dict(self.settings["options"]).get(st.game or "", {}), st.cards, inp.identity)
        self._undo.append(copy.deepcopy(st))
        st.cards.append(inp.identity)
        return said

    def _seat_refusal(self, inp: Tap) -> Refusal | None:
        st, cls = self.state, self.games[self.state.game or ""]
        seat, player = inp.identity.partition("/")[2], self.player_name(inp.identity)
        if seat in st.seats or player in self.players:  # one seat per name: the engine knows names
            return Refusal("refuse.player_twice", f"{player} is already seated", player=player)
        if len(st.seats) >= cls.max_players:
            return Refusal("refuse.too_many_players", f"at most {cls.max_players} players", high=cls.max_players)
        return None

    def _seat(self, inp: Tap) -> list[Output]:
        st = self.state
        self._undo.append(copy.deepcopy(st))
        st.seats.append(inp.identity.partition("/")[2])
        return [Say("table.player_seated", {"player": self.player_name(inp.identity), "n": len(st.seats)})]

    def _start(self, back_to: TableState) -> Goto:
        """Start the game; ``back_to`` is the table before ``next``, where
        ``back`` returns while the game is as it started."""
        st = self.state
        game = st.game or ""
        cls = self.games[game]
        opts = dict(self.settings["options"]).get(game, {})
        players = self.players
        if twice := next((p for i, p in enumerate(players) if p in players[:i]), None):
            # "play again" after the names changed so that two seats share one
            raise Refusal("refuse.player_twice", f"{twice} is already seated", player=twice)
        cls.check_setup(players, st.rules, opts)
        cls.check_cards(players, st.rules, opts, st.cards)
        self._check_pages(game)
        if cls.needs_pages and self.pages == PAGES_ON and self.unpaired():
            self._undo = [back_to]  # seated and counted: the game starts when the last phone is paired
            return Goto(PAIRING, self._pairing_prompt())
        return self._begin(back_to)
