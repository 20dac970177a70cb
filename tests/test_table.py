"""The table between games and the loop's shared behaviour: seating, rule
cards, language cards, refusals that change nothing, undo, repeat, the
reader coming and going, long-press back."""

from __future__ import annotations

import copy

import pytest

from companion.core.events import ButtonPressed

SEATS = ("player/red", "player/blue", "player/green", "player/yellow", "player/purple")


def start_sk(table, *extra: str, seats=SEATS) -> None:
    table.tap("game/seven-knights", *extra, *seats)
    table.press("next")


def snapshot(table):
    s = table.sim.loop.table
    return copy.deepcopy((s.state, s.engine.state if s.engine else None))


def test_game_card_then_players_then_next_starts_the_game(table) -> None:
    start_sk(table)
    started = table.last("game_started")
    assert started["players"] == ["red", "blue", "green", "yellow", "purple"]
    assert [e["input"] for e in table.of("accepted")][:2] == ["game/seven-knights", "player/red"]


def test_unknown_tag_refused_out_loud_and_nothing_changes(table) -> None:
    start_sk(table)
    before, m = snapshot(table), table.mark()
    table.tap("skb/knight/9")
    table.do("uid", "04A1B2C3D4")
    assert [e["input"] for e in table.since(m, "rejected")] == ["skb/knight/9", "uid:04A1B2C3D4"]
    assert all(e["reason"] == "unknown tag" for e in table.since(m, "rejected"))
    assert [e["key"] for e in table.since(m, "say")] == ["refuse.unknown_tag"] * 2
    assert snapshot(table) == before
    assert table.sim.app.journal.count_inputs() == 8  # the settings, game card, 5 players, next


def test_uid_through_the_tag_map(tmp_path, make_table) -> None:
    (tmp_path / "tags.yaml").write_text("04A1B2C3D4: game/one-night\n")
    t = make_table(reader={"tag_map": str(tmp_path / "tags.yaml")})
    t.do("uid", "04a1b2c3d4")
    assert t.last("accepted")["input"] == "game/one-night"


def test_card_of_another_game_refused(table) -> None:
    start_sk(table)
    before = snapshot(table)
    table.tap("onw/seer/1")
    assert table.last("rejected")["reason"] == "onw/seer/1 belongs to another game"
    assert table.keys()[-1] == "refuse.other_game"
    assert snapshot(table) == before


def test_game_card_during_a_game_refused(table) -> None:
    start_sk(table)
    table.tap("game/one-night")
    assert table.keys()[-1] == "refuse.game_in_progress"
    assert table.sim.loop.table.state.game == "seven-knights"


def test_player_card_twice_while_seating_refused(table) -> None:
    table.tap("game/seven-knights", "player/red", "player/red")
    assert table.last("rejected")["input"] == "player/red"
    assert table.sim.loop.table.players == ["red"]


def test_too_few_players_refused_at_next(table) -> None:
    table.tap("game/seven-knights", "player/red", "player/blue")
    table.press("next")
    assert table.keys()[-1] == "refuse.player_count"
    assert table.sim.loop.table.state.phase == "gathering"


def test_rule_card_for_this_game_only(table) -> None:
    table.tap("game/one-night", "rules/advanced")
    assert table.keys()[-1] == "refuse.rules_unknown"
    table.tap("game/seven-knights", "rules/advanced", "rules/advanced")
    assert table.keys()[-1] == "refuse.rules_twice"
    assert table.sim.loop.table.state.rules == ["advanced"]


def test_back_undoes_seating_one_by_one(table) -> None:
    table.tap("game/seven-knights", "player/red", "player/blue")
    table.press("back")
    assert table.sim.loop.table.players == ["red"]
    assert table.keys()[-1] == "undo.done"


@pytest.mark.parametrize("game", ["seven-knights", "one-night"])
def test_back_right_after_next_with_too_few_players_returns_to_seating(table, game: str) -> None:
    """``next`` pressed with 3 of 4 players seated.  While the game
    has taken no input, ``back`` returns to seating; the fourth player sits
    and the game starts with four."""
    table.tap(f"game/{game}", "player/red", "player/blue", "player/green")
    seated = snapshot(table)
    table.press("next")
    assert table.last("game_started")["players"] == ["red", "blue", "green"]
    table.press("back")
    assert table.last("accepted")["input"] == "back"
    assert table.last("game_unstarted") == {**table.last("game_unstarted"), "game": game}
    assert table.keys()[-1] == "table.unstarted"
    assert snapshot(table) == seated
    table.tap("player/yellow")
    table.press("next")
    assert table.last("game_started")["players"] == ["red", "blue", "green", "yellow"]


def test_back_reaches_seating_only_while_the_game_is_untouched(table) -> None:
    start_sk(table)
    table.press("next")  # the quest is over …
    table.press("back")  # … taken back: the game is as it started
    assert table.sim.loop.table.engine is not None
    table.press("back")
    assert table.keys()[-1] == "table.unstarted"
    table.press("next")  # the same five seated: the game starts again
    table.tap("skb/witch")
    table.press("next")  # the witch as the captain's tile: a verdict, final
    table.press("back")
    assert table.last("rejected")["input"] == "back" and table.sim.loop.table.engine is not None


def test_back_in_a_game_undoes_the_last_input_of_the_step(table) -> None:
    start_sk(table)
    table.tap("skb/knight/2")
    table.press("next")  # the captain confirms the tile tapped during the quest
    table.tap("skb/knight/1", "skb/knight/2")
    before = snapshot(table)
    table.tap("skb/knight/3")
    table.press("back")
    assert snapshot(table) == before


def test_repeat_says_the_last_lines_again_and_changes_nothing(table) -> None:
    start_sk(table)
    table.press("next")
    said = [e["key"] for e in table.of("say")][-1:]
    before, n = snapshot(table), table.sim.app.journal.count_inputs()
    table.press("repeat")
    assert table.last("accepted")["input"] == "repeat"
    assert table.keys()[-1:] == said
    assert snapshot(table) == before
    assert table.sim.app.journal.count_inputs() == n  # repeat is not an input of the game


def test_repeat_after_a_refusal_repeats_the_instruction(table) -> None:
    """A refusal explains itself once; repeat goes back to what to do."""
    table.tap("game/seven-knights", "player/red")
    table.tap("onw/seer/1")
    table.press("repeat")
    assert table.keys()[-2:] == ["refuse.not_before_start", "table.player_seated"]


def test_repeat_after_a_verdict_says_the_whole_verdict(table) -> None:
    start_sk(table)
    table.tap("skb/knight/1")
    table.press("next")
    table.tap("skb/knight/1", "skb/knight/2", "skb/knight/3", "skb/knight/4", "skb/knight/5")
    table.press("next")
    table.tap("skb/witch")  # left out: the formation is complete
    m = table.mark()
    table.press("next")  # nobody on the witch team: the verdict, the points, the prompt
    verdict = [e["key"] for e in table.since(m, "say")]
    assert verdict[:2] == ["skb.formation.holds", "skb.verdict.knights"] and len(verdict) == 8
    m = table.mark()
    table.press("repeat")
    assert [e["key"] for e in table.since(m, "say")] == verdict


def test_language_card_switches_narration(table) -> None:
    table.tap("lang/ja", "game/seven-knights")
    assert table.last("say")["lang"] == "ja"
    assert "ミュルマミウスの虜" in table.last("say")["text"] or "ミュルマミウス" in table.of("say")[-2]["text"]
    table.tap("lang/en")
    assert table.last("say")["lang"] == "en"


def test_reader_unplug_and_plug_announced_once_each(table) -> None:
    start_sk(table)
    before = snapshot(table)
    for _ in range(3):
        table.do("unplug", "reader")
        table.do("unplug", "reader")
        table.tap("skb/knight/1")  # nothing can arrive from an unplugged reader
        table.do("plug", "reader")
    states = [e["state"] for e in table.of("reader")]
    assert states == ["connected"] + ["disconnected", "connected"] * 3
    assert table.keys().count("reader.lost") == 3 and table.keys().count("reader.back") == 3
    assert snapshot(table) == before


def test_hold_back_restarts_the_step_after_confirmation(table) -> None:
    start_sk(table)
    table.tap("skb/knight/2")
    table.press("next")
    step_start = snapshot(table)
    table.tap("skb/knight/1", "skb/knight/2")
    table.do("hold", "back")
    assert table.keys()[-1] == "table.confirm_step"
    table.tap("skb/knight/3")  # anything but next/back is refused while asking
    assert table.keys()[-1] == "refuse.confirm_pending"
    table.press("next")
    assert snapshot(table) == step_start


def test_hold_back_then_back_cancels(table) -> None:
    start_sk(table)
    table.tap("skb/knight/2")
    table.press("next")
    table.tap("skb/knight/1")
    before = snapshot(table)
    table.do("hold", "back")
    table.press("back")
    assert "table.confirm_cancelled" in table.keys()
    assert snapshot(table) == before


def test_hold_back_with_nothing_to_undo_abandons_the_game(table) -> None:
    start_sk(table)
    table.do("hold", "back")
    assert table.keys()[-1] == "table.confirm_game"
    table.press("next")
    assert table.last("game_abandoned") is not None
    assert table.sim.loop.table.state.phase == "idle"
    assert table.sim.app.journal.plays() == []


def test_next_after_a_game_plays_again_with_the_same_players(table) -> None:
    table.tap("game/one-night", "player/red", "player/blue", "player/green")
    table.press("next")
    table.do("hold", "back")  # abandon at once; "next" in idle replays the last set-up
    table.press("next")  # confirm: abandoned
    table.press("next")  # the same game again
    assert table.last("game_started")["players"] == ["red", "blue", "green"]
    assert len(table.of("game_started")) == 2


def test_names_from_config_replace_colours_in_events(make_table) -> None:
    t = make_table(players={"names": {"red": "aki", "blue": "ben"}})
    t.tap("game/seven-knights", "player/red", "player/blue", "player/green", "player/yellow")
    t.press("next")
    assert t.last("game_started")["players"] == ["aki", "ben", "green", "yellow"]


def test_buttons_reach_the_loop_through_gpiozero_mock_pins(table) -> None:
    """press: drives a MockFactory pin low; gpiozero's Button calls back."""
    pin = table.sim.app.panel.buttons["next"].pin
    assert type(pin).__module__.startswith("gpiozero.pins.mock")
    table.tap("game/seven-knights", *SEATS)
    table.press("next")
    assert table.last("accepted")["input"] == "next"


def test_feedback_follows_the_journal(table, monkeypatch) -> None:
    """Feedback for an input is given only after its journal write returned."""
    order: list[str] = []
    journal = table.sim.app.journal
    real_append = journal.append
    monkeypatch.setattr(journal, "append", lambda *a, **k: (order.append("journal"), real_append(*a, **k))[1])
    sink = table.sim.app.sinks["log"]
    real_log = sink.log
    sink.log = lambda ev: (order.append(ev["event"]), real_log(ev))
    table.tap("game/seven-knights")
    assert order[:3] == ["journal", "accepted", "say"]


def test_events_from_other_threads_queue_until_pumped(table) -> None:
    table.sim.loop.submit(ButtonPressed("repeat"))
    assert table.last("say")["key"] == "table.ready"
    table.sim.loop.pump()
    assert table.last("accepted")["input"] == "repeat"


def test_repeat_after_a_language_card_says_the_instruction_in_the_new_language(table) -> None:
    start_sk(table)
    table.press("next")  # questions
    said = table.of("say")[-1]
    table.tap("lang/ja")
    assert table.last("say")["key"] == "table.language"
    m = table.mark()
    table.press("repeat")
    again = table.since(m, "say")
    assert [(e["key"], e["lang"]) for e in again] == [(said["key"], "ja")]
    assert again[0]["text"] != said["text"]


def test_repeat_after_back_says_the_restored_prompt_not_undone(table) -> None:
    start_sk(table)
    table.press("next")
    table.press("back")
    assert table.keys()[-2:] == ["undo.done", "skb.phase.quest.centre"]
    m = table.mark()
    table.press("repeat")
    assert [e["key"] for e in table.since(m, "say")] == ["skb.phase.quest.centre"]


def test_back_to_seating_survives_a_restart(make_table) -> None:
    """The journal replays the start and the back: after a power cut the
    table is seating again, with the three players tapped so far."""
    first = make_table()
    first.tap("game/seven-knights", "player/red", "player/blue", "player/green")
    first.press("next", "back")
    seated = first.sim.loop.table.state
    first.close()
    again = make_table()
    assert again.sim.loop.table.state == seated and again.sim.loop.table.engine is None
    assert again.keys()[-1] == "table.resumed_gathering"
    again.tap("player/yellow")
    again.press("next")
    assert again.last("game_started")["players"] == ["red", "blue", "green", "yellow"]


def test_play_again_after_a_rename_that_makes_two_seats_one_name_is_refused() -> None:
    """The config refuses such names; a table handed them anyway (a journal's settings,
    a test) seats no second player answering to a seated name, not even by 'play again'."""
    from companion.core.events import Housekeeping, Press, Refusal, Tap
    from companion.core.table import Table
    from companion.games.seven_knights import SevenKnights

    t = Table({"seven-knights": SevenKnights})
    for inp in (Tap("game/seven-knights"), *(Tap(s) for s in SEATS), Press("next"), Press("hold-back"),
                Press("next")):
        t.handle(inp)
    assert t.state.phase == "idle" and t.state.last is not None  # abandoned: "next" would play again
    t.handle(Housekeeping("configure", {**t.wanted, "names": {"red": "blue"}}))
    before = copy.deepcopy(t.state)
    with pytest.raises(Refusal) as e:
        t.handle(Press("next"))
    assert (e.value.key, e.value.params) == ("refuse.player_twice", {"player": "blue"})
    assert t.state == before and t.engine is None
    t.handle(Tap("game/seven-knights"))
    t.handle(Tap("player/red"))
    with pytest.raises(Refusal, match="blue is already seated"):
        t.handle(Tap("player/blue"))
    assert t.state.seats == ["red"] and t.id_of("blue") == "red"


def test_finding_a_table_handler_that_sets_its_phase_by_hand_is_refused_in_every_build() -> None:
    """The table's phase moves only where its phase table says: a handler that
    sets the phase itself (even to a phase its entry declares) was only checked
    under ``__debug__`` and only for the target; now it is a defect in every
    build, and, like a refusal, it leaves no trace."""
    from companion.core.engine import Step, StepError, Take
    from companion.core.events import Tap
    from companion.core.table import GATHERING, IDLE, Table
    from companion.games import GAMES

    def by_hand(table: Table, inp: Tap) -> list:
        table.state.phase = GATHERING
        return []

    class HandSet(Table):
        PHASES = {**Table.PHASES, IDLE: Step({**Table.PHASES[IDLE].takes, "game": Take(by_hand, (GATHERING,))})}

    t = HandSet({g.game: g for g in GAMES})
    with pytest.raises(StepError):
        t.handle(Tap("game/seven-knights"))
    assert t.state.phase == IDLE
    assert Table({g.game: g for g in GAMES}).handle(Tap("game/seven-knights"))  # the real handler moves by Goto


def test_no_table_module_sets_the_phase_but_the_driver() -> None:
    """The phase table is the one place the table's phase changes: the only
    assignments to a ``.phase`` (or to a ``.confirm``, whose question is the
    confirm phase) in the table's modules are where the one driver moves it,
    ``Table._go_to`` (the ``StepError`` above catches the rest at run time;
    this, in a path no test walks)."""
    import ast
    import inspect
    from pathlib import Path

    import companion.core.table as package

    sets = []
    for path in sorted(Path(package.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = (node.targets if isinstance(node, ast.Assign)
                       else [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else [])
            sets += [f"{path.name}:{node.lineno}" for target in targets for part in ast.walk(target)
                     if isinstance(part, ast.Attribute) and part.attr in ("phase", "confirm")]
    lines, first = inspect.getsourcelines(package.Table._go_to)
    assert sets and all(s.split(":")[0] == "table.py" and first <= int(s.split(":")[1]) < first + len(lines)
                        for s in sets), sets


def test_the_table_is_one_class_on_the_engines_driver_with_three_phase_checks() -> None:
    """The table is composed, not stacked: one class of the project's own (its
    handlers and views are functions of it, a module per job), its phases a
    table of ``Step``s run by the games' own driver — the Goto rule's
    ``StepError`` and the rollback of a refused input are written once, in
    core/driver.py — and at most three hand-written checks of its phase (where
    the driver reads it, where it moves it, the confirmation's question)."""
    import ast
    from pathlib import Path

    import companion
    import companion.core.table as package
    from companion.core.steps import Step

    assert [c for c in package.Table.__mro__ if c.__module__.startswith("companion.")] == [package.Table]
    assert all(isinstance(phase, Step) for phase in package.Table.PHASES.values())
    handlers = {take.handler for phase in package.Table.PHASES.values() for take in phase.takes.values()}
    assert handlers and not any(h.__qualname__.startswith("Table.") for h in handlers)

    def tree(path: Path) -> ast.AST:
        return ast.parse(path.read_text(), str(path))

    driving = set()  # where a StepError is raised, or a refusal (with a StepError) caught to roll back
    for path in Path(companion.__file__).parent.rglob("*.py"):
        for node in ast.walk(tree(path)):
            raised = isinstance(node, ast.Raise) and "StepError" in ast.unparse(node.exc or node)
            caught = isinstance(node, ast.ExceptHandler) and "StepError" in ast.unparse(node.type or node)
            if (raised or caught) and "tests" not in path.parts:
                driving.add(path.name)
    assert driving == {"driver.py"}

    phases = {"IDLE", "GATHERING", "PAIRING", "PLAYING", "CONFIRM"}
    checks = [f"{path.name}:{node.lineno}" for path in sorted(Path(package.__file__).parent.glob("*.py"))
              for node in ast.walk(tree(path)) if isinstance(node, ast.Compare)
              and any((isinstance(x, ast.Name) and x.id in phases)
                      or (isinstance(x, ast.Attribute) and x.attr in ("phase", "confirm", "where"))
                      for x in (node.left, *node.comparators))]
    assert len(checks) <= 3, checks


def test_finding_a_game_that_ends_while_a_long_press_waits_leaves_no_question_behind() -> None:
    """A game may end on an input the table hands it while a long press of back
    waits for its answer (its clock, a draw, a page's submit). The question
    stayed behind with no game: every page went on asking it, and ``next``
    then failed on the missing game instead of being refused. Now the end of
    the game is the end of the question, and the table is between games."""
    from dataclasses import dataclass
    from typing import ClassVar

    from companion.core.engine import Engine, Result, Setup, Step, Take
    from companion.core.events import Press, Refusal, Tap, TimerFired
    from companion.core.table import Table

    @dataclass
    class _State:
        step: str = "talk"

    class Clocked(Engine):
        """One step that ends when its timer fires."""

        game: ClassVar[str] = "clocked"
        tag_prefixes: ClassVar[tuple[str, ...]] = ("clk/",)
        min_players: ClassVar[int] = 1
        max_players: ClassVar[int] = 4

        def __init__(self, setup: Setup) -> None:
            super().__init__(setup)
            self.state = _State()

        def start(self) -> list:
            return []

        def result(self) -> Result:
            return Result(totals=dict.fromkeys(self.players, 0), winners=())

        STEPS: ClassVar[dict[str, Step]] = {
            "talk": Step({"timer": Take(lambda engine, _: [], ("over",))}),
            "over": Step(final=True),
        }

    t = Table({"clocked": Clocked})
    for inp in (Tap("game/clocked"), Tap("player/red"), Press("next"), Press("hold-back")):
        t.handle(inp)
    assert t.state.confirm == "game"
    t.handle(TimerFired("talk"))  # the game's clock ends it while the question waits
    assert t.engine is None and t.state.phase == "idle" and t.state.confirm is None
    assert t.public_view()["confirm"] is None and t.public_view()["headline"]["step"] == "idle"
    with pytest.raises(Refusal):
        t.handle(Press("back"))  # between games: nothing to cancel, nothing to undo
    t.handle(Press("next"))  # play again
    assert t.state.phase == "playing" and t.engine is not None
