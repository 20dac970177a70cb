"""The headline's "what to do now" lines (``now.<game>.<step>``) fit one line
of the TV's headline at 1920×1080 (with 5 % to spare), with the longest count that step carries
(10 of 10), in English and Japanese: the step's spoken prompt as the headline
wrapped on the TV (One Night's count: the board's middle shrank to 0.75 and
its text fell to 23 px).  Drawn by the TV's own script (``render``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_web_browser import SHOTS, TV, browser, pytestmark, sync_api  # noqa: F401  (the fixture, the chromium skip)
from test_web_headline_now import anyone_steps, now_lines
from test_web_tv_board import close_boards, open_board

from companion.app.catalogue import line_folders
from companion.app.live_table import LiveTable
from voice.lines import Narrator

DRAW = """(text) => {
  state = { ...state, headline_text: text }; render();
  const turn = document.querySelector('#turn'), main = document.querySelector('#day > main');
  const words = document.createRange(); words.selectNodeContents(turn);
  return { height: turn.getBoundingClientRect().height, line: parseFloat(getComputedStyle(turn).lineHeight),
           width: words.getBoundingClientRect().width / turn.clientWidth,
           px: parseFloat(getComputedStyle(turn).fontSize), fit: main.style.getPropertyValue('--fit') || '1' };
}"""


def test_every_now_line_fits_one_line_of_the_tv_headline(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    narrate = Narrator(line_folders())
    live = LiveTable(tmp_path)
    try:
        page = open_board(browser, live.url, TV)
        wrapped = []
        for lang in ("en", "ja"):
            now, sep = now_lines(lang), narrate.render("fmt.sentence_sep", {}, lang).text
            for (game, step), seen in sorted(anyone_steps().items()):
                counts = [narrate.render(f"headline.count.{what}", {"done": 10, "of": 10}, lang).text
                          for what in sorted(seen["whats"])]
                text = sep.join([now[f"now.{game}.{step}"], *counts[:1]]) if len(counts) <= 1 else None
                assert text is not None, (game, step, counts)  # one count a step
                drawn = page.evaluate(DRAW, text)
                # one line, with room to spare for a wider font than this machine's (≤ 95 % of the width)
                if (drawn["height"] > 1.2 * drawn["line"] or drawn["width"] > 0.95 or drawn["fit"] != "1"
                        or drawn["px"] < 40):
                    wrapped.append((lang, game, step, text, drawn))
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "tv-now-last.png"))
        assert wrapped == [], wrapped
    finally:
        close_boards()
        live.close()
