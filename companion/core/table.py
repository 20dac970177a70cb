"""The table between games: which game, which rule cards, who sits where, and
the language — then it hands every input to the active game's engine.

Pure like the engines: inputs in, outputs out, ``Refusal`` changes nothing.
Its state outside a game is small and JSON-ready (``checkpoint()``), which
is what the journal stores when a game ends.

Seats hold each player's stable id — the suffix of their player card,
``player/red`` → ``red`` — and the settings give each id a display name.
Engines know players by name (it is what they say and report, DESIGN.md:
"players appear in events by name"); the table translates at its edges,
so a renamed player keeps their standings, history and page.  That needs
one seat per name: the config refuses two seats with one name, the table
never seats a second player answering to a seated one's name, and a name
that two seats share anyway (settings forced past both) maps to no seat —
its lines reach nobody and its page shows nothing, rather than a guess.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from companion.core import display_names, tags
from companion.core.engine import Engine, Goto, Legal, Setup, Step, Take
from companion.core.events import (
    Drawn,
    Housekeeping,
    Input,
    Output,
    Press,
    Refusal,
    Report,
    Say,
    Submit,
    Tap,
    TimerFired,
)

IDLE, GATHERING, PLAYING = "idle", "gathering", "playing"
PAIRING = "pairing"  # seated, ``next`` pressed: a game that needs pages waits for every phone
NAMED = "named"  # the housekeeping of a page choosing its player's display name
CONFIRM = "confirm"  # a long press of back waits for next (the phase of dispatch while ``confirm`` is set)
# Are the players' pages there (the ``pages`` setting)?  ``on``: the web is up and
# a game that needs pages waits until every seat is paired; ``off``: no web, such
# a game is refused at its card; ``assumed``: a table script, where every seat
# counts as paired and a ``submit`` step stands for the page (DESIGN).
PAGES_ON, PAGES_OFF, PAGES_ASSUMED = "on", "off", "assumed"
# Names journals and checkpoints written before the games night was called
# the evening used (it was the "session", a word the table and a device also had).
_OLD_KINDS = {"new-session": "new-evening"}
# By night every page shows the night screen: nobody named, nothing counted, no clock.
NIGHT_HEADLINE: dict[str, Any] = {"step": None, "waiting_for": [], "anyone": False, "count": None,
                                  "deadline": None, "night": True}
_OLD_FIELDS = {"session_no": "evening"}


@dataclass
class TableState:
    phase: str = IDLE
    lang: str = "en"
    game: str | None = None  # the game being gathered or played
    rules: list[str] = field(default_factory=list)
    seats: list[str] = field(default_factory=list)  # player ids, seat order
    cards: list[str] = field(default_factory=list)  # the game's components tapped before the start (a deck)
    games_started: int = 0
    last: dict[str, Any] | None = None  # the last game's set-up, for "next: play again"
    standings: dict[str, dict[str, int]] = field(default_factory=dict)  # per game: id → total tonight
    confirm: str | None = None  # "step" | "game" while a long-press of back waits for next
    # The game settings in force (per-game options, player names), as the
    # journal's configure inputs set them; None: the constructor's (tests).
    settings: dict[str, Any] | None = None
    pending: dict[str, Any] | None = None  # housekeeping waiting for the table to be between games
    evening: int = 1  # the games night (one evening at the table); standings are tonight's
    # Seats whose phone was paired tonight (journaled ``paired`` housekeeping: a
    # fact, no secret; the page's server keeps the secret). A new evening forgets them.
    paired: list[str] = field(default_factory=list)
    # The finished game's result until the next game starts; the pages show it
    # between games (``public_view``'s ``result``): only what was said at the table.  In the
    # checkpoint the journal takes when a game ends, so a restart keeps it.
    result: dict[str, Any] | None = None
    # The display name each seat's page chose tonight (journaled ``named``
    # housekeeping, core/display_names.py): a person's name for the play's
    # record and the pages, never the engines'. A new evening forgets them.
    called: dict[str, str] = field(default_factory=dict)
    # The game in progress's record names (seat id → name), fixed as it began:
    # a name chosen meanwhile is the next game's.
    record_names: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FinishedPlay:
    """What the journal records when a game ends."""

    game: str
    rules: tuple[str, ...]
    players: tuple[str, ...]  # names, seat order
    ids: tuple[str, ...]  # the same seats' ids
    totals: Mapping[str, int]  # by name
    winners: tuple[str, ...]  # names
    roles: Mapping[str, str] = field(default_factory=dict)  # name → final role, where a game has roles
    teams: Mapping[str, str] = field(default_factory=dict)  # name → the side finished on (engine.Result)
    places: Mapping[str, int] = field(default_factory=dict)  # name → finishing place (engine.Result)
    # name → the name the play's record (BG Stats, the venue's league) gives
    # that player: their display name where their page chose one
    shown: Mapping[str, str] = field(default_factory=dict)

    def record_name(self, name: str) -> str:
        """The person behind the engine's ``name``, as the record names them."""
        return self.shown.get(name, name)


class Table:
    def __init__(self, games: Mapping[str, type[Engine]], *, lang: str = "en",
                 options: Mapping[str, Any] | None = None,
                 names: Mapping[str, str] | None = None, pages: str = PAGES_ASSUMED) -> None:
        self.games = games
        # What the config asks for now; what is in force comes from the journal.
        # As JSON gives it back (int keys become strings), so a replay compares equal.
        # ``pages`` is a setting too: a game started with the pages on replays so.
        self.wanted = json.loads(json.dumps({"options": dict(options or {}), "names": dict(names or {}),
                                             "pages": pages}))
        self._lang = lang
        self.state = TableState(lang=lang)
        self.engine: Engine | None = None
        self.finished: FinishedPlay | None = None  # set by the input that ended a game
        self._undo: list[TableState] = []

    # ------------------------------------------------------------ queries
    @property
    def eyes_closed(self) -> bool:
        return self.engine is not None and self.engine.eyes_closed

    @property
    def result(self) -> dict[str, Any] | None:
        """The finished game's result until the next game starts (``TableState.result``)."""
        return self.state.result

    @property
    def players(self) -> list[str]:
        """The seated players' names, seat order."""
        return [self.name_of(i) for i in self.state.seats]

    def name_of(self, player_id: str) -> str:
        return str(dict(self.settings["names"]).get(player_id, player_id))

    def seats_named(self, name: str) -> list[str]:
        """The seated players' ids answering to ``name`` (one, or none; more only
        if the settings were forced past the config's check)."""
        return [i for i in self.state.seats if self.name_of(i) == name]

    def id_of(self, name: str) -> str | None:
        """The seat id of the one seated player known by ``name``; None if no
        seat, or more than one, answers to it: never a guess."""
        seats = self.seats_named(name)
        return seats[0] if len(seats) == 1 else None

    def audience_id(self, audience: str) -> str | None:
        """``player:<name>`` (an engine's audience) → that seat's id."""
        return self.id_of(audience.removeprefix("player:")) if audience.startswith("player:") else None

    def _engine_name(self, player_id: str) -> str | None:
        """The name the engine knows a seated ``player_id`` by, if it is that seat's alone."""
        name = self.name_of(player_id)
        return name if player_id in self.state.seats and self.id_of(name) == player_id else None

    @property
    def lang(self) -> str:
        return self.state.lang

    def checkpoint(self) -> dict[str, Any]:
        """The whole state between games, for the journal."""
        assert self.engine is None, "checkpoints are taken between games"
        return asdict(self.state)

    def replay(self, checkpoint: Mapping[str, Any] | None,
               entries: Iterable[Any]) -> Iterator[tuple[Any, list[Output] | Refusal]]:
        """Rebuild from a checkpoint (None: an empty table) and the journal
        entries after it; yields each entry with its outputs, or the refusal
        (only possible if the rules changed under an old journal)."""
        if checkpoint is not None:
            self.restore(checkpoint)
        else:
            self.reset()
        for entry in entries:
            try:
                yield entry, self.handle(entry.input)
            except Refusal as refusal:
                yield entry, refusal

    def reset(self) -> None:
        """Back to an empty table (before replaying a journal from its start)."""
        self.restore(asdict(TableState(lang=self._lang)))

    def restore(self, data: Mapping[str, Any]) -> None:
        known = {f.name for f in fields(TableState)}  # a checkpoint from another release may differ
        data = {_OLD_FIELDS.get(k, k): v for k, v in data.items()}
        self.state = TableState(**{k: v for k, v in data.items() if k in known})
        last = self.state.last
        if last is not None and "seats" not in last:  # before seats had ids, names were the ids
            last["seats"] = list(last.pop("players", []))
        self.engine = None
        self._undo.clear()

    @property
    def settings(self) -> dict[str, Any]:
        return self.state.settings if self.state.settings is not None else self.wanted

    @property
    def pages(self) -> str:
        return str(self.settings.get("pages", PAGES_ASSUMED))  # a journal from before pages were a setting

    def unpaired(self) -> list[str]:
        """The seated players (names) whose phone is not paired yet."""
        return [self.name_of(i) for i in self.state.seats if i not in self.state.paired]

    def player_name(self, identity: str) -> str:
        """``player/<id>`` → that player's name."""
        return self.name_of(identity.split("/", 1)[1])

    # ---------------------------------------------------------- read side
    def public_view(self, due: Mapping[str, float] | None = None) -> dict[str, Any]:
        """Everything anyone may see now, JSON-ready (the public page).
        ``due``: the wall-clock time each armed timer fires (the runtime's; the
        table keeps no clock), for the headline's deadline."""
        st = self.state
        if self.eyes_closed:
            return self._night_view()
        view: dict[str, Any] = {
            "phase": st.phase, "lang": st.lang, "game": st.game, "rules": list(st.rules),
            "seats": self._seats_view(),
            "evening": st.evening,
            "tonight": {game: {self.name_of(i): n for i, n in totals.items()}
                        for game, totals in st.standings.items()},
            "confirm": st.confirm,
        }
        if self.engine is not None:
            view["play"] = self.engine.public_view()
        if self.result is not None and st.phase == IDLE:  # between games: not beside the next one's gathering
            view["result"] = self.result
        view["headline"] = self.headline(due)
        return view

    def _seats_view(self) -> list[dict[str, Any]]:
        """The seats as every page shows them: id, engine name, whether paired,
        and ``called``, the display name its player chose (public: chosen to be shown)."""
        st = self.state
        return [{"id": i, "name": self.name_of(i), "paired": i in st.paired,
                 **({"called": st.called[i]} if i in st.called else {})} for i in st.seats]

    def _night_view(self) -> dict[str, Any]:
        """By night (One Night's, eyes closed) the same for any deal and any
        tap: the seats, the language, the evening's totals before the night,
        and the night's headline — the step's name and nothing else."""
        st = self.state
        step = self.engine.state.step if self.engine is not None else None
        return {"phase": st.phase, "lang": st.lang, "game": st.game, "rules": list(st.rules),
                "seats": self._seats_view(),
                "evening": st.evening,
                "tonight": {game: {self.name_of(i): n for i, n in totals.items()}
                            for game, totals in st.standings.items()},
                "confirm": None, "play": {"step": step, "whose_turn": []}, "headline": {**NIGHT_HEADLINE, "step": step}}

    def headline(self, due: Mapping[str, float] | None = None) -> dict[str, Any]:
        """What the table waits for now (the pages' headline, AGREED §1): the
        step, whom (seat ids) or anyone, a count, the countdown's wall-clock
        deadline; by night the night screen's, the same for any deal."""
        st, engine = self.state, self.engine
        if self.eyes_closed:
            return {**NIGHT_HEADLINE, "step": engine.state.step if engine is not None else None}
        head: dict[str, Any] = {"step": st.phase, "waiting_for": [], "anyone": True, "count": None,
                                "deadline": None, "night": False}
        if st.confirm is not None:  # a long press of back waits for next or back: anyone's (the view's ``confirm``)
            return {**head, "step": engine.state.step if engine is not None else st.phase}
        if st.phase == PAIRING:
            unpaired = [i for i in st.seats if i not in st.paired]
            return {**head, "waiting_for": unpaired,
                    "count": {"done": len(st.seats) - len(unpaired), "of": len(st.seats), "what": "paired"}}
        if engine is None:
            return head
        game = engine.headline()
        deadline = None
        if game.get("timer") is not None and due is not None:
            name, left = game["timer"]
            if name in due:
                deadline = float(due[name]) + float(left)
        seats = [i for name in game.get("waiting_for", []) if (i := self.id_of(name)) is not None]
        return {**head, "step": engine.state.step, "waiting_for": seats, "anyone": bool(game.get("anyone")),
                "count": game.get("count"), "deadline": deadline}

    def may_press(self, player_id: str) -> bool:
        """May a seat's page press next or back now?  Where the table waits for
        that seat or for anyone; never by night (the panel's buttons are the table's)."""
        head = self.headline()
        return not head["night"] and (head["anyone"] or player_id in head["waiting_for"])

    def public_label(self, inp: Input) -> str:
        """How an accepted ``inp`` is named in public (the engine may hide a secret)."""
        return self.engine.public_label(inp) if self.engine is not None else inp.label

    def private_view(self, player_id: str) -> dict[str, Any]:
        """What the player seated as ``player_id`` alone may see now."""
        name = self._engine_name(player_id)
        if self.engine is None or name is None:
            return {}
        return self.engine.private_view(name)

    def page(self, player_id: str) -> list[tuple[str, dict[str, Any]]]:
        """The player's page as lines (keys and params), ``private_view`` labelled."""
        name = self._engine_name(player_id)
        if self.engine is None or name is None:
            return []
        return self.engine.page(name)

    def board(self) -> list[tuple[str, dict[str, Any]]]:
        """The game's public lines (keys and params), ``public_view`` labelled."""
        return self.engine.board() if self.engine is not None else []

    def legal(self, player_id: str | None = None) -> Legal:
        """What the table (``None``) or one seated player may do now: the
        game's ``legal`` while it plays, else derived from ``PHASES`` — the
        buttons the phase takes whose guard lets them pass (``repeat``, the
        loop's, always), and the tap families it takes (``player/*``: the
        table's cards are open families, a config may add players)."""
        engine = self.engine
        if engine is not None and self.state.confirm is None:
            if player_id is None:  # the game's, and what the table takes around it
                legal = engine.legal(None)
                back = ("back",) if "back" not in legal.buttons and self._unstarts() else ()
                lang = () if self.eyes_closed else ("lang/*",)
                return replace(legal, buttons=legal.buttons + back, taps=legal.taps + lang)
            name = self._engine_name(player_id)
            return engine.legal(name) if name is not None else Legal()
        if player_id is not None:
            return Legal()
        phase = self._phase
        takes = self.PHASES[phase].takes
        buttons = tuple(b for b in ("next", "back") if b in takes and self._passes(takes[b], Press(b)))
        buttons += ("repeat",) if phase != CONFIRM else ()
        families = {"player": ("player/*",), "rules": ("rules/*",), "game": tuple(f"game/{g}" for g in self.games),
                    "lang": ("lang/*",)}
        if phase == GATHERING and self.games[self.state.game or ""].setup_cards:  # a deck's cards
            cls = self.games[self.state.game or ""]
            families["tap"] = tuple(c for c in cls.components if self._passes(takes["tap"], Tap(c)))
        return Legal(buttons=buttons, taps=tuple(t for kind, ids in families.items() if kind in takes for t in ids))

    def _passes(self, take: Take, value: Any) -> bool:
        try:
            return take.guard is None or take.guard(self, value) is None
        except Refusal:
            return False

    # ------------------------------------------------------------- inputs
    def handle(self, inp: Input) -> list[Output]:
        """Outputs for one input; raises ``Refusal`` and changes nothing."""
        self.finished = None
        before = (copy.deepcopy(self.state), self.engine, list(self._undo))
        try:
            outputs = self._dispatch(inp)
        except Refusal:
            self.state, self.engine, self._undo = before
            raise
        return outputs

    @property
    def _phase(self) -> str:
        """The phase ``PHASES`` dispatches on: a pending confirmation is one."""
        return CONFIRM if self.state.confirm is not None else self.state.phase

    @staticmethod
    def kind_of(inp: Input) -> str:
        """The kind ``PHASES`` names ``inp`` by: ``housekeeping``, ``submit``,
        ``draw``, ``timer``, a button (``next``, ``back``, ``repeat``,
        ``hold-back``; any other is ``button``), or a tap by its family
        (``lang``, ``game``, ``player``, ``rules``; any other is ``tap``)."""
        if isinstance(inp, Housekeeping):
            return "housekeeping"
        if isinstance(inp, Submit):
            return "submit"
        if isinstance(inp, Drawn):
            return "draw"
        if isinstance(inp, TimerFired):
            return "timer"
        if isinstance(inp, Press):
            return inp.button if inp.button in ("next", "back", "repeat", "hold-back") else "button"
        family = inp.identity.split("/", 1)[0]
        return family if family in ("lang", "game", "player", "rules") else "tap"

    def _dispatch(self, inp: Input) -> list[Output]:
        """The current phase's entry for the input's kind: its guard, then its
        handler, which may only move to a phase it declared (as the engines'
        ``STEPS``, core/engine.py)."""
        kind, phase = self.kind_of(inp), self._phase
        take = self.PHASES[phase].takes.get(kind)
        if take is None:
            raise self._not_taken(phase, inp)
        if take.guard is not None and (refusal := take.guard(self, inp)) is not None:
            raise refusal
        out = take.handler(self, inp)
        assert not isinstance(out, Goto)  # the table's handlers set the phase themselves, checked below
        if __debug__ and self._phase != phase and self._phase not in take.to:
            raise AssertionError(f"Table: {phase} --{kind}--> {self._phase}, which its entry does not declare")
        return out

    def _not_taken(self, phase: str, inp: Input) -> Refusal:
        """The phase's refusal for what it does not take."""
        st = self.state
        if phase == CONFIRM:
            return Refusal("refuse.confirm_pending", "press next to confirm or back to cancel")
        if phase == GATHERING:
            if isinstance(inp, Press):
                return Refusal("refuse.not_now", "that button does nothing now")
            if isinstance(inp, Tap):
                return Refusal("refuse.not_before_start", "seat the players first, then press next",
                               game=f"game/{st.game}")
            return Refusal("refuse.not_now", "not now")
        if phase == PAIRING:
            if isinstance(inp, Tap) and inp.identity.startswith("player/"):
                # no phone was waiting for this card: the page asks first
                return Refusal("pairing.refuse.page_first", "pick your seat on your phone's page first, then tap",
                               player=self.player_name(inp.identity))
            return Refusal("pairing.refuse.missing", "every phone must be paired first", players=self.unpaired())
        if isinstance(inp, Press) and inp.button == "back":
            return Refusal("refuse.nothing_to_undo", "nothing to undo")
        return Refusal("refuse.tap_game_card", "tap a game card to begin")

    def _language(self, inp: Tap) -> list[Output]:
        self.state.lang = inp.identity.split("/", 1)[1]
        return [Say("table.language")]

    def _quiet(self, _: Input) -> Refusal | None:
        return Refusal("refuse.quiet", "not during the night") if self.eyes_closed else None

    # idle: waiting for a game card (or next: the same game again)
    def _no_last_game(self, _: Press) -> Refusal | None:
        return None if self.state.last else Refusal("refuse.tap_game_card", "tap a game card to begin")

    def _again(self, _: Press) -> list[Output]:
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

    def _game_card(self, inp: Tap) -> list[Output]:
        st, game = self.state, inp.identity.split("/", 1)[1]
        self._undo.append(copy.deepcopy(st))
        st.phase, st.game, st.rules, st.seats, st.cards = GATHERING, game, [], [], []
        return [Say("table.game_chosen", {"game": f"game/{game}"}), Say("table.tap_players")]

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

    def _seated(self, _: Press) -> list[Output]:
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

    def _start(self, back_to: TableState) -> list[Output]:
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
            st.phase = PAIRING  # seated and counted: the game starts when the last phone is paired
            self._undo = [back_to]
            return self._pairing_prompt()
        return self._begin(back_to)

    def _pairing_prompt(self) -> list[Output]:
        """Who still has to pair, and what the game has the table set out meanwhile."""
        game = self.state.game or ""
        cls = self.games[game]
        opts = dict(self.settings["options"]).get(game, {})
        return [*cls.pairing_lines(self.players, self.state.rules, opts),
                Say("pairing.needed", {"game": f"game/{game}", "players": self.unpaired()})]

    def _begin(self, back_to: TableState) -> list[Output]:
        st = self.state
        game = st.game or ""
        cls = self.games[game]
        opts = dict(self.settings["options"]).get(game, {})
        players = self.players
        st.games_started += 1
        self.engine = cls(Setup(tuple(players), tuple(st.rules), opts, tuple(st.cards)))
        st.phase = PLAYING
        st.last = {"game": game, "rules": list(st.rules), "seats": list(st.seats), "cards": list(st.cards)}
        self._undo = [back_to]
        st.result = None  # the next game has started: the last one's result is in the history
        st.record_names = display_names.record_names(st.seats, {i: self.name_of(i) for i in st.seats}, st.called)
        started = Report("game_started", {"game": game, "rules": list(st.rules), "players": players})
        return [started, *self.engine.start()]

    def _check_pages(self, game: str) -> None:
        if self.games[game].needs_pages and self.pages == PAGES_OFF:
            raise self._no_pages(game)

    @staticmethod
    def _no_pages(game: str) -> Refusal:
        return Refusal("pairing.refuse.no_pages", f"{game} needs the players' phones: turn the web pages on",
                       game=f"game/{game}")

    def _paired(self, seat: str) -> list[Output]:
        st = self.state
        if not seat:
            raise Refusal("refuse.not_now", "a pairing names its seat")
        if seat not in st.paired:
            st.paired.append(seat)
        out: list[Output] = [Say("pairing.done", {"player": self.name_of(seat)})]
        if st.phase != PAIRING:
            return out
        if missing := self.unpaired():
            return [*out, Say("pairing.missing", {"players": missing})]
        back_to = self._undo.pop()
        return [*out, Say("pairing.all_in"), *self._begin(back_to)]

    def _named(self, seat: str, name: Any) -> list[Output]:
        """A seat's page chose its display name (core/display_names.py).  Refused
        by night (nothing may move on any page then), for a seat whose phone is
        not its page (pages ``on``: paired tonight; ``off``: no page at all), and
        for a name the rules refuse.  In force at once on the pages; the record's
        from the next game on (``_begin`` fixes a game's names as it starts)."""
        st = self.state
        if self.eyes_closed:
            raise Refusal("refuse.night", "not during the night")
        if not tags.valid_player_name(seat) or self.pages == PAGES_OFF or (
                self.pages == PAGES_ON and seat not in st.paired):
            raise Refusal("display.refuse.not_paired", "pair this phone with a seat first")
        if not isinstance(name, str):
            raise Refusal("display.refuse.empty", "a display name cannot be empty")
        name = display_names.clean(name)
        configured = dict(self.settings["names"])
        ids = {*tags.COLOURS, *configured, *st.seats, *st.paired, *st.called} - {seat}
        others = {*ids, *(self.name_of(i) for i in ids), *(n for i, n in st.called.items() if i != seat)}
        if (refusal := display_names.problem(name, others)) is not None:
            raise refusal
        st.called[seat] = name
        return []

    # playing: everything goes to the engine, after the checks every game shares
    def _to_engine(self, inp: Input) -> list[Output]:
        engine = self.engine
        if engine is None:
            if isinstance(inp, Submit):
                raise Refusal("refuse.no_game", "no game is being played", player=inp.player)
            raise Refusal("refuse.not_now", f"{inp.label} is not expected now")
        if isinstance(inp, Submit):
            if (name := self._engine_name(inp.player)) is None:
                raise Refusal("refuse.not_seated", f"{inp.player} is not playing this game")
            inp = Submit(name, inp.field, inp.value)
        if isinstance(inp, Tap):
            kind = inp.identity.split("/", 1)[0]
            if kind == "player":
                seat, player = inp.identity.split("/", 1)[1], self.player_name(inp.identity)
                if self.seats_named(player) not in ([], [seat]):  # the engine would take it for another seat
                    raise Refusal("refuse.not_now", f"two seats answer to {player}: give each a name of its own")
                inp = Tap(f"player/{player}")
            elif kind == "rules":
                raise Refusal("refuse.rules_in_game", "rule cards go before the game starts")
            elif not inp.identity.startswith(engine.tag_prefixes):
                owner = next((g for g, c in self.games.items() if inp.identity.startswith(c.tag_prefixes)), None)
                raise Refusal("refuse.other_game", f"{inp.identity} belongs to another game",
                              tile=inp.identity, game=f"game/{owner}" if owner else "")
        if isinstance(inp, Press) and inp.button == "back" and self._unstarts():
            return self._unstart()
        outputs = engine.handle(inp)
        if engine.finished:
            outputs += self._finish(engine, outputs)
        return outputs

    def _unstarts(self) -> bool:
        """Would ``back`` leave the game for the seating (it has taken no input yet)?"""
        engine = self.engine
        return engine is not None and engine.at_start and not engine.eyes_closed and bool(self._undo)

    def _unstart(self, _: Input | None = None) -> list[Output]:
        """``back`` before the game has taken any input: the table returns to
        where it was before ``next`` (e.g. a player had not tapped yet)."""
        game = self.state.game
        lang, paired, called = self.state.lang, self.state.paired, self.state.called  # not part of the start
        self.state, self.engine = self._undo.pop(), None
        self.state.lang, self.state.paired, self.state.called = lang, paired, called
        self._undo.clear()
        out: list[Output] = [Report("game_unstarted", {"game": game})]
        if self.state.phase == GATHERING:
            return [*out, Say("table.unstarted", {"game": f"game/{game}", "players": self.players})]
        return [*out, Say("table.again")]

    def _finish(self, engine: Engine, said: list[Output]) -> list[Output]:
        st = self.state
        result = engine.result()
        game = st.game or ""
        names = self.players
        shown = {name: st.record_names.get(seat, name) for seat, name in zip(st.seats, names, strict=True)}
        self.finished = FinishedPlay(game, tuple(st.rules), tuple(names), tuple(st.seats), dict(result.totals),
                                     tuple(result.winners), dict(result.roles), dict(result.teams),
                                     dict(result.places), {n: s for n, s in shown.items() if s != n})
        st.result = _result_view(game, engine, self.finished, said)
        standing = st.standings.setdefault(game, {})
        for seat, name in zip(st.seats, names, strict=True):
            standing[seat] = standing.get(seat, 0) + result.totals.get(name, 0)
        tonight = {self.name_of(i): n for i, n in standing.items()}
        self._to_idle()
        ranked = sorted(tonight.items(), key=lambda kv: -kv[1])
        return [Report("session_scores", {"game": game, "totals": tonight}),  # the contract's name for it
                Say("table.standings", {"scores": ranked}), Say("table.again")]

    def _to_idle(self) -> None:
        st = self.state
        self.engine = None
        self._undo.clear()  # the start of the game is out of reach
        st.phase, st.game, st.rules, st.seats, st.cards = IDLE, None, [], [], []
        st.record_names = {}
        self._apply_pending()

    # housekeeping: settings and games nights change only between games, so a
    # game in progress (and its replay) keeps the settings it started with
    def _housekeeping(self, inp: Housekeeping) -> list[Output]:
        if inp.kind == "paired":  # a phone became this seat's page: a fact, in force at once
            return self._paired(str(inp.data.get("seat", "")))
        if inp.kind == NAMED:  # a page chose its player's display name: tonight's, the next game's record
            return self._named(str(inp.data.get("seat", "")), inp.data.get("name"))
        kind = _OLD_KINDS.get(inp.kind, inp.kind)
        if kind not in ("configure", "new-evening"):
            raise Refusal("refuse.not_now", f"unknown housekeeping {inp.kind!r}")
        st = self.state
        if kind == "configure" and st.phase == PAIRING and inp.data.get("pages") == PAGES_OFF:
            # The daemon came back with the pages off (or unable to serve them) while the
            # gate waited: no phone can pair now.  No game has begun, so back to the
            # seating, the pages off in force; the card's refusal says why.
            game = st.game
            out = self._unstart()
            self.state.settings = dict(inp.data)
            return [*out, Say("pairing.refuse.no_pages", {"game": f"game/{game}"})]
        st.pending = {**(st.pending or {}), kind: dict(inp.data)}
        if st.phase == IDLE:
            self._apply_pending()
        return []

    def _apply_pending(self) -> None:
        st = self.state
        pending, st.pending = st.pending or {}, None
        if "configure" in pending:
            st.settings = pending["configure"]  # seats are ids: a rename keeps "play again"
        if "new-evening" in pending:
            st.evening += 1
            st.standings = {}
            st.paired = []  # tonight's phones pair again
            st.called = {}  # and tonight's display names go with them (the pages choose again)

    # long-press back: restart the step (or abandon the game) after a confirmation
    def _ask_confirm(self, _: Input | None = None) -> list[Output]:
        if self.eyes_closed:
            raise Refusal("refuse.quiet", "not during the night")
        if self.state.phase != PLAYING:
            raise Refusal("refuse.nothing_to_abandon", "no game to abandon")
        assert self.engine is not None
        self.state.confirm = "step" if self.engine.can_undo else "game"
        return [Say(f"table.confirm_{self.state.confirm}")]

    def _confirmed(self, _: Press) -> list[Output]:
        what, self.state.confirm = self.state.confirm, None
        assert self.engine is not None
        if what == "step":
            return [Say("table.step_restarted"), *self.engine.restart_step()]
        game = self.state.game
        self._to_idle()
        return [Report("game_abandoned", {"game": game}), Say("table.abandoned")]

    def _cancelled(self, _: Press) -> list[Output]:
        self.state.confirm = None
        assert self.engine is not None
        return [Say("table.confirm_cancelled"), *self.engine.prompt()]

    # ------------------------------------------------------------ the phases
    # phase -> {input kind (``kind_of``) -> Take(handler, the phases it may
    # lead to, its guard)}; what a phase does not take gets ``_not_taken``.
    # In every phase the daemon's housekeeping, a page's submit, a draw and
    # the long press of back; while a game plays, everything else but a
    # language card or a game card is the game's (the confirmation waits,
    # and the game's clock keeps running while it does).
    _ANY = {"housekeeping": Take(_housekeeping, (IDLE, GATHERING, PLAYING)),
            "submit": Take(_to_engine, (IDLE,)), "draw": Take(_to_engine, (IDLE,)),
            "hold-back": Take(_ask_confirm, (CONFIRM,))}
    _GAME = Take(_to_engine, (IDLE, GATHERING))  # the game may end, or back before its first input unstarts it
    PHASES: dict[str, Step] = {
        IDLE: Step({**_ANY, "lang": Take(_language), "game": Take(_game_card, (GATHERING,), _game_card_refusal),
                    "next": Take(_again, (PLAYING, PAIRING), _no_last_game)}),
        GATHERING: Step({**_ANY, "lang": Take(_language), "game": Take(_game_card, (), _game_card_refusal),
                         "back": Take(_ungather, (IDLE,), _nothing_to_undo), "next": Take(_seated, (PLAYING, PAIRING), _start_refusal),
                         "rules": Take(_rules_card, (), _rules_refusal), "player": Take(_seat, (), _seat_refusal),
                         "tap": Take(_setup_card, (), _setup_card_refusal)}),
        PAIRING: Step({**_ANY, "lang": Take(_language), "game": Take(_game_card, (GATHERING,), _game_card_refusal),
                       "back": Take(_unstart, (IDLE, GATHERING))}),
        PLAYING: Step({**_ANY, "lang": Take(_language, (), _quiet), "game": Take(_game_card, (), _game_card_refusal),
                       **dict.fromkeys(("next", "back", "repeat", "button", "timer", "player", "rules", "tap"), _GAME)}),
        CONFIRM: Step({**_ANY, "next": Take(_confirmed, (PLAYING, IDLE)), "back": Take(_cancelled, (PLAYING,)),
                       "timer": Take(_to_engine, (IDLE,))}),
    }

    # ------------------------------------------------------------- resume
    def resume(self) -> list[Output]:
        """After the journal is replayed: say where the table is."""
        st = self.state
        if st.phase == PLAYING and self.engine is not None:
            where = [Say("table.resumed_game", {"game": f"game/{st.game}"}), *self.engine.resume()]
            if st.confirm is not None:  # a long press of back was waiting for its answer
                where.append(Say(f"table.confirm_{st.confirm}"))
            return where
        if st.phase == GATHERING:
            return [Say("table.resumed_gathering", {"game": f"game/{st.game}", "players": self.players})]
        if st.phase == PAIRING:
            return self._pairing_prompt()
        return [Say("table.ready")]


def _result_view(game: str, engine: Engine, play: FinishedPlay, said: list[Output]) -> dict[str, Any]:
    """A finished game as the pages show it: each player's place (winners first,
    in the game's order where its winners have one, then by total), total and
    final role; the game's last public view (its rounds); and the verdict's
    lines (keys and params) as the table said them — nothing that was not said."""
    winners = list(play.winners)
    sign = -1 if engine.highest_wins else 1

    def rank(name: str) -> tuple[int, int, int]:
        won = name in winners
        order = winners.index(name) if won and engine.ordered_winners else 0
        return (0 if won else 1, order, sign * int(play.totals.get(name, 0)))

    ranked = sorted(play.players, key=rank)
    players: list[dict[str, Any]] = []
    for n, name in enumerate(ranked):
        tied = n and rank(ranked[n - 1]) == rank(name)
        place = players[-1]["place"] if tied else n + 1
        players.append({"name": name, "place": place, "total": int(play.totals.get(name, 0)),
                        "winner": name in winners, "role": play.roles.get(name)})
    says = [{"key": o.key, "params": copy.deepcopy(dict(o.params))} for o in said if isinstance(o, Say)]
    # as the journal's checkpoint gives it back (tuples are lists): a restart shows the same
    return json.loads(json.dumps({"game": game, "players": players, "play": engine.public_view(), "says": says}))
