"""Adding a game is one folder and one line.

A small fifth game is written here into a temporary folder — its engine (a
few steps, one set of tags, a rule card, an event of its own), its lines in
English and Japanese (its name, its steps' labels, what it says) — and
added with one line: its engine appended to ``companion.games.GAMES`` (a
game shipped in the tree is that line in companion/games/__init__.py).
Then it is played through ``companion simulate`` (the JSON log and its
readable view, in both languages), the public page (``/api/games``,
``/api/table``), the export (BG Stats' records, the pages' and
``companion scores``') and ``companion tags check`` — and no file of the
project knows it.  The other half of the proof: the shell (voice, web,
core.tags) names none of the four shipped games either.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import socket
import sys
import textwrap
from pathlib import Path

import httpx
import pytest
import yaml
from test_mqtt_homeassistant import fire

import companion.games
from companion.app import catalogue, scores
from companion.app.live_table import LiveTable
from companion.app.simulate import run_script
from companion.app.tags_cmd import configure_parser, run
from companion.core.engine import Engine
from companion.runtime.outbox import OutboxStore
from conftest import Table
from hardware.provision import SimTag, SimulatedTagStore
from mqtt import homeassistant as ha
from venue import league
from venue import schema as venue_schema
from venue.store import Store

ROOT = Path(__file__).resolve().parent.parent

ENGINE = '''
"""Quiz Night: each player in turn taps an answer card; the answer is A."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from companion.core.engine import Engine, Goto, Outcome, Result, Setup, Step, Take, View
from companion.core.events import Output, Press, Refusal, Report, Say, Tap

ANSWERS = ("qz/answer/a", "qz/answer/b")
VERDICTS = ("right", "nobody")  # who won: those who answered right, or nobody did


@dataclass
class State:
    step: str = "ask"
    answers: dict[str, str] = field(default_factory=dict)


class QuizNight(Engine):
    game: ClassVar[str] = "quiz-night"
    tag_prefixes: ClassVar[tuple[str, ...]] = ("qz/",)
    components: ClassVar[tuple[str, ...]] = ANSWERS
    shows: ClassVar[Mapping[str, Callable[[Mapping[str, Any]], str]]] = {
        "qz_answer": lambda ev: f"? {ev['player']} answers {ev['answer']}"}
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 4
    outcomes: ClassVar[tuple[Outcome, ...]] = (Outcome("qz_result", "verdict", VERDICTS),)

    def __init__(self, setup: Setup) -> None:
        super().__init__(setup)
        self.state = State()

    @classmethod
    def known_rules(cls) -> tuple[str, ...]:
        return ("speed",)

    def start(self) -> list[Output]:
        return [Say("qz.start", {"count": len(self.players)}), *self.prompt()]

    def _ask(self) -> list[Output]:
        return [Say("qz.ask", {"player": self.players[len(self.state.answers)]})]

    def _not_an_answer(self, inp: Tap) -> Refusal | None:
        return None if inp.identity in ANSWERS else self._not_taken("tap", inp)

    def _answer(self, inp: Tap) -> list[Output] | Goto:
        player = self.players[len(self.state.answers)]
        self.state.answers[player] = inp.identity.rsplit("/", 1)[1]
        out: list[Output] = [Report("qz_answer", {"player": player, "answer": self.state.answers[player]})]
        if len(self.state.answers) == len(self.players):
            return Goto("reveal", out, prompt=True)
        return out + self.prompt()

    def _reveal(self, inp: Press) -> list[Output]:
        right = list(self.result().winners)
        return [Say("qz.reveal", {"players": right}),
                Report("qz_result", {"answer": "a", "right": right, "verdict": VERDICTS[not right]})]

    def view(self, seat: str | None = None) -> View:
        """The one read function: the table sees how many have answered (never
        what); a seat has nothing of its own."""
        if seat is not None:
            return View()
        n = len(self.state.answers)
        return View({"step": self.state.step, "answered": n}, [("qz.board.answered", {"n": n})])

    def result(self) -> Result:
        totals = {p: int(self.state.answers.get(p) == "a") for p in self.players}
        return Result(totals, tuple(p for p, n in totals.items() if n),
                      teams={p: "right" if n else "wrong" for p, n in totals.items()})

    # What each step takes and where it may lead: the one source of legal().
    STEPS: ClassVar[dict[str, Step]] = {
        "ask": Step({"tap": Take(_answer, ("ask", "reveal"), _not_an_answer)}, ("qz.refuse.ask", "tap an answer card"),
                    prompt=_ask),
        "reveal": Step({"next": Take(_reveal, ("over",))}, ("qz.refuse.reveal", "press next"),
                       prompt=lambda game: [Say("qz.all_in")]),
        "over": Step(final=True),
    }
'''

# Its manifest: the event it publishes (its fields' schema) and how a venue rates it.
MANIFEST = '''
from companion.core.manifest import Event, choice, describe, names, word
from quiz_night.engine import VERDICTS, QuizNight

MANIFEST = describe(QuizNight, events=(
    Event("qz_result", {"answer": word(), "right": names(), "verdict": choice(*VERDICTS)}),
), rating="teams")
'''

LINES = {
    "en": '''
        name.game/quiz-night: Quiz Night
        name.speed: the speed round
        step.quiz-night.ask: "answering"
        step.quiz-night.reveal: "the reveal"
        qz.start: "Quiz night for {count}."
        qz.ask: "{player}, tap your answer."
        qz.all_in: "All answers are in. Press next for the answer."
        qz.reveal: "The answer was A: {players} got it."
        qz.board.answered: "{n} answers in"
        qz.refuse.ask: "Tap an answer card."
        qz.refuse.reveal: "Press next for the answer."
    ''',
    "ja": '''
        name.game/quiz-night: {text: クイズナイト, kana: クイズナイト}
        name.speed: {text: 早押しルール, kana: はやおしルール}
        step.quiz-night.ask: {text: 回答, kana: かいとう}
        step.quiz-night.reveal: {text: 正解発表, kana: せいかいはっぴょう}
        qz.start: {text: "クイズナイト、{count}人です。", kana: "クイズナイト、{count}にんです。"}
        qz.ask: {text: "{player}さん、答えのカードをタッチしてください。", kana: "{player}さん、こたえのカードをタッチしてください。"}
        qz.all_in: {text: "全員答えました。次へで正解です。", kana: "ぜんいんこたえました。つぎへでせいかいです。"}
        qz.reveal: {text: "正解はAでした。正解者は{players}です。", kana: "せいかいはエーでした。せいかいしゃは{players}です。"}
        qz.board.answered: {text: "回答{n}件", kana: "かいとう{n}けん"}
        qz.refuse.ask: {text: "答えのカードをタッチしてください。", kana: "こたえのカードをタッチしてください。"}
        qz.refuse.reveal: {text: "次へを押してください。", kana: "つぎへをおしてください。"}
    ''',
}

SCRIPT = {
    "title": "Quiz night, three players",
    "steps": [{"tap": "game/quiz-night"}, {"tap": "rules/speed"},
              {"tap": "player/red"}, {"tap": "player/blue"}, {"tap": "player/green"}, {"press": "next"},
              {"press": "next"},  # refused: the answers first
              {"tap": "qz/answer/a"}, {"tap": "qz/answer/b"}, {"tap": "qz/answer/a"},
              {"press": "next"}],
}


@pytest.fixture
def quiz(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> type[Engine]:
    """The fifth game: its folder, written here, and its one line."""
    folder = tmp_path / "games" / "quiz_night"
    (folder / "lines").mkdir(parents=True)
    (folder / "__init__.py").write_text('"""Quiz Night."""\nfrom quiz_night.engine import QuizNight\n')
    (folder / "engine.py").write_text(ENGINE)
    (folder / "manifest.py").write_text(MANIFEST)
    for lang, text in LINES.items():
        (folder / "lines" / f"{lang}.yaml").write_text(textwrap.dedent(text), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "games"))
    from quiz_night import QuizNight  # type: ignore[import-not-found]

    monkeypatch.setattr(companion.games, "GAMES", (*companion.games.GAMES, QuizNight))  # the one line
    yield QuizNight
    for name in [m for m in sys.modules if m == "quiz_night" or m.startswith("quiz_night.")]:
        del sys.modules[name]


def simulate(tmp_path: Path, lang: str, pretty: bool = False) -> str:
    script = tmp_path / "quiz.yaml"
    script.write_text(yaml.safe_dump(SCRIPT, allow_unicode=True), encoding="utf-8")
    out = io.StringIO()
    assert run_script(script, pretty=pretty, out=out, overrides={"language": lang}) == 0
    return out.getvalue()


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_fifth_game_in_a_folder_of_its_own_plays_through_simulate(quiz: type[Engine], tmp_path: Path,
                                                                          lang: str) -> None:
    log = [json.loads(line) for line in simulate(tmp_path, lang).splitlines()]
    said = {ev["key"]: ev["text"] for ev in log if ev["event"] == "say"}
    # every line found: none spoken as its key (a missing one is, sentence-cased: "Qz.Start")
    assert all(text.lower() != key.lower() for key, text in said.items()), said
    expected = {"en": ("Quiz Night.", "The speed round.", "Red, tap your answer.",
                       "The answer was A: Red and Green got it."),
                "ja": ("クイズナイト。", "早押しルール。", "赤さん、答えのカードをタッチしてください。",
                       "正解はAでした。正解者は赤、緑です。")}[lang]
    game_chosen, rules, ask, reveal = expected
    assert said["table.game_chosen"].startswith(game_chosen)  # its name, from its folder
    assert said["table.rules_added"] == rules  # its rule card, its name for it
    assert [ev["text"] for ev in log if ev.get("key") == "qz.ask"][0] == ask
    assert said["qz.reveal"] == reveal
    refused = [ev for ev in log if ev["event"] == "rejected"]
    assert [ev["input"] for ev in refused] == ["next"] and "qz.refuse.ask" in said  # its step's refusal, its words
    assert [ev["answer"] for ev in log if ev["event"] == "qz_answer"] == ["a", "b", "a"]
    scored = [ev for ev in log if ev["event"] == "session_scores"]
    assert scored and scored[0]["game"] == "quiz-night" and scored[0]["totals"] == {"red": 1, "blue": 0, "green": 1}
    pretty = simulate(tmp_path, lang, pretty=True)
    assert "? blue answers b" in pretty  # its own event, shown by its own show
    assert f"🔊 {reveal}" in pretty


def test_the_public_page_and_the_export_name_the_fifth_game_from_its_folder(quiz: type[Engine],
                                                                                   tmp_path: Path) -> None:
    live = LiveTable(tmp_path / "state", language="ja")
    try:
        with httpx.Client(base_url=live.url) as c:
            games = c.get("/api/games").json()
            assert games["ja"]["quiz-night"] == {"name": "クイズナイト", "steps": {"ask": "回答", "reveal": "正解発表"}}
            assert games["en"]["quiz-night"] == {"name": "Quiz Night",
                                                 "steps": {"ask": "answering", "reveal": "the reveal"}}
            live.tap("game/quiz-night", "player/red", "player/blue")
            live.press("next")
            live.tap("qz/answer/a", "qz/answer/a")
            table = c.get("/api/table").json()
            assert table["game"] == "quiz-night" and table["play"]["step"] == "reveal"
            assert table["board"] == [{"key": "qz.board.answered", "text": "回答2件"}]  # in the table's language
            live.press("next")
            table = c.get("/api/table").json()
            assert table["tonight"] == {"quiz-night": {"red": 1, "blue": 1}}
            (play,) = c.get("/api/export").json()["plays"]
            assert play["game"] == {"name": "Quiz Night", "sourceGameId": "quiz-night", "highestWins": True,
                                    "noPoints": False}
            assert "Quiz%20Night" in table["history"][0]["bgstats"]
            page = c.get("/static/app.js").text
            assert "quiz" not in page.lower()  # the page has the names from /api/games
    finally:
        live.close()
    out = io.StringIO()
    args = argparse.Namespace(state=tmp_path / "state", export="json", output=None, config=[])
    assert scores.run(args, out=out) == 0
    assert json.loads(out.getvalue())["plays"][0]["game"]["name"] == "Quiz Night"


def test_finding_the_fifth_games_result_reaches_the_venues_league_and_home_assistants_verdict(
        quiz: type[Engine], tmp_path: Path) -> None:
    """Before: the outbox published, and the venue accepted, only a list of
    the four games' events written outside their folders (runtime/outbox.py,
    venue/schema.py): the fifth game's result never left the table, and a
    venue would have refused it.  Now its folder's manifest declares it."""
    with socket.socket() as s:  # a loopback port nobody listens on: the rows wait in the outbox
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t = Table(tmp_path / "state", players={"extra": ["aki", "ben", "chie"]},
              mqtt={"broker": f"127.0.0.1:{port}", "table_id": "t1"})
    try:
        t.tap("game/quiz-night", "player/aki", "player/ben", "player/chie")
        t.press("next")
        t.tap("qz/answer/a", "qz/answer/b", "qz/answer/a")
        t.press("next")
        assert t.of("qz_answer") and t.of("qz_result") and t.of("session_scores")
    finally:
        t.close()
    outbox = OutboxStore(tmp_path / "state" / "journal.sqlite")
    try:
        letters = outbox.pending(limit=1000)
    finally:
        outbox.close()
    # its own events only as its manifest declares: the verdict, never each answer
    sent = [json.loads(x.payload) for x in letters if x.topic == "companion/t1/event"]
    assert [e["event"] for e in sent] == ["qz_result"]
    venue_schema.use(catalogue.venue_wire())  # the wire its folder declares, as tools/venue_wire.py writes it
    store = Store(tmp_path / "venue")
    try:
        for x in letters:
            record = venue_schema.check(x.topic, x.payload)
            assert not isinstance(record, venue_schema.Problem), record
            store.apply(record, 1.9e9)
        verdict = [r for r in (venue_schema.check(x.topic, x.payload) for x in letters)
                   if isinstance(r, venue_schema.Event) and r.event == "qz_result"]
        assert verdict[0].fields == {"answer": "a", "right": ["aki", "chie"], "verdict": "right"}
        (play,) = store.plays()
        assert play["game"] == "quiz-night" and venue_schema.rating("quiz-night") == "teams"
        table = {s.person: s for s in league.standings(store.plays())}
    finally:
        store.close()
        venue_schema.use(None)
    assert {p: (s.plays, s.wins) for p, s in table.items()} == {"aki": (1, 1), "ben": (1, 0), "chie": (1, 1)}
    assert table["aki"].ordinal > table["ben"].ordinal  # rated as teams: the right answers beat the wrong
    assert table["aki"].ordinal == table["chie"].ordinal
    # Home Assistant: its verdict is one the event entity fires, with the game named
    _, body = ha.discovery("t1", companion.games.manifests(), commands=False, lang="en")
    entity = json.loads(body)["cmps"]["verdict"]
    assert {"right", "nobody"} <= set(entity["event_types"])
    (result,) = [x for x in letters if json.loads(x.payload).get("event") == "qz_result"]
    kind, attrs = fire(entity["value_template"], result.payload, entity["event_types"])
    assert kind == "right" and attrs["game"] == "quiz-night" and attrs["right"] == ["aki", "chie"]


def test_tags_check_knows_the_fifth_games_set(quiz: type[Engine], tmp_path: Path) -> None:
    parser = argparse.ArgumentParser(prog="companion tags")
    configure_parser(parser)
    store = SimulatedTagStore()
    box = companion.games.tag_sets()["quiz-night"]  # its whole box: its cards, then the table's
    assert box[:4] == ("game/quiz-night", "rules/speed", "qz/answer/a", "qz/answer/b")
    for n, identity in enumerate(box):
        store.add(SimTag(f"04EE{n:010X}", text=identity))
    store.tap(*(f"04EE{n:010X}" for n in range(len(box))))
    out = io.StringIO()
    args = parser.parse_args(["check", "quiz-night", "--tag-map", str(tmp_path / "tags.yaml"), "--device", "test",
                              "--timeout", "5"])
    assert run(args, reader_factory=lambda device: store, out=out) == 0
    assert out.getvalue().splitlines()[-2:] == [f"quiz-night: {len(box)} of {len(box)} pieces", "all present"]
    sets = companion.games.component_sets()
    assert "game/quiz-night" in sets["games"] and "rules/speed" in sets["cards"]


def test_no_file_of_the_project_knows_the_fifth_game(quiz: type[Engine]) -> None:
    assert catalogue.folder(quiz).name == "quiz_night" and not catalogue.folder(quiz).is_relative_to(ROOT)
    here = Path(__file__).resolve()
    for path in [*ROOT.glob("companion/**/*"), *ROOT.glob("httpkit/**/*"), *ROOT.glob("web/**/*"),
                 *ROOT.glob("voice/**/*")]:
        if path.is_file() and path != here and path.suffix in (".py", ".js", ".html", ".yaml"):
            assert "quiz" not in path.read_text(encoding="utf-8").lower(), path


# ------------------------------------------------------ the shell names no game
SHELL = ["companion/core/tags.py", *(f"web/{p.name}" for p in (ROOT / "web").glob("*.py")),
         *(f"httpkit/{p.name}" for p in (ROOT / "httpkit").glob("*.py")),
         "web/static/app.js", "web/static/index.html", "web/static/tv.js", "web/static/tv.html",
         *(f"voice/{p.name}" for p in (ROOT / "voice").glob("*.py")), "voice/lines/en.yaml", "voice/lines/ja.yaml"]


def _knowledge(game: type[Engine]) -> list[str]:
    """What names a game: its id, its tags' prefixes, its names in every
    language, its steps' ids that are no plain word (``captain_check``)."""
    names = catalogue.page_games(catalogue.narrator([game]).lines, [game])
    return [game.game, *game.tag_prefixes, *(g[game.game]["name"] for g in names.values()),
            *(step for step in game.STEPS if "_" in step)]


@pytest.mark.parametrize("path", SHELL)
def test_the_shell_names_no_game(path: str) -> None:
    """Before: app.js had every game's names and steps (two names drifted),
    bgstats.py the export names, core/tags.py the game cards and rule cards,
    voice/lines two games' names and their rule cards' and roles' names."""
    text = (ROOT / path).read_text(encoding="utf-8")
    found = [w for g in companion.games.GAMES for w in _knowledge(g)
             if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text)]
    found += [r for g in companion.games.GAMES for r in g.known_rules() if f"name.{r}:" in text or f'"{r}"' in text]
    assert not found, (path, found)


def test_each_games_names_are_its_own_lines_and_the_designers_titles() -> None:
    """The page names a game as the table says it: Demagogos' Trap and Seven
    Knights Bewitched as the designers' titles (デマゴーゴスの罠,
    ミュルマミウスの虜 — the seeds), no longer the page's drifted ones."""
    lines = catalogue.narrator().lines
    games = catalogue.page_games(lines)
    assert {g: v["name"] for g, v in games["ja"].items()} == {
        "seven-knights": "ミュルマミウスの虜", "one-night": "ワンナイト人狼", "madness-hour": "マッドネスアワー",
        "demagogos": "デマゴーゴスの罠"}
    assert {g: v["name"] for g, v in games["en"].items()} == {
        "seven-knights": "Seven Knights Bewitched", "one-night": "One Night Werewolf", "madness-hour": "Madness Hour",
        "demagogos": "Demagogos' Trap"}
    for game in companion.games.GAMES:  # every step has its label, in both languages
        for lang in ("en", "ja"):
            assert list(games[lang][game.game]["steps"]) == list(game.STEPS), (game.game, lang)
    assert games["ja"]["madness-hour"]["steps"]["discussion"] == "議論"


def test_the_pages_get_the_names_from_api_games(tmp_path: Path) -> None:
    live = LiveTable(tmp_path, language="ja")
    try:
        with httpx.Client(base_url=live.url) as c:
            games = c.get("/api/games").json()
    finally:
        live.close()
    assert games["ja"]["demagogos"]["name"] == "デマゴーゴスの罠"
    assert games["ja"]["seven-knights"]["steps"]["captain_check"] == "隊長は虜？"
    assert games["en"]["one-night"]["steps"]["vote"] == "the vote"



def test_step_labels_are_the_pages_never_rendered_into_the_voice_cache() -> None:
    """A game's ``step.<game>.<step>`` lines label its steps on the pages; the
    prerender and the background fill render no WAV for them."""
    from voice.prerender import fixed_lines

    table = {"step.quiz-night.ask": ("answering", "answering"), "qz.all_in": ("All in.", "All in.")}
    assert [line.key for line in fixed_lines("en", table)] == ["qz.all_in"]
    shipped = catalogue.narrator().lines("ja")
    assert not [line.key for line in fixed_lines("ja", shipped) if line.key.startswith("step.")]


CHROMIUM = "/usr/bin/chromium"


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed")
def test_the_page_names_the_fifth_game_and_its_steps_in_a_browser(quiz: type[Engine], tmp_path: Path) -> None:
    """The page's own script knows no game: its header names the fifth one
    and its step in the table's language, and tonight's totals name it."""
    sync_api = pytest.importorskip("playwright.sync_api")
    live = LiveTable(tmp_path, language="ja")
    try:
        live.tap("game/quiz-night", "player/red", "player/blue")
        live.press("next")
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                page = browser.new_page()
                page.goto(live.url + "/")
                sync_api.expect(page.locator("#game")).to_have_text("クイズナイト")
                sync_api.expect(page.locator("#step")).to_have_text("プレイ中 · 回答")
                live.tap("qz/answer/a", "qz/answer/b")
                sync_api.expect(page.locator("#step")).to_have_text("プレイ中 · 正解発表")  # live, over SSE
                live.press("next")
                sync_api.expect(page.locator("#tonight th")).to_have_text("クイズナイト")
            finally:
                browser.close()
    finally:
        live.close()
