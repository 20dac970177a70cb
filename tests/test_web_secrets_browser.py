"""What a person meets on a seat's phone, in a real browser (Playwright, Debian's
chromium), each finding by its own test: a secret is never shown unheld, not
even for a moment (the status line says only that there is a new secret: what
was told is the seat's page, held), a sealed choice never stays in its form, and a told
line or refusal goes with the step it answered (its round, its game, its language).

The tables are the accessibility audit's (tests/test_web_accessibility.py):
an example played on simulated hardware and virtual time, its pages open.
Screenshots (a 360×740 phone, en and ja) go to artifacts/web/ (gitignored)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_web_accessibility import PHONE, Page
from test_web_browser import browser, pytestmark, sync_api  # noqa: F401  (the fixture and the chromium skip)
from test_web_present_browser import closed, page_of, play_until, pump_until, step_is, table_of

from conftest import example_script

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "artifacts" / "web"
VOTES = example_script("one-night/ultimate-6p-phones-and-taps.yaml")


def told(table: Any, seat: str) -> list[str]:
    """What the table told ``seat`` alone so far (its ``tell`` lines): every one a secret."""
    return [e["text"] for e in table.log if e["event"] == "tell" and e["to"] == seat]


def page_line(table: Any, key: str) -> str:
    """Red's page line ``key`` as the table has it now (a secret of the seat's page)."""
    page = table.sim.loop.read_side.private("red")["page"]
    return str(next(line["text"] for line in page if line["key"] == key))


def unheld(page: Any) -> str:
    """Everything the phone shows without the secrets' button held."""
    return str(page.locator("body").inner_text())


def held(page: Any) -> str:
    """What the phone shows while its secrets' button is held."""
    page.evaluate("window.scrollTo(0, 0)")
    page.locator("#reveal").hover()
    page.mouse.down()
    try:
        sync_api.expect(page.locator("#reveal")).to_have_attribute("aria-expanded", "true")
        return str(page.locator("#me").inner_text())
    finally:
        page.mouse.up()


def shoot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def send(table: Any, page: Any, field: str, value: Any) -> dict[str, Any]:
    """``value`` typed (or chosen) in the form of ``field`` on this phone, and sent: its
    answer, once the table's loop (this thread's, pumped here) has taken it."""
    form = page.locator(f'#submits form[data-field="{field}"]')
    box = form.locator(f"[name={field}]")
    if box.evaluate("(e) => e.tagName") == "SELECT":
        box.select_option(str(value))
    else:
        box.fill(str(value))
    answers: list[Any] = []
    listen = lambda r: answers.append(r) if r.url.endswith("/api/submit") else None  # noqa: E731
    page.on("response", listen)
    try:
        form.locator(f'button[data-field="{field}"]').click()
        pump_until(table, page, lambda: bool(answers))
    finally:
        page.remove_listener("response", listen)
    verdict: dict[str, Any] = answers[0].json()
    return verdict


def test_finding_a_told_secret_is_never_shown_unheld(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """"Your role: the sage", "Treasures lie in boxes 1 and 2" and "Your bid: 3."
    stood in plain text on the status line for 4.6 s, outside "hold to see your
    secrets"; the bid's field kept the bid.  The status line says only that a
    secret came; what it told is the seat's page, held, and the form is empty again."""
    expect = sync_api.expect
    for lang in ("en", "ja"):
        table = table_of(browser, tmp_path / lang, "demagogos", lang, red=Page("red", "/", PHONE, seat="red"))
        try:
            play_until(table, step_is("role_auction"))
            red = page_of(table, "red")
            verdict = send(table, red, "bid", 3)
            assert verdict["ok"] and verdict["told"], verdict
            bid = verdict["told"][-1]["text"]  # "Your bid: 3. You may change it …"
            expect(red.locator("#status")).not_to_have_text("")  # the answer is drawn
            shoot(red, f"secret-bid-{lang}")
            assert bid not in unheld(red)
            assert red.locator("#submits input[name=bid]").input_value() == ""  # not the bid sent
            mine = page_line(table, "dt.page.bid.role")  # "Your role-auction bid: 3": held only
            assert mine not in unheld(red) and mine in held(red)
            play_until(table, step_is("cave"))  # red holds the sage's role: told with its boxes
            red = page_of(table, "red")
            secrets = told(table, "red")
            assert len(secrets) >= 3, secrets
            expect(red.locator("#status")).not_to_have_text("")  # the word of the moment is drawn
            shoot(red, f"secret-sage-{lang}")
            shown = unheld(red)
            assert not [s for s in secrets if s in shown], shown
            boxes = page_line(table, "dt.page.told.treasures")  # what it told is the page now: held
            assert boxes not in shown and boxes in held(red)
        finally:
            closed(table)


def test_finding_a_sealed_vote_has_no_choice_made_for_it_and_leaves_its_form(
        browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """The vote's drop-down was preselected to the first player (Send without a
    choice voted for them), and after the vote it showed the vote to anyone
    beside the phone (after a reload, another player than the vote)."""
    expect = sync_api.expect
    table = table_of(browser, tmp_path, "one-night", "en", VOTES, red=Page("red", "/", PHONE, seat="red"))
    try:
        seat = lambda t: "vote" in t.sim.loop.read_side.private("red").get("legal", {}).get("submits", {})  # noqa: E731
        play_until(table, seat)
        red = page_of(table, "red")
        pick = red.locator("#submits select[name=vote]")
        expect(pick).to_have_value("")  # nobody chosen for this player
        sent: list[str] = []
        red.on("request", lambda r: sent.append(r.url) if r.url.endswith("/api/submit") else None)
        red.locator('#submits button[data-field="vote"]').click()
        expect(red.locator("#status")).to_have_class("err")  # refused here: choose first
        assert not sent and "red" not in table.sim.loop.table.engine.sealed.get("vote", {})
        verdict = send(table, red, "vote", "yellow")
        assert verdict["ok"], verdict
        expect(pick).to_have_value("")  # the vote is not kept in sight
        shown = unheld(red)
        assert not [s for s in told(table, "red") if s in shown], shown
        red.reload()
        red = page_of(table, "red")
        expect(red.locator("#submits select[name=vote]")).to_have_value("")
    finally:
        closed(table)


def test_finding_a_told_line_or_refusal_goes_with_its_step(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """A refusal of round 1's VP auction stood in red in round 2's role auction,
    and stayed English after a Japanese language card."""
    expect = sync_api.expect
    table = table_of(browser, tmp_path, "demagogos", "en", red=Page("red", "/", PHONE, seat="red"))
    try:
        play_until(table, step_is("vp_auction"))
        red = page_of(table, "red")
        refused = send(table, red, "vp_bid", 99)
        assert not refused["ok"]
        expect(red.locator("#status")).to_have_text(refused["text"])
        shoot(red, "past-refusal-vp-en")
        play_until(table, step_is("role_auction"))  # round 2
        red = page_of(table, "red")
        shoot(red, "past-refusal-round2-en")
        past = {refused["text"], *told(table, "red")}
        assert red.locator("#status").inner_text() not in past  # read at once: not after a fade
        refused = send(table, red, "bid", 99)
        assert not refused["ok"]
        expect(red.locator("#status")).to_have_text(refused["text"])
        table.sim.step("tap", "lang/ja")
        red = page_of(table, "red")
        expect(red.locator("#me-head")).to_contain_text("あなたの席")  # the page is in Japanese now
        shoot(red, "past-refusal-lang-ja")
        assert red.locator("#status").inner_text() != refused["text"]
    finally:
        closed(table)
