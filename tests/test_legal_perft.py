"""The perft of a table game: ``handle()`` accepts exactly what ``legal()`` lists.

python-chess proves its move generator by walking every reachable position
to a bounded depth and counting; we walk every reachable state of each game
and, in every state, try **every input the game knows**:

- a tap of each tag of every game's components, of each player's card, of a
  stranger's card and of a tag of no game;
- each button (``next``, ``back``);
- each submit field any game takes (and one none does) from every player,
  with boundary values (the field's ``low - 1 … high + 1`` where ``legal``
  offers it, 0, 1, and values of the wrong type; gifts to each kind of
  receiver);
- each timer the game has armed and has not cancelled, and a stale one;
- each draw the game asked for and has not had, with values at and past
  its bounds, and a draw it never asked for.

For taps, buttons and submits — the inputs ``legal()`` describes — the walk
checks that ``handle()`` accepts the input exactly when ``legal()`` lists it
(a tap's pattern such as ``mh/girl/*`` stands for every identity it fits);
the one exception is a ``blind`` entry of the step table, whose guard reads
a secret the public page must not depend on (Seven Knights' early tile),
which ``legal()`` offers and ``handle()`` may refuse.  ``repeat`` is the
loop's (it says the last lines again), timers and draws are the runtime's:
``legal()`` lists none of them, and the walk only feeds them.  For every
input, a refusal must leave the engine exactly as it was (a deep snapshot of
everything it holds, before and after).

The walk: breadth first from the start to a depth budgeted per game, then
seeded playouts through whole games (every state on the way, and every
state one accepted input away from it, checked the same), so every step of
every game is reached.  States are deduplicated by a hash of their snapshot
(the state, the sealed submits, whether ``back`` has something to take back,
the armed timers and asked draws): two engines that differ only in how they
got there count once.  Run with ``-s`` to see the states visited per game.
"""

from __future__ import annotations

import copy
import fnmatch
import hashlib
import io
import pickle
import random
import time
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from companion.core.engine import Engine, Legal, Setup, Take
from companion.core.events import (
    CancelTimer,
    Draw,
    Drawn,
    Input,
    Output,
    Press,
    Refusal,
    SetTimer,
    Submit,
    Tap,
    TimerFired,
)
from companion.core.table import PLAYING, Table
from companion.games import GAMES
from companion.games.demagogos import Demagogos
from companion.games.madness_hour import MadnessHour
from companion.games.madness_hour.rules import BATTLE_FIELDS
from companion.games.one_night import OneNight
from companion.games.seven_knights import SevenKnights

PLAYERS = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black", "pink", "grey")
# The submit fields each game takes somewhere (the table names none of them:
# a step takes the kind ``submit``, its guard the field); every game also
# gets one field no game takes.
FIELDS: Mapping[type[Engine], tuple[str, ...]] = {Demagogos: ("bid", "gift", "exchange", "vp_bid"),
                                                  MadnessHour: tuple(BATTLE_FIELDS)}
ODD_VALUES: tuple[Any, ...] = (0, 1, "1", True, None)  # and each field's own bounds


def tags(game: type[Engine]) -> tuple[str, ...]:
    """The game's own tags, one of each other game's, and a tag of no game."""
    return (*game.components, *(g.components[0] for g in GAMES if g is not game), "zz/nothing")


@dataclass(frozen=True)
class Walk:
    """One game set-up and its budget: from the start (or after ``prefix``),
    breadth first to ``depth``, then ``playouts`` seeded games of at most
    ``length`` inputs, checking every state one input around each state on
    the way (``around``) or only the states on the way."""

    game: type[Engine]
    players: int
    rules: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    depth: int = 2
    playouts: int = 2
    length: int = 120
    around: bool = True
    prefix: tuple[Input, ...] = ()
    label: str = ""
    cards: tuple[str, ...] = ()  # components tapped before the start (One Night's deck)
    late: Callable[[Any], None] | None = None  # sets a later round's public standing at the start

    @property
    def name(self) -> str:
        return f"{self.game.game}-{self.players}p" + "".join(f"-{r}" for r in self.rules) + "".join(
            f"-{k}={v}" for k, v in self.options.items()) + (f"-{self.label}" if self.label else "")


def taps(*ids: str) -> tuple[Input, ...]:
    return tuple(Press(i) if i == "next" else Tap(i if "/" in i else f"skb/knight/{i}") for i in ids)


# Seven Knights' captain check and the witch's holder: no election, the
# formation holds, the (unknown) captain taps for the witch team; at 6 players
# the witch lay in front of a player, so naming the captain asks for the holder.
_UNKNOWN_CAPTAIN = taps("next", "next", "next", "2", "1", "2", "3", "4", "5", "next", "skb/witch", "player/red")
# Madness Hour's battle: a split vote at the climax.
_SPLIT = (Tap("player/red"), Press("next"), Tap("mh/climax"), Press("next"), Tap("player/blue"),
          Tap("mh/side/keep"), Tap("player/green"), Tap("mh/side/kill"))


def two_vp_each(e: Any) -> None:
    """Demagogos some rounds in: everyone has 2 VP, so this round's winners exit and the game can end."""
    e.state.vp = {p: 2 for p in e.players}
    e.state.vp_start = dict(e.state.vp)


def hunter_executed(e: Any) -> None:
    """One Night's reveal done: red, the doppelganger who copied the hunter, is
    executed and the count did not say whom red voted for (the hunter step)."""
    e.state.step = "reveal"
    e.state.revealed = {"red": "onw/doppelganger/1", "blue": "onw/werewolf/1", "green": "onw/hunter/1"}
    e.state.copied = {"red": "hunter"}
    e.state.executed = ["red"]


_DOPPEL_HUNTER = ("onw/doppelganger/1", "onw/hunter/1", "onw/werewolf/1", "onw/seer/1", "onw/robber/1",
                  "onw/villager/1")
_DAYBREAK = ("onw/alpha-wolf/1", "onw/werewolf/1", "onw/pi/1", "onw/bodyguard/1", "onw/curator/1", "onw/hunter/1",
             "onw/villager/1")

WALKS = (
    Walk(SevenKnights, 5, depth=3, playouts=3),  # basic, one tile in the centre
    Walk(SevenKnights, 6, depth=1, playouts=1),  # basic, every tile dealt
    Walk(SevenKnights, 6, depth=4, playouts=0, prefix=_UNKNOWN_CAPTAIN, label="unknown-captain"),
    Walk(SevenKnights, 3, ("special",), depth=2, playouts=2),  # the witch never dealt
    Walk(SevenKnights, 5, ("advanced",), depth=1, playouts=1),
    Walk(SevenKnights, 4, ("cooperative",), depth=2, playouts=2),
    Walk(OneNight, 3, depth=6, playouts=4, length=160),
    Walk(OneNight, 5, depth=4, playouts=2, length=160),
    Walk(OneNight, 4, ("ultimate",), depth=4, playouts=2, length=160),  # the edition's default deck
    Walk(OneNight, 3, ("ultimate",), depth=5, playouts=4, length=160, label="doppelganger-hunter",
         cards=_DOPPEL_HUNTER),
    Walk(OneNight, 3, ("ultimate",), depth=4, playouts=2, label="hunter-shot", cards=_DOPPEL_HUNTER,
         late=hunter_executed),
    # Daybreak: the alpha wolf's centre werewolf card (3 + 3 + 1), the PI's and the artifacts' taps at
    # the reveal, the bodyguard holding a counted vote's executed back until the reveal is done
    Walk(OneNight, 3, ("ultimate",), depth=4, playouts=4, length=160, label="daybreak", cards=_DAYBREAK),
    Walk(MadnessHour, 2, depth=5, playouts=4),
    Walk(MadnessHour, 3, options={"turn_s": 60}, depth=3, playouts=3),  # turn timers armed
    Walk(MadnessHour, 4, depth=3, playouts=0, prefix=_SPLIT, label="battle"),
    Walk(MadnessHour, 5, depth=2, playouts=2),
    Walk(Demagogos, 6, depth=1, playouts=1, length=70, around=False),  # ~200 inputs a state: the path only
    Walk(Demagogos, 6, depth=0, playouts=2, length=60, around=False, late=two_vp_each, label="endgame"),
)


# ------------------------------------------------------------------ a node
@dataclass
class Node:
    """An engine, and what the runtime holds for it: its armed timers and
    the draws it asked for and has not had."""

    engine: Engine
    timers: tuple[str, ...] = ()
    draws: tuple[Draw, ...] = ()
    via: Input | None = None  # the input that led here

    def after(self, inp: Input, engine: Engine, outputs: Sequence[Output]) -> Node:
        timers = [t for t in self.timers if not (isinstance(inp, TimerFired) and inp.name == t)]
        draws = [d for d in self.draws if not (isinstance(inp, Drawn) and inp.name == d.name)]
        for o in outputs:
            if isinstance(o, SetTimer):
                timers = [t for t in timers if t != o.name] + [o.name]
            elif isinstance(o, CancelTimer):
                timers = [t for t in timers if t != o.name]
            elif isinstance(o, Draw):
                draws = [d for d in draws if d.name != o.name] + [o]
        return Node(engine, tuple(timers), tuple(draws), inp)

    def key(self) -> bytes:
        e = self.engine
        blob = pickle.dumps((e.state, e.sealed, bool(e._undo), e._final, sorted(self.timers),
                             sorted(d.name for d in self.draws)))
        return hashlib.blake2b(blob, digest_size=16).digest()


def draw_values(d: Draw) -> list[Any]:
    """Answers at and past the draw's bounds (the count of a list draw too)."""
    if not d.count:
        return [d.low, d.high, d.high + 1]
    ramp = [min(d.high, d.low + i) for i in range(d.count)]
    return [ramp, list(reversed(ramp)), [d.high] * d.count, ramp[:-1], [d.high + 1] * d.count]


def submit_values(engine: Engine, player: str, name: str, legal: Legal) -> list[Any]:
    ask = legal.submits.get(name)
    if name == "gift":
        to = next(p for p in engine.players if p != player)
        gems = [1, ask.high, ask.high + 1] if ask else [1]
        return [{}, {"to": to}, {"to": to, "gems": "1"}, {"to": to, "gems": 0},
                *({"to": who, "gems": n} for who in (to, player, "nobody") for n in gems)]
    bounds = [ask.low - 1, ask.low, ask.high, ask.high + 1] if ask else []
    return [*bounds, *ODD_VALUES]


def inputs(node: Node, legal: Mapping[str, Legal]) -> Iterator[Input]:
    """Every input the game knows, in this state (module docstring)."""
    e = node.engine
    yield from (Tap(t) for t in tags(type(e)))
    yield from (Tap(f"player/{p}") for p in (*e.players, "stranger"))
    yield Press("next")
    yield Press("back")
    for p in e.players:
        for name in FIELDS.get(type(e), ()):
            for value in submit_values(e, p, name, legal[p]):
                yield Submit(p, name, value)
        yield Submit(p, "nonsense", 1)
    yield from (TimerFired(t) for t in node.timers)
    yield TimerFired("stale")
    for d in node.draws:
        yield from (Drawn(d.name, v) for v in draw_values(d))
    yield Drawn("never-asked", 1)


def listed(legal: Mapping[str, Legal], inp: Input) -> bool | None:
    """Does ``legal()`` (``legal[""]``: the table's) list ``inp``?  None for
    what it does not describe."""
    if isinstance(inp, Press):
        return inp.button in legal[""].buttons
    if isinstance(inp, Tap):
        return any(fnmatch.fnmatchcase(inp.identity, t) for t in legal[""].taps)
    if isinstance(inp, Submit):
        ask = legal[inp.player].submits.get(inp.field)
        if ask is None:
            return False
        value = inp.value
        if ask.choices and isinstance(value, dict):  # a gift: {to: one of the choices, gems: low … high}
            return (set(value) == {"to", "gems"} and value["to"] in ask.choices
                    and ask.check(value["to"]) is None and replace(ask, choices=()).check(value["gems"]) is None)
        return ask.check(value) is None
    return None


def blind(engine: Engine, inp: Input) -> bool:
    """Is ``inp``'s entry in the current step a ``blind`` one (legal offers it whatever a secret says)?"""
    try:
        kind, _ = engine.kind_of(inp)
    except Refusal:
        return False
    take = engine.STEPS[engine.state.step].takes.get(kind)
    return take is not None and take.blind


# ------------------------------------------------------------------ the walk
@dataclass
class Tally:
    states: int = 0
    inputs: int = 0
    accepted: int = 0
    blind_refusals: int = 0
    steps: set[str] = field(default_factory=set)
    mismatches: list[str] = field(default_factory=list)


class Frozen:
    """An engine (or a table) pickled once, and as many copies of it as asked: a pickle round trip is as deep
    as ``copy.deepcopy`` and several times quicker.  What a deep copy keeps as the same objects
    stays so — functions (a rule set's formulas), strings, tuples of such — so a copy is the deep
    copy's twin down to which of its parts are one object, which the snapshot's pickle (the
    state's key) shows."""

    def __init__(self, engine: Engine | Table) -> None:
        self.kept: list[Any] = []
        self._index: dict[int, int] = {}
        out = io.BytesIO()
        pickler = pickle.Pickler(out, pickle.HIGHEST_PROTOCOL)
        pickler.persistent_id = self._keep  # type: ignore[method-assign]
        pickler.dump(engine)
        self.blob = out.getvalue()

    def _keep(self, obj: Any) -> int | None:
        if not atomic(obj):
            return None
        if id(obj) not in self._index:
            self._index[id(obj)] = len(self.kept)
            self.kept.append(obj)
        return self._index[id(obj)]

    def copy(self) -> Any:
        unpickler = pickle.Unpickler(io.BytesIO(self.blob))
        unpickler.persistent_load = self.kept.__getitem__  # type: ignore[method-assign]
        return unpickler.load()


ATOMIC = (str, bytes, types.FunctionType)  # what ``copy.deepcopy`` keeps and pickle would make anew


def atomic(obj: Any) -> bool:
    """Does ``copy.deepcopy`` give ``obj`` itself back (of what a pickle would copy)?"""
    if type(obj) is tuple:
        return all(atomic(x) or isinstance(x, int | float | bool | type(None)) for x in obj)
    return isinstance(obj, ATOMIC)


def check(node: Node, tally: Tally) -> list[Node]:
    """Try every input on the state of ``node``; the accepted ones' children."""
    e = node.engine
    tally.states += 1
    tally.steps.add(e.state.step)
    frozen = Frozen(e)  # each input is tried on a fresh copy; a refusal's is compared with another
    before = vars(frozen.copy())
    legal = {"": e.legal(None), **{p: e.legal(p) for p in e.players}}
    children: list[Node] = []
    cur = frozen.copy()
    for inp in inputs(node, legal):
        tally.inputs += 1
        said = listed(legal, inp)
        try:
            outputs = cur.handle(inp)
        except Refusal as refusal:
            if vars(cur) != before:
                tally.mismatches.append(f"{e.state.step}: refused {inp} ({refusal.key}) changed the engine")
                cur = frozen.copy()
            if said and blind(cur, inp):
                tally.blind_refusals += 1
            elif said:
                tally.mismatches.append(f"{e.state.step}: legal lists {inp}, handle refuses it ({refusal.key})")
            continue
        tally.accepted += 1
        if said is False:
            tally.mismatches.append(f"{e.state.step}: handle accepts {inp}, legal does not list it")
        children.append(node.after(inp, cur, outputs))
        cur = frozen.copy()
    return children


def weight(node: Node, child: Node) -> float:
    """How a playout picks its next state: onward (a new step) more often,
    a gift or ``back`` seldom (they lead nowhere new)."""
    if isinstance(child.via, Submit) and child.via.field == "gift" or child.via == Press("back"):
        return 0.05
    return 4.0 if child.engine.state.step != node.engine.state.step else 1.0


def walk(w: Walk) -> Tally:
    tally = Tally()
    engine = w.game(Setup(PLAYERS[:w.players], w.rules, w.options, w.cards))
    if w.late is not None:
        w.late(engine)
    root = Node(engine).after(Press("start"), engine, engine.start())
    for inp in w.prefix:
        root = root.after(inp, engine, engine.handle(inp))
    checked: dict[bytes, list[Node]] = {}

    def visit(node: Node) -> list[Node]:
        """The node's children, checking it the first time its state is met."""
        k = node.key()
        if k not in checked:
            checked[k] = check(node, tally)
        return checked[k]

    frontier, seen = [root], {root.key()}
    for _ in range(w.depth + 1):  # breadth first: every state within the depth
        nxt: list[Node] = []
        for node in frontier:
            for child in visit(node):
                if (k := child.key()) not in seen:
                    seen.add(k)
                    nxt.append(child)
        frontier = nxt
    rng = random.Random(f"perft:{w.name}")
    for _ in range(w.playouts):  # whole games: every step reached
        node = root
        for _ in range(w.length):
            here = node.key()
            moves = [c for c in visit(node) if c.key() != here]
            if w.around:  # and every state one input away
                for c in moves:
                    visit(c)
            if node.engine.finished or not moves:
                break
            node = rng.choices(moves, [weight(node, c) for c in moves])[0]
    return tally


RESULTS: dict[str, Tally] = {}


@pytest.mark.parametrize("w", WALKS, ids=lambda w: w.name)
def test_handle_accepts_exactly_what_legal_lists_in_every_reachable_state(w: Walk) -> None:
    started = time.perf_counter()
    tally = walk(w)
    RESULTS[w.name] = tally
    print(f"\nperft {w.name}: {tally.states} states, {tally.inputs} inputs ({tally.accepted} accepted, "
          f"{tally.blind_refusals} blind refusals), steps {sorted(tally.steps)}, "
          f"{time.perf_counter() - started:.1f} s")
    assert not tally.mismatches, "\n".join(tally.mismatches[:40])


def test_the_walks_reach_every_step_of_every_game() -> None:
    """The playouts are what reach the late steps: together, each game's walks
    visit every step of its table."""
    if len(RESULTS) < len(WALKS):
        pytest.skip("runs after the walks (the whole file)")
    for game in GAMES:
        walks = [t for name, t in RESULTS.items() if name.startswith(f"{game.game}-")]
        steps = set().union(*(t.steps for t in walks))
        print(f"\nperft {game.game}: {sum(t.states for t in walks)} states in {len(walks)} walks")
        assert steps == set(game.STEPS), (game.game, set(game.STEPS) - steps)


# ------------------------------------------- what the walk found (before the table was the source)
# Each mismatch the walk found in the hand-written and default ``legal()``s, as a
# regression test: the public page offered what the table refused, or hid what it took.
def fed(engine: Engine, *inputs: Input) -> Engine:
    engine.start()
    for inp in inputs:
        engine.handle(inp)
    return engine


def test_perft_seven_knights_command_step_does_not_offer_next() -> None:
    """The issue's example: the default offered ``next`` in the command step,
    where it is refused (the captain taps their own tile first)."""
    e = fed(SevenKnights(Setup(PLAYERS[:5])), *taps("next", "next", "next"))
    assert e.state.step == "command"
    assert "next" not in e.legal().buttons
    assert set(e.legal().taps) == {f"skb/knight/{i}" for i in range(1, 6)} | {"skb/witch", *(
        f"player/{p}" for p in PLAYERS[:5])}  # the captain's tile, or a bewitched captain conceding


def test_perft_seven_knights_lists_the_tiles_and_cards_each_step_takes() -> None:
    """The default listed no taps at all, and ``next`` where it is refused:
    the formation without the captain's tile, the witch team without the
    holder, the game over."""
    e = fed(SevenKnights(Setup(PLAYERS[:5])), *taps("next", "next", "next", "2", "1"))
    assert e.state.step == "formation"
    assert "next" not in e.legal().buttons  # the captain's own tile (2) is not laid yet
    assert "skb/knight/1" not in e.legal().taps and "skb/knight/3" in e.legal().taps
    e.handle(Tap("skb/knight/2"))
    assert "next" in e.legal().buttons


def test_perft_seven_knights_tiles_before_the_command_are_one_pattern() -> None:
    """Before the command phase any tile says "the captain is ready", named
    ``skb/*`` in public: legal lists the pattern, not the tiles."""
    e = fed(SevenKnights(Setup(PLAYERS[:5])))
    assert e.legal().taps[0] == "skb/*" and not [t for t in e.legal().taps if t.startswith("skb/knight")]


def test_perft_one_night_offers_nothing_at_night_and_next_only_when_taken() -> None:
    """The default offered next (and repeat, back) by night, during the count,
    before every card was shown and once the game was over."""
    e = fed(OneNight(Setup(PLAYERS[:3])), Press("next"))
    assert e.state.step == "night" and e.legal() == Legal()


def test_perft_one_night_reveal_lists_the_cards_it_takes() -> None:
    e = OneNight(Setup(PLAYERS[:3]))
    e.start()
    e.state.step = "reveal"  # as the count leaves it
    assert "next" not in e.legal().buttons  # nobody has shown their card
    assert set(e.legal().taps) == {f"player/{p}" for p in PLAYERS[:3]}  # a player card first
    e.handle(Tap("player/red"))
    assert set(e.legal().taps) == {*e.cards, *(f"player/{p}" for p in PLAYERS[:3])}  # a card, or a vote


def test_perft_madness_hour_next_only_where_a_step_takes_it() -> None:
    """The hand-written legal offered next in every step: the Girl's seat,
    the vote, a battle without every strength, an unfinished ending, the end."""
    e = fed(MadnessHour(Setup(PLAYERS[:4])))
    assert "next" not in e.legal().buttons
    fed_more = (Tap("player/red"), Press("next"), Tap("mh/climax"), Press("next"))
    for inp in fed_more:
        e.handle(inp)
    assert e.state.step == "vote" and "next" not in e.legal().buttons
    for inp in (*_SPLIT[4:], Tap("player/yellow"), Tap("mh/side/keep")):
        e.handle(inp)
    assert e.state.step == "battle" and "next" not in e.legal().buttons  # no strength sent yet
    for p in ("blue", "green", "yellow"):
        e.handle(Submit(p, "strength", 3))
    assert "next" in e.legal().buttons


def test_perft_madness_hour_taps_name_only_the_cards_the_step_takes() -> None:
    """``player/*`` took in the Girl's own card, the dead and strangers;
    ``mh/state/dead`` and a side card were offered before a player card."""
    e = fed(MadnessHour(Setup(PLAYERS[:4])), Tap("player/red"), Press("next"))
    assert e.state.step == "explore"
    assert set(e.legal().taps) == {"mh/climax", "player/blue", "player/green", "player/yellow"}
    e.handle(Tap("player/blue"))
    assert "mh/state/dead" in e.legal().taps
    e.handle(Tap("mh/state/dead"))
    assert "player/blue" not in e.legal().taps  # dead already
    for inp in (Tap("mh/climax"), Press("next")):
        e.handle(inp)
    assert set(e.legal().taps) == {"player/green", "player/yellow"}  # a side card after a player card
    e.handle(Tap("player/green"))
    assert set(e.legal().taps) >= {"mh/side/keep", "mh/side/kill", "mh/state/dead"}


# ------------------------------------------------------------ the table's own phases
TABLE_TAPS = (*(f"game/{g.game}" for g in GAMES), "game/chess", "player/red", "player/blue", "player/green",
              "player/yellow", "rules/basic", "rules/special", "rules/nonsense", "lang/ja", "lang/en", "zz/x")
TABLE_PRESSES = ("next", "back", "hold-back", "repeat")


def test_the_tables_phases_offer_exactly_the_buttons_they_take() -> None:
    """The table between games (and at a game's first step), walked the same
    way: a button is accepted exactly when ``legal()`` lists it (``repeat`` is
    the loop's); a tap accepted is one ``legal()`` names (the table's cards
    are open families, ``player/*``, so the converse is not exact); a refusal
    changes nothing."""
    seen: set[bytes] = set()
    frontier, states, problems = [Table(dict((g.game, g) for g in GAMES))], 0, []
    for _ in range(6):
        nxt = []
        for table in frontier:
            key = pickle.dumps((table.state, table.engine is not None and table.engine.state))
            if key in seen:
                continue
            seen.add(key)
            states += 1
            legal, before, frozen = table.legal(None), copy.deepcopy(table.state), Frozen(table)
            for inp in (*(Press(b) for b in TABLE_PRESSES), *(Tap(t) for t in TABLE_TAPS)):
                cur = frozen.copy()
                try:
                    cur.handle(inp)
                except Refusal as refusal:
                    if cur.state != before:
                        problems.append(f"{table.state.phase}: refused {inp} changed the table")
                    if isinstance(inp, Press) and inp.button in legal.buttons and inp.button != "repeat":
                        problems.append(f"{table.state.phase}: legal lists {inp}, refused ({refusal.key})")
                    continue
                label = inp.button if isinstance(inp, Press) else inp.identity
                if isinstance(inp, Press) and inp.button in ("next", "back") and label not in legal.buttons:
                    problems.append(f"{table.state.phase}: accepts {inp}, legal does not list it")
                if isinstance(inp, Tap) and not any(fnmatch.fnmatchcase(label, t) for t in legal.taps):
                    problems.append(f"{table.state.phase}: accepts {inp}, legal does not list it")
                if cur.state.phase != PLAYING or table.state.phase != PLAYING:
                    nxt.append(cur)
        frontier = nxt
    print(f"\nperft table: {states} states")
    assert not problems, "\n".join(sorted(set(problems))[:30])


def seated(*inputs: Input) -> Table:
    table = Table(dict((g.game, g) for g in GAMES))
    for inp in inputs:
        table.handle(inp)
    return table


def test_perft_table_gathering_offers_next_only_when_the_game_can_start() -> None:
    """``next`` was offered however many were seated; the start refused it."""
    table = seated(Tap("game/seven-knights"), Tap("player/red"), Tap("player/blue"))
    assert "next" not in table.legal().buttons  # 2 players: refuse.player_count
    table.handle(Tap("player/green"))
    assert "next" in table.legal().buttons  # 3: special


def test_perft_table_offers_back_and_language_cards_at_a_games_first_step() -> None:
    """Before the game's first input ``back`` returns to the seating and a
    language card works all game long: the game's own legal knew neither."""
    table = seated(Tap("game/seven-knights"), *(Tap(f"player/{p}") for p in PLAYERS[:4]), Press("next"))
    assert "back" in table.legal().buttons and "lang/*" in table.legal().taps
    table.handle(Press("next"))  # the quest is done: back now takes that back, in the game
    assert table.legal().buttons.count("back") == 1


def test_the_tables_phase_table_names_callables_and_phases() -> None:
    """As the engines' ``STEPS`` are checked when their class is made: every
    entry of ``Table.PHASES`` is a ``Take`` of a callable leading to phases."""
    for phase, step in Table.PHASES.items():
        for kind, take in step.takes.items():
            assert isinstance(take, Take) and callable(take.handler), (phase, kind)
            assert set(take.to) <= set(Table.PHASES), (phase, kind, take.to)
