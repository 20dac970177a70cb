"""Random table scripts: valid games with wrong taps mixed in.

A script is a list of ``Step``s.  The generators know the table flow well
enough to finish every game they start (DESIGN.md "Table flow"), and sprinkle
in inputs the table must refuse (junk tags, tiles of another game, a card
twice, ``next`` too early…) plus a few harmless accepted extras (``repeat``,
``back`` followed by the same input again, a language card).  They do not
predict the verdicts: the reference run (``qa.reliability.inproc``) is the
oracle, and the campaign compares the killed daemon against it.

A step marked ``retry`` is refused for a while for reasons of time (the One
Night night and vote count run on their own timers); drivers repeat it every
``RETRY_S`` until it is accepted, so the same script works on virtual and on
real time.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from companion.core.tags import COLOURS
from companion.games.one_night.roles import EDITIONS, card_ids
from companion.games.seven_knights.rules import (
    RULE_SETS,
    WITCH,
    Options,
    default_rule_set,
    elect,
    formation_failure,
    knight_number,
    tile_set,
)

RETRY_S = 0.25

# The One Night config the campaign plays with: a night of under 4 s.
ONW_FAST: dict[str, Any] = {"one-night": {"window_s": 1, "pace": 0.25, "discussion_min": 0.5}}
# ... and a long press of back that takes 0.3 s, not 2 s (the daemon's panel holds for real).
PANEL_FAST: dict[str, Any] = {"hold_back_s": 0.3}


@dataclass(frozen=True)
class Step:
    kind: str  # tap | uid | press | hold | wait | unplug | plug
    value: Any
    retry: bool = False  # refused for a while (timers): try again until accepted
    wrong: bool = False  # put in to be refused (documentation; the reference run decides)

    @property
    def label(self) -> str:
        """The ``input`` field the daemon's accepted/rejected event carries."""
        if self.kind == "uid":
            return f"uid:{str(self.value).replace(':', '').upper()}"
        return str(self.value)

    def command(self) -> str:
        """The line ``companion run --simulate`` reads for this step."""
        if self.kind == "uid":
            return f"uid:{self.value}"
        if self.kind == "hold":
            return "hold"
        if self.kind in ("unplug", "plug"):
            return self.kind
        if self.kind == "tap":  # a tag carrying this text, known or not: junk must reach the table
            return f"text:{self.value}"
        if self.kind == "press":
            return str(self.value)
        raise ValueError(f"{self.kind} is not a terminal command")

    def as_yaml_step(self) -> dict[str, Any]:
        return {self.kind: self.value}


def tap(identity: str, **kw: Any) -> Step:
    return Step("tap", identity, **kw)


def press(button: str, **kw: Any) -> Step:
    return Step("press", button, **kw)


@dataclass
class Script:
    seed: int
    steps: list[Step] = field(default_factory=list)
    games: list[str] = field(default_factory=list)  # games that must finish, in order

    def yaml(self, waits: dict[int, float] | None = None) -> str:
        """As a table script for ``companion simulate`` (``waits``: seconds of
        virtual time a retry step needed before it, from the reference run)."""
        import yaml

        steps: list[dict[str, Any]] = []
        for i, s in enumerate(self.steps):
            if waits and waits.get(i):
                steps.append({"wait": round(waits[i], 3)})
            steps.append(s.as_yaml_step())
        doc = {"title": f"reliability script {self.seed}", "seed": 1,
               "config": {"games": ONW_FAST, "panel": PANEL_FAST}, "steps": steps}
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


# ------------------------------------------------------------- wrong taps
JUNK = ("junk/xyzzy", "skb/knight/9", "onw/werewolf/3", "player/nobody-here", "game/madness-hour",
        "dt/box/11", "rules/Not-A-Name")


class _Gen:
    def __init__(self, rng: random.Random, wrong: float) -> None:
        self.rng = rng
        self.wrong = wrong
        self.steps: list[Step] = []

    def add(self, step: Step) -> None:
        self.steps.append(step)

    def maybe(self, *candidates: Step) -> None:
        """With probability ``wrong``, one of ``candidates`` or a junk tap."""
        if self.rng.random() >= self.wrong:
            return
        pool = list(candidates) + [tap(self.rng.choice(JUNK), wrong=True),
                                   Step("uid", f"{self.rng.getrandbits(56):014X}", wrong=True),
                                   press("repeat")]
        self.add(self.rng.choice(pool))

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def hold_then_cancel(self) -> None:
        """Sometimes: a long press of back (restart the step? abandon the
        game?), then back to cancel — the table is where it was."""
        if self.chance(self.wrong / 5):
            self.add(Step("hold", "back"))
            self.add(press("back"))


# ---------------------------------------------------------- Seven Knights
def seven_knights(g: _Gen, *, again: dict[str, Any] | None = None) -> dict[str, Any]:
    """A whole Seven Knights game; ``again`` (the set-up returned by the
    previous one) plays it again with ``next`` instead of gathering."""
    rng = g.rng
    if again is None:
        rule = rng.choice(list(RULE_SETS))
        rs = RULE_SETS[rule]
        n = rng.randint(rs.low, rs.high)
        players = rng.sample(COLOURS, n)
        g.add(tap("game/seven-knights"))
        g.maybe(press("next", wrong=True), tap("skb/knight/1", wrong=True))
        if rule != default_rule_set(n) or g.chance(0.5):
            g.add(tap(f"rules/{rule}"))
            g.maybe(tap(f"rules/{rule}", wrong=True), tap("rules/nonsense", wrong=True))
        for p in players:
            g.add(tap(f"player/{p}"))
            if g.chance(g.wrong / 2):
                g.add(tap(f"player/{p}", wrong=True))  # seated twice
            if g.chance(g.wrong / 3):
                g.add(press("back"))  # undo the seat, then take it again
                g.add(tap(f"player/{p}"))
        g.add(press("next"))
    else:
        rule, players = again["rule"], list(again["players"])
        g.add(press("next"))  # the same table again
    n = len(players)
    rs = RULE_SETS[rule]
    tiles = tile_set(rule, n, Options())
    outside = [t for t in ("skb/knight/1", "skb/knight/2", "skb/knight/3", "skb/knight/4", "skb/knight/5",
                           "skb/knight/6", "skb/knight/7", WITCH) if t not in tiles]
    dealable = [t for t in tiles if rs.witch_dealt or t != WITCH]
    for rnd in range(1, 4):
        _seven_knights_round(g, rule, players, tiles, dealable, outside, start=(rnd - 1) % n)
        if rnd < 3:
            g.maybe(tap(tiles[0], wrong=True), tap(f"player/{players[0]}", wrong=True))
            g.add(press("next"))
    return {"game": "seven-knights", "rule": rule, "players": players}


def _seven_knights_round(g: _Gen, rule: str, players: list[str], tiles: tuple[str, ...],
                         dealable: list[str], outside: list[str], start: int) -> None:
    rng = g.rng
    rs = RULE_SETS[rule]
    n = len(players)
    hands = dict(zip(players, rng.sample(dealable, n), strict=True))
    undealt = [t for t in tiles if t not in hands.values()]
    centre_n = rs.centre(n, len(tiles))
    centre = rng.sample(undealt, centre_n)  # the rest is set aside unseen
    elsewhere = [tap(rng.choice(outside), wrong=True)] if outside else []
    g.maybe(tap("onw/seer/1", wrong=True))
    if g.chance(g.wrong / 3):  # a tile slips over the reader in the quest: not named; back drops it
        g.add(tap(rng.choice(tiles)))
        g.maybe(tap(tiles[0], wrong=True))
        g.add(press("back"))
    phase = rng.choice([0, 0, 1, 2, 2, 3])  # nexts: quest → questions → recommendation → command
    for _ in range(min(phase, 2)):
        g.add(press("next"))
    g.hold_then_cancel()
    captain, known = rng.choice(players), False
    if phase >= 2 and g.chance(0.5):  # the optional election
        votes: dict[str, str] = {}
        for voter in rng.sample(players, n):
            g.add(tap(f"player/{voter}"))
            choice = rng.choice(players)
            g.add(tap(f"player/{choice}"))
            votes[voter] = choice
            if len(votes) < n:
                g.maybe(tap(f"player/{voter}", wrong=True))  # ...but a tapped voter card is a vote
        captain, known = elect(players, start, votes), True
        phase = 3
    elif phase == 3:
        g.add(press("next"))  # recommendation → command, no election
    if phase == 3:
        g.maybe(press("next", wrong=True), *elsewhere)
        if rs.witch_team and g.chance(0.08):  # a bewitched captain concedes: own card twice
            g.add(tap(f"player/{captain}"))
            g.add(tap(f"player/{captain}"))
            _witch_team(g, players, hands, captain_tile=None, captain=captain, already=[captain])
            return
    ctile = hands[captain]
    g.add(tap(ctile))
    if phase < 3:  # before the command phase: "the captain is ready"; next reveals it
        g.maybe(tap(ctile, wrong=True), tap(f"player/{captain}", wrong=True))
        g.add(press("next"))
    if ctile == WITCH:  # the witch team wins at once
        _witch_team(g, players, hands, captain_tile=WITCH, captain=captain,
                    already=[captain] if known else [])
        return
    on_table = [*hands.values(), *centre]  # revised ruling 5: the centre tiles are in the formation too
    m = rng.randint(1, len(on_table))
    laid = [ctile, *rng.sample([t for t in on_table if t != ctile], m - 1)]
    if g.chance(0.5):  # a careful captain: ascending, the witch last
        laid.sort(key=lambda t: 99 if t == WITCH else knight_number(t))
    else:
        rng.shuffle(laid)
    for i, t in enumerate(laid):
        if i == 0 and ctile != t:
            g.maybe(press("next", wrong=True))  # the captain's own tile is missing
        g.add(tap(t))
        if i < len(laid) - 1 and g.chance(g.wrong / 3):
            g.add(press("back"))
            g.add(tap(t))
        if i < len(laid) - 1:
            g.hold_then_cancel()
        g.maybe(tap(t, wrong=True), *elsewhere)
    g.add(press("next"))
    rest = [t for t in on_table if t not in laid]
    rng.shuffle(rest)
    for i, t in enumerate(rest):
        if i == 0:
            g.maybe(press("next", wrong=True), tap(laid[0], wrong=True))
        g.add(tap(t))
    if rs.witch_team:
        # A formation that holds with a witch team and no elected captain: the
        # table is asked whether the captain was bewitched (the captain taps).
        ask = not known and formation_failure(laid, rest) is None
        _witch_team(g, players, hands, captain_tile=ctile, captain=captain, already=[], ask_captain=ask,
                    centre=centre_n)


def _witch_team(g: _Gen, players: list[str], hands: dict[str, str], *, captain_tile: str | None,
                captain: str, already: list[str], ask_captain: bool = False, centre: int = 0) -> None:
    """The witch's holder and the bewitched tap their cards, then ``next``."""
    rng = g.rng
    holder = next((p for p, t in hands.items() if t == WITCH), None)
    in_front = captain_tile is not None  # a conceded round laid nothing
    tapping: list[str] = []
    if in_front and holder is not None and holder not in already:
        tapping.append(holder)
        if captain_tile == WITCH or centre == 0:  # else the witch might have been a centre tile
            g.maybe(press("next", wrong=True))  # the witch's holder must tap first
    others = [p for p in players if p not in already and p not in tapping and p != holder]
    tapping += rng.sample(others, rng.randint(0, min(2, len(others))))
    for p in tapping:
        g.add(tap(f"player/{p}"))
        g.maybe(tap(f"player/{p}", wrong=True), tap("skb/knight/1", wrong=True))
    g.add(press("next"))
    if ask_captain and tapping:
        g.add(tap(f"player/{captain}"))


# -------------------------------------------------------------- One Night
def one_night(g: _Gen, *, again: dict[str, Any] | None = None) -> dict[str, Any]:
    """A whole One Night game with a fast night (``ONW_FAST``)."""
    rng = g.rng
    if again is None:
        n = rng.randint(3, 7)
        players = rng.sample(COLOURS, n)
        g.add(tap("game/one-night"))
        g.maybe(tap("rules/advanced", wrong=True), press("next", wrong=True))
        for p in players:
            g.add(tap(f"player/{p}"))
        g.add(press("next"))
    else:
        players = list(again["players"])
        n = len(players)
        g.add(press("next"))
    g.maybe(tap("onw/seer/1", wrong=True))  # deal: cards not yet
    if g.chance(g.wrong / 3):  # back before the game has taken anything: to seating, then start again
        g.add(press("back"))
        g.add(press("next"))
    g.add(press("next"))  # the night
    for _ in range(rng.randint(0, 2)):  # the night refuses everything, and quietly
        g.add(rng.choice([tap(f"player/{players[0]}", wrong=True), tap("onw/werewolf/1", wrong=True),
                          press("repeat", wrong=True), press("back", wrong=True), press("next", wrong=True)]))
    g.add(press("next", retry=True))  # ends the discussion once the night is over
    cards = rng.sample(card_ids(EDITIONS["jinrou"].default_decks[n]), n)
    order = rng.sample(range(n), n)
    counted = g.chance(0.3)  # the optional vote count: own card, then the card pointed at
    if counted:
        for j, voter in enumerate(rng.sample(players, n)):
            g.add(tap(f"player/{voter}", retry=(j == 0)))  # the first waits for the vote count
            g.add(tap(f"player/{rng.choice(players)}"))
            if j == 0:
                g.maybe(tap(f"player/{voter}", wrong=True))  # voted already
    for j, i in enumerate(order):
        p, card = players[i], cards[i]
        if j > 0:
            g.maybe(tap(card, wrong=True), press("next", wrong=True), tap(cards[order[0]], wrong=True))
        g.add(tap(f"player/{p}", retry=(j == 0 and not counted)))  # the first waits for the vote count
        if j > 0:
            g.maybe(tap(f"player/{players[order[0]]}", wrong=True))  # role card expected
        g.add(tap(card))
        g.hold_then_cancel()
    executed = [] if counted else rng.sample(players, rng.randint(0, n // 2))  # at most n // 2
    if counted:
        g.maybe(tap(f"player/{players[0]}", wrong=True))  # the count holds
    for p in executed:
        g.add(tap(f"player/{p}"))
        g.maybe(tap(f"player/{p}", wrong=True), tap(cards[0], wrong=True))
    g.add(press("next"))  # the verdict
    return {"game": "one-night", "players": players}


GENERATORS = {"seven-knights": seven_knights, "one-night": one_night}


def generate(seed: int, *, wrong: float = 0.25, games: list[str] | None = None) -> Script:
    """A script of one or two games (random unless ``games`` is given), each
    started with its game card or, when it repeats the last one, with ``next``."""
    rng = random.Random(seed)
    g = _Gen(rng, wrong)
    if games is None:
        games = rng.choice([["seven-knights"], ["one-night"], ["seven-knights", "one-night"],
                            ["one-night", "seven-knights"], ["seven-knights", "seven-knights"],
                            ["one-night", "one-night"]])
    g.maybe(press("next", wrong=True), press("back", wrong=True), tap("skb/witch", wrong=True))
    last: dict[str, Any] | None = None
    for game in games:
        again = last if last is not None and last["game"] == game and rng.random() < 0.6 else None
        if rng.random() < 0.1:
            g.add(tap(rng.choice(["lang/ja", "lang/en"])))
        last = GENERATORS[game](g, again=again)
    return Script(seed, g.steps, list(games))
