"""The table between games: which game, which rule cards, who sits where, and
the language — then it hands every input to the active game's engine.

Pure like the engines: inputs in, outputs out, ``Refusal`` changes nothing.
Its state outside a game is small and JSON-ready (``checkpoint()``), which
is what the journal stores when a game ends.
"""

from __future__ import annotations

import copy
import json
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from companion import games
from companion.events import Housekeeping, Input, Output, Press, Refusal, Report, Say, Tap, TimerFired
from companion.games.base import Engine, Setup

IDLE, GATHERING, PLAYING = "idle", "gathering", "playing"


@dataclass
class TableState:
    phase: str = IDLE
    lang: str = "en"
    game: str | None = None  # the game being gathered or played
    rules: list[str] = field(default_factory=list)
    players: list[str] = field(default_factory=list)  # names, seat order
    games_started: int = 0  # also derives each game's seed
    last: dict[str, Any] | None = None  # the last game's set-up, for "next: play again"
    standings: dict[str, dict[str, int]] = field(default_factory=dict)  # per game: name → total tonight
    confirm: str | None = None  # "step" | "game" while a long-press of back waits for next
    # The game settings in force (per-game options, player names, seed), as the
    # journal's configure inputs set them; None: the constructor's (tests).
    settings: dict[str, Any] | None = None
    pending: dict[str, Any] | None = None  # housekeeping waiting for the table to be between games
    session_no: int = 1  # the games night; standings are tonight's


@dataclass(frozen=True)
class FinishedPlay:
    """What the journal records when a game ends."""

    game: str
    rules: tuple[str, ...]
    players: tuple[str, ...]
    totals: Mapping[str, int]
    winners: tuple[str, ...]


class Session:
    def __init__(self, *, seed: int = 0, lang: str = "en",
                 options: Mapping[str, Any] | None = None,
                 names: Mapping[str, str] | None = None) -> None:
        # What the config asks for now; what is in force comes from the journal.
        # As JSON gives it back (int keys become strings), so a replay compares equal.
        self.wanted = json.loads(json.dumps({"options": dict(options or {}), "names": dict(names or {}),
                                             "seed": seed}))
        self._lang = lang
        self.state = TableState(lang=lang)
        self.engine: Engine | None = None
        self.finished: FinishedPlay | None = None  # set by the input that ended a game
        self._undo: list[TableState] = []

    # ------------------------------------------------------------ queries
    @property
    def quiet(self) -> bool:
        return self.engine is not None and self.engine.quiet

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
        self.state = TableState(**{k: v for k, v in data.items() if k in known})
        self.engine = None
        self._undo.clear()

    @property
    def settings(self) -> dict[str, Any]:
        return self.state.settings if self.state.settings is not None else self.wanted

    def player_name(self, identity: str) -> str:
        colour = identity.split("/", 1)[1]
        return dict(self.settings["names"]).get(colour, colour)

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

    def _dispatch(self, inp: Input) -> list[Output]:
        st = self.state
        if isinstance(inp, Housekeeping):
            return self._housekeeping(inp)
        if isinstance(inp, Press) and inp.button == "hold-back":
            return self._ask_confirm()
        if st.confirm is not None:
            return self._answer_confirm(inp)
        if isinstance(inp, Tap):
            kind = inp.identity.split("/", 1)[0]
            if kind == "lang":
                if self.quiet:
                    raise Refusal("refuse.quiet", "not during the night")
                st.lang = inp.identity.split("/", 1)[1]
                return [Say("session.language")]
            if kind == "game":
                return self._game_card(inp.identity.split("/", 1)[1])
        if st.phase == PLAYING:
            return self._to_engine(inp)
        if st.phase == GATHERING:
            return self._gather(inp)
        return self._idle(inp)

    # idle: waiting for a game card (or next: the same game again)
    def _idle(self, inp: Input) -> list[Output]:
        if isinstance(inp, Press) and inp.button == "next" and self.state.last:
            last = self.state.last
            back_to = copy.deepcopy(self.state)
            self.state.game, self.state.rules, self.state.players = last["game"], list(last["rules"]), list(last["players"])
            return self._start(back_to)
        if isinstance(inp, Press) and inp.button == "back":
            raise Refusal("refuse.nothing_to_undo", "nothing to undo")
        raise Refusal("refuse.tap_game_card", "tap a game card to begin")

    def _game_card(self, game: str) -> list[Output]:
        st = self.state
        if st.phase == PLAYING:
            raise Refusal("refuse.game_in_progress", "a game is in progress; hold back to abandon it",
                          game=st.game)
        if game not in games.ENGINES:
            raise Refusal("refuse.game_not_supported", f"{game} is not supported yet", game=game)
        self._undo.append(copy.deepcopy(st))
        st.phase, st.game, st.rules, st.players = GATHERING, game, [], []
        return [Say("session.game_chosen", {"game": f"game/{game}"}), Say("session.tap_players")]

    # gathering: rule cards, player cards in seat order, then next
    def _gather(self, inp: Input) -> list[Output]:
        st = self.state
        cls = games.ENGINES[st.game or ""]
        if isinstance(inp, Press):
            if inp.button == "back":
                if not self._undo:
                    raise Refusal("refuse.nothing_to_undo", "nothing to undo")
                lang = st.lang  # a language card is not a seat: back leaves it as it is
                self.state = self._undo.pop()
                self.state.lang = lang
                return [Say("undo.done")]
            if inp.button == "next":
                return self._start(copy.deepcopy(st))
            raise Refusal("refuse.not_now", "that button does nothing now")
        if not isinstance(inp, Tap):
            raise Refusal("refuse.not_now", "not now")
        kind, _, name = inp.identity.partition("/")
        if kind == "rules":
            if name not in cls.known_rules():
                raise Refusal("refuse.rules_unknown", f"{st.game} has no rule set {name}", rules=name)
            if name in st.rules:
                raise Refusal("refuse.rules_twice", f"rule card {name} is already in", rules=name)
            self._undo.append(copy.deepcopy(st))
            st.rules.append(name)
            return [Say("session.rules_added", {"rules": name})]
        if kind == "player":
            player = self.player_name(inp.identity)
            if player in st.players:
                raise Refusal("refuse.player_twice", f"{player} is already seated", player=player)
            if len(st.players) >= cls.max_players:
                raise Refusal("refuse.too_many_players", f"at most {cls.max_players} players",
                              high=cls.max_players)
            self._undo.append(copy.deepcopy(st))
            st.players.append(player)
            return [Say("session.player_seated", {"player": player, "n": len(st.players)})]
        raise Refusal("refuse.not_before_start", "seat the players first, then press next",
                      game=f"game/{st.game}")

    def _start(self, back_to: TableState) -> list[Output]:
        """Start the game; ``back_to`` is the table before ``next``, where
        ``back`` returns while the game is as it started."""
        st = self.state
        game = st.game or ""
        cls = games.ENGINES[game]
        opts = dict(self.settings["options"]).get(game, {})
        cls.check_setup(st.players, st.rules, opts)
        st.games_started += 1
        seed = zlib.crc32(f"{self.settings['seed']}:{st.games_started}".encode())
        self.engine = cls(Setup(tuple(st.players), tuple(st.rules), opts, seed))
        st.phase = PLAYING
        st.last = {"game": game, "rules": list(st.rules), "players": list(st.players)}
        self._undo = [back_to]
        started = Report("game_started", {"game": game, "rules": list(st.rules), "players": list(st.players)})
        return [started, *self.engine.start()]

    # playing: everything goes to the engine, after the checks every game shares
    def _to_engine(self, inp: Input) -> list[Output]:
        engine = self.engine
        assert engine is not None
        if isinstance(inp, Tap):
            kind = inp.identity.split("/", 1)[0]
            if kind == "player":
                inp = Tap(f"player/{self.player_name(inp.identity)}")
            elif kind == "rules":
                raise Refusal("refuse.rules_in_game", "rule cards go before the game starts")
            elif not inp.identity.startswith(engine.tag_prefixes):
                owner = next((g for g, c in games.ENGINES.items() if inp.identity.startswith(c.tag_prefixes)), None)
                raise Refusal("refuse.other_game", f"{inp.identity} belongs to another game",
                              tile=inp.identity, game=f"game/{owner}" if owner else "")
        if isinstance(inp, Press) and inp.button == "back" and engine.at_start and not engine.quiet and self._undo:
            return self._unstart()
        outputs = engine.handle(inp)
        if engine.finished:
            outputs += self._finish(engine)
        return outputs

    def _unstart(self) -> list[Output]:
        """``back`` before the game has taken any input: the table returns to
        where it was before ``next`` (e.g. a player had not tapped yet)."""
        game = self.state.game
        lang = self.state.lang  # a language card is not part of the start: back leaves it as it is
        self.state, self.engine = self._undo.pop(), None
        self.state.lang = lang
        self._undo.clear()
        out: list[Output] = [Report("game_unstarted", {"game": game})]
        if self.state.phase == GATHERING:
            return [*out, Say("session.unstarted", {"game": f"game/{game}", "players": list(self.state.players)})]
        return [*out, Say("session.again")]

    def _finish(self, engine: Engine) -> list[Output]:
        st = self.state
        result = engine.result()
        game = st.game or ""
        self.finished = FinishedPlay(game, tuple(st.rules), tuple(st.players), dict(result.totals),
                                     tuple(result.winners))
        standing = st.standings.setdefault(game, {})
        for p, pts in result.totals.items():
            standing[p] = standing.get(p, 0) + pts
        self._to_idle()
        ranked = sorted(standing.items(), key=lambda kv: -kv[1])
        return [Report("session_scores", {"game": game, "totals": dict(standing)}),
                Say("session.standings", {"scores": ranked}), Say("session.again")]

    def _to_idle(self) -> None:
        st = self.state
        self.engine = None
        self._undo.clear()  # the start of the game is out of reach
        st.phase, st.game, st.rules, st.players = IDLE, None, [], []
        self._apply_pending()

    # housekeeping: settings and games nights change only between games, so a
    # game in progress (and its replay) keeps the settings it started with
    def _housekeeping(self, inp: Housekeeping) -> list[Output]:
        if inp.kind not in ("configure", "new-session"):
            raise Refusal("refuse.not_now", f"unknown housekeeping {inp.kind!r}")
        st = self.state
        st.pending = {**(st.pending or {}), inp.kind: dict(inp.data)}
        if st.phase == IDLE:
            self._apply_pending()
        return []

    def _apply_pending(self) -> None:
        st = self.state
        pending, st.pending = st.pending or {}, None
        if "configure" in pending:
            new = pending["configure"]
            if st.last and new.get("names") != self.settings.get("names"):
                st.last = None  # "play again" would seat players under their old names
            st.settings = new
        if "new-session" in pending:
            st.session_no += 1
            st.standings = {}

    # long-press back: restart the step (or abandon the game) after a confirmation
    def _ask_confirm(self) -> list[Output]:
        if self.quiet:
            raise Refusal("refuse.quiet", "not during the night")
        if self.state.phase != PLAYING:
            raise Refusal("refuse.nothing_to_abandon", "no game to abandon")
        assert self.engine is not None
        self.state.confirm = "step" if self.engine.can_undo else "game"
        return [Say(f"session.confirm_{self.state.confirm}")]

    def _answer_confirm(self, inp: Input) -> list[Output]:
        what, self.state.confirm = self.state.confirm, None
        assert self.engine is not None
        if isinstance(inp, Press) and inp.button == "next":
            if what == "step":
                return [Say("session.step_restarted"), *self.engine.restart_step()]
            game = self.state.game
            self._to_idle()
            return [Report("game_abandoned", {"game": game}), Say("session.abandoned")]
        if isinstance(inp, Press) and inp.button == "back":
            return [Say("session.confirm_cancelled"), *self.engine.prompt()]
        if isinstance(inp, TimerFired):  # the game's clock keeps running while we ask
            self.state.confirm = what
            return self._to_engine(inp)
        raise Refusal("refuse.confirm_pending", "press next to confirm or back to cancel")

    # ------------------------------------------------------------- resume
    def resume(self) -> list[Output]:
        """After the journal is replayed: say where the table is."""
        st = self.state
        if st.phase == PLAYING and self.engine is not None:
            where = [Say("session.resumed_game", {"game": f"game/{st.game}"}), *self.engine.resume()]
            if st.confirm is not None:  # a long press of back was waiting for its answer
                where.append(Say(f"session.confirm_{st.confirm}"))
            return where
        if st.phase == GATHERING:
            return [Say("session.resumed_gathering", {"game": f"game/{st.game}", "players": list(st.players)})]
        return [Say("session.ready")]
