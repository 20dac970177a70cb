"""Each game is one folder and one line: one dispatch style — the
step table in the Engine base — for all four engines, each game's tags only
in its own package, each game's log events rendered by its own package."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from companion.app import pretty
from companion.core import tags
from companion.core.engine import Engine, Goto, Setup, Step, StepError, Take
from companion.core.events import Drawn, Output, Press, Refusal, Say, Submit, Tap, TimerFired
from companion.games import GAMES, all_components, component_sets, identities
from companion.games.demagogos import Demagogos
from companion.games.madness_hour import MadnessHour
from companion.games.one_night import OneNight
from companion.games.one_night.roles import EDITIONS, ROLES, every_card, in_edition
from companion.games.seven_knights import SevenKnights
from conftest import code_files

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = ("red", "blue", "green", "yellow", "purple", "orange")


# ------------------------------------------------------------ the step table
@dataclass
class _State:
    step: str = "a"


class Toy(Engine):
    """A two-step game: ``a`` takes ``next``, ``b`` takes taps and refuses
    only ``next`` in its own words."""

    game: ClassVar[str] = "toy"
    tag_prefixes: ClassVar[tuple[str, ...]] = ("toy/",)
    min_players: ClassVar[int] = 1
    max_players: ClassVar[int] = 4
    def __init__(self, setup: Setup) -> None:
        super().__init__(setup)
        self.state = _State()

    def start(self) -> list[Output]:
        return self.prompt()

    def prompt(self) -> list[Output]:
        return [Say(f"toy.{self.state.step}")]

    def _on(self, inp: Press) -> list[Output]:
        return [Say("toy.on", {"button": inp.button})]

    def _tapped(self, inp: Tap) -> list[Output]:
        return [Say("toy.tapped", {"tile": inp.identity})]

    STEPS: ClassVar[dict[str, Step]] = {
        "a": Step({"next": Take(_on, ("b",))}, ("toy.refuse.a", "press next")),
        "b": Step({"tap": Take(_tapped)}, ("toy.refuse.b_next", "tap something"), refuses=("next",)),
    }


def refusal(engine: Engine, inp: Any) -> Refusal:
    with pytest.raises(Refusal) as exc:
        engine.handle(inp)
    return exc.value


def test_the_base_calls_the_steps_handler_for_the_inputs_kind() -> None:
    toy = Toy(Setup(players=("red",)))
    assert toy.accepts() == ("next",)
    assert toy.handle(Press("next")) == [Say("toy.on", {"button": "next"})]
    assert toy.accepts() == ("tap",)
    assert toy.handle(Tap("toy/x")) == [Say("toy.tapped", {"tile": "toy/x"})]


def test_a_step_refuses_what_it_does_not_take_with_its_own_key() -> None:
    toy = Toy(Setup(players=("red",)))
    for inp in (Tap("toy/x"), TimerFired("t"), Submit("red", "bid", 1), Drawn("d", 1)):
        r = refusal(toy, inp)
        assert (r.key, r.reason) == ("toy.refuse.a", "press next")
    assert toy.state.step == "a"
    toy.handle(Press("next"))
    assert refusal(toy, Press("next")).key == "toy.refuse.b_next"
    # b's refusal is for next only: a timer gets the base's "not now"
    r = refusal(toy, TimerFired("t"))
    assert (r.key, r.reason) == ("refuse.not_now", "not in the b step")


def test_a_step_table_naming_no_method_fails_when_the_class_is_made() -> None:
    """Handlers are callables in a ``Take`` (a name would lose the thread for
    tools and type checkers), and every step a handler may lead to is a step."""
    with pytest.raises(TypeError, match="'_no_such'"):
        type("Broken", (Engine,), {"STEPS": {"a": Step({"next": "_no_such"})}})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="not a Take of a callable"):  # a Take of something no callable
        type("Broken", (Engine,), {"STEPS": {"a": Step({"next": Take(3)})}})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"to \['c'\], no step"):
        type("Broken", (Engine,), {"STEPS": {"a": Step({"next": Take(Toy._on, ("c",))})}})


def test_a_handler_choosing_a_step_its_entry_does_not_declare_fails_in_every_build() -> None:
    """The table says where each input may lead and the base moves there; a
    handler may only choose among the entry's targets — not under
    ``__debug__`` alone: a ``StepError``, and the step stays where it was."""
    def _sly(game: Toy, inp: Press) -> Goto:
        return Goto("b", [Say("toy.on", {"button": inp.button})])

    for to in ((), ("a",), ("a", "c"), ("c",)):
        class Sly(Toy):
            STEPS: ClassVar[dict[str, Step]] = {"a": Step({"next": Take(_sly, to)}), "b": Step({}), "c": Step({})}

        sly = Sly(Setup(players=("red",)))
        with pytest.raises(StepError, match="a --next--> b"):
            sly.handle(Press("next"))
        assert sly.state.step == "a"


def test_a_handler_setting_the_step_by_hand_fails_in_every_build() -> None:
    """Nothing but the table moves a step: a handler that sets it itself,
    even to a target its entry declares, is a defect of the game."""
    def _by_hand(game: Toy, inp: Press) -> list[Output]:
        game.state.step = "b"
        return []

    class ByHand(Toy):
        STEPS: ClassVar[dict[str, Step]] = {"a": Step({"next": Take(_by_hand, ("b",))}), "b": Step({})}

    by_hand = ByHand(Setup(players=("red",)))
    with pytest.raises(StepError, match="by hand"):
        by_hand.handle(Press("next"))
    assert by_hand.state.step == "a"


def test_an_entry_of_several_targets_moves_only_where_its_handler_chooses() -> None:
    """One target: the base goes there; several: plain outputs stay (when the
    step is among them), a ``Goto`` moves and may ask for the new step's prompt."""
    def _maybe(game: Toy, inp: Press) -> list[Output] | Goto:
        return Goto("b", [Say("toy.on", {"button": "next"})], prompt=True) if game.sealed else []

    class Chooser(Toy):
        STEPS: ClassVar[dict[str, Step]] = {"a": Step({"next": Take(_maybe, ("a", "b"))}), "b": Step({})}

    chooser = Chooser(Setup(players=("red",)))
    assert chooser.handle(Press("next")) == [] and chooser.state.step == "a"
    chooser.sealed["x"] = 1
    assert chooser.handle(Press("next")) == [Say("toy.on", {"button": "next"}), Say("toy.b")]
    assert chooser.state.step == "b"


def test_a_goto_naming_no_step_goes_to_the_entrys_one_target() -> None:
    """A handler shared by steps says only that its new step's prompt follows;
    the table says where it leads — and an entry of several targets must be told."""
    def _on(game: Toy, inp: Press) -> Goto:
        return Goto(prompt=True)

    class Shared(Toy):
        STEPS: ClassVar[dict[str, Step]] = {"a": Step({"next": Take(_on, ("b",))}),
                                            "b": Step({"next": Take(_on, ("a", "b"))})}

    shared = Shared(Setup(players=("red",)))
    assert shared.handle(Press("next")) == [Say("toy.b")] and shared.state.step == "b"
    with pytest.raises(StepError, match="names no step"):
        shared.handle(Press("next"))
    assert shared.state.step == "b"


def test_no_game_sets_its_step_by_hand() -> None:
    """The step table is the one place a step changes: no assignment to a
    ``.step`` anywhere in the games' code (the driver's ``StepError`` catches
    it at run time; this catches it in a path no test walks)."""
    by_hand = []
    for path in code_files(ROOT / "companion" / "games"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = (node.targets if isinstance(node, ast.Assign)
                       else [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else [])
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, ast.Attribute) and part.attr == "step":
                        by_hand.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert by_hand == []


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.game)
def test_every_game_dispatches_through_the_base_step_table(game: type[Engine]) -> None:
    """One style: no engine writes its own dispatcher — the base's ``_handle``
    looks the step up (Seven Knights only wraps it to drop an unconfirmed
    concession first) — and the starting step is in the table."""
    assert game.STEPS
    assert "_handle" not in vars(game) or game is SevenKnights
    players = PLAYERS[:max(game.min_players, 3)]
    engine = game(Setup(players=players))
    assert engine.state.step in game.STEPS
    assert engine.accepts() == tuple(game.STEPS[engine.state.step].takes)
    assert engine.players == players


def test_refusals_keep_their_keys_through_the_table() -> None:
    """A sample of each game's "not now" refusals, as the tests of each game
    and their lines have them."""
    one_night = OneNight(Setup(players=PLAYERS[:4]))
    assert refusal(one_night, Tap("skb/witch")).key == "onw.refuse.foreign"
    assert refusal(one_night, TimerFired("vote:1")).key == "onw.refuse.stale_timer"
    assert refusal(one_night, Tap("onw/seer/1")).key == "onw.refuse.deal"
    one_night.handle(Press("next"))  # night: everything alike
    for inp in (Tap("skb/witch"), Press("next"), Drawn("other", 1)):
        assert refusal(one_night, inp).key == "onw.refuse.night"
    madness = MadnessHour(Setup(players=PLAYERS[:3]))
    assert refusal(madness, Tap("mh/girl/x")).key == "mh.refuse.unknown_card"
    assert refusal(madness, Tap("mh/side/keep")).key == "mh.refuse.vote_before_climax"
    assert refusal(madness, Press("next")).key == "mh.refuse.girl_first"
    demagogos = Demagogos(Setup(players=PLAYERS))
    assert refusal(demagogos, Press("next")).key == "dt.refuse.bids_missing"
    assert refusal(demagogos, Tap("dt/box/1")).key == "dt.refuse.box_not_now"
    assert refusal(demagogos, Submit("red", "vp_bid", 1)).key == "dt.refuse.submit_not_now"
    assert refusal(demagogos, Drawn("r1:cave", 1)).key == "refuse.bad_draw"
    knights = SevenKnights(Setup(players=PLAYERS[:5]))
    r = refusal(knights, Tap("player/red"))
    assert (r.key, r.params) == ("skb.refuse.not_now", {"step": "quest"})


# ------------------------------------------------------------ the components
def test_the_tag_sets_are_each_games_components_then_the_tables_own() -> None:
    sets = component_sets()
    assert list(sets) == ["seven-knights", "one-night", "madness-hour", "demagogos", "players", "games", "cards"]
    for game in GAMES:
        assert sets[game.game] == game.components
        assert all(i.startswith(game.tag_prefixes) for i in game.components)
    assert sets["seven-knights"] == (*(f"skb/knight/{n}" for n in range(1, 8)), "skb/witch")
    assert sets["madness-hour"] == ("mh/girl/human", "mh/girl/evil-god", "mh/climax", "mh/side/keep",
                                    "mh/side/kill", "mh/state/sane", "mh/state/mad", "mh/state/dead")
    assert sets["demagogos"] == tuple(f"dt/box/{n}" for n in range(1, 11))
    assert set(all_components()) == {i for g in GAMES for i in g.components}
    # the table's sets name the games' cards and rule cards from the engines
    assert sets["games"] == ("game/seven-knights", "game/one-night", "game/madness-hour", "game/demagogos")
    assert sets["cards"] == ("rules/basic", "rules/special", "rules/advanced", "rules/cooperative",
                             "rules/ultimate", "rules/daybreak", "lang/en", "lang/ja")
    # the core keeps only the table's own: no game's identity is listed there
    own = (*tags.PLAYER_CARDS, *tags.LANGUAGE_CARDS)
    assert not any(i.startswith((*g.tag_prefixes, "game/", "rules/")) for i in own for g in GAMES)


def test_a_games_identity_is_known_only_when_its_components_are_handed_in() -> None:
    assert not tags.is_known("onw/seer/1")
    assert tags.is_known("onw/seer/1", components=all_components())
    assert not tags.is_known("game/demagogos")  # a game's card is the game's, handed in like its components
    assert tags.is_known("game/demagogos", components=identities())
    assert tags.is_known("player/aki", ["aki"]) and tags.is_known("rules/x")


def test_one_nights_tags_are_its_roles_cards() -> None:
    """The roles' entries and the tag identities come from one list: each
    role's cards (4 villagers, 2 werewolves, 2 masons, one of each other;
    the robber's tag is the thief's role), and every edition's default
    deck is dealt from its set."""
    assert in_edition("jinrou") == ("villager", "werewolf", "seer", "thief", "madman", "tanner")
    assert every_card() == OneNight.components
    assert OneNight.components[:8] == (
        "onw/villager/1", "onw/villager/2", "onw/villager/3", "onw/villager/4",
        "onw/werewolf/1", "onw/werewolf/2", "onw/seer/1", "onw/thief/1")
    assert {"onw/mason/2", "onw/robber/1", "onw/doppelganger/1", "onw/madman/1"} <= set(OneNight.components)
    for edition in EDITIONS.values():
        for deck in edition.default_decks.values():
            assert all(n <= ROLES[role].sets[edition.id] for role, n in deck.items())


# --------------------------------------------------------------- the log
GAME_EVENTS = {  # one event of each game's, and its line as the readable log printed it before
    "formation": ({"tiles": ["skb/knight/1", "skb/witch"], "excluded": [], "verdict": "witch"},
                  "     3.0s  ═ formation: knight/1 witch   left out: —   → WITCH"),
    "onw_result": ({"executed": [], "winning_team": "village", "winners": ["red", "blue"]},
                   "     3.0s  ★ executed: nobody — village wins: red, blue"),
    "mh_result": ({"girl": "evil-god", "girl_alive": False, "dead": ["red"], "winners": []},
                  "     3.0s  ★ the Girl was the evil god, dead; dead: red — winners: nobody"),
    "dt_box": ({"box": 4, "content": "disaster", "player": "red", "gems": 0, "voided": 3},
               "     3.0s  ═ box 4: disaster — red +0 gems, 3 gems of treasure void"),
    "dt_exit": ({"player": "blue", "vp": 3, "place": 1},
                "     3.0s  ★ blue exits as a winner with 3 VP — place 1"),
}


@pytest.mark.parametrize("kind", GAME_EVENTS)
def test_a_games_event_is_rendered_by_its_own_package(kind: str) -> None:
    fields, line = GAME_EVENTS[kind]
    ev = {"t": 3.0, "event": kind, **fields}
    assert pretty.render(ev) == line
    assert pretty.render(ev, {}) == ""  # pretty.py itself knows no game's events
    owners = [g.game for g in GAMES if kind in g.shows]
    assert len(owners) == 1


def test_pretty_names_no_game_and_no_games_event() -> None:
    source = (ROOT / "companion/app/pretty.py").read_text()
    for game in GAMES:
        assert f"companion.games.{game.__module__.split('.')[2]}" not in source
        for kind in game.shows:
            assert f'"{kind}"' not in source


PER_STEP = re.compile(r"\bstep\s*(==|!=|\bin\b|\bnot in\b)")


def test_the_games_ask_which_step_they_are_in_at_most_ten_times_each_with_its_reason() -> None:
    """What a step prompts, whom it waits for and what it shows are declared
    beside it in the step table; a game's code asks "which step is this?"
    only where the step table cannot say it, and says why beside the check
    (a comment on its line or one of the two above)."""
    checks, silent = [], []
    for path in code_files(ROOT / "companion" / "games"):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            code = line.split("#", 1)[0]
            if not PER_STEP.search(code):
                continue
            where = f"{path.relative_to(ROOT)}:{i + 1}"
            checks.append(where)
            if not any("#" in near for near in lines[max(0, i - 2):i + 1]):
                silent.append(where)
    assert len(checks) <= 10, checks
    assert silent == [], silent
