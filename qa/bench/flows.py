"""Whole games as table-script steps, with the mistakes real tables make.

Each flow is a list of ``(kind, value)`` steps in the vocabulary of
``companion.app.simulate`` (``tap``, ``uid``, ``press``, ``wait``) plus one of our
own, ``until``: let virtual time run until the game reaches a step (the night,
the discussion, the vote count).  Both flows end with the game finished and the
table idle, so they can be played back to back on one journal, as on a games
night.  ``expect`` counts what the loop must answer, so a flow that drifted out
of step with the rules fails loudly instead of measuring refusals only.
"""

from __future__ import annotations

from typing import Any

Step = tuple[str, Any]

SKB_PLAYERS = ("red", "blue", "green", "yellow", "purple")
ONW_PLAYERS = ("red", "blue", "green", "yellow", "purple")


def _players(names: tuple[str, ...]) -> list[Step]:
    return [("tap", f"player/{p}") for p in names]


def seven_knights() -> list[Step]:
    """Five players, basic rules (knights 1-5 and the witch), three rounds:
    a formation that holds, an election and a left-out tile, then the witch as
    the captain's tile.  Rejections: an unknown tag, an unreadable UID, a tile
    twice, another game's card, a player who is not playing, a stray ``back``."""
    k = [f"skb/knight/{i}" for i in range(1, 6)]
    return [
        ("tap", "game/seven-knights"),
        ("tap", "skb/knight/1"),  # rejected: seat the players first
        *_players(SKB_PLAYERS),
        ("tap", "player/red"),  # rejected: already seated
        ("press", "next"),
        # round 1: quest, questions, recommendation skipped, captain's tile, full formation
        ("press", "next"), ("press", "next"), ("press", "next"),
        ("tap", "x/not-a-tag"),  # rejected: unknown tag
        ("tap", k[2]),
        *[("tap", t) for t in k],
        ("tap", k[0]),  # rejected: twice
        ("press", "next"),
        ("tap", "skb/witch"),  # left out: 6 tiles on the table (5 players' and the centre)
        ("press", "next"),  # nobody on the witch team
        ("press", "next"),  # next round
        # round 2: an election, then four tiles laid and one left out
        ("press", "next"), ("press", "next"),
        *[s for p, q in zip(SKB_PLAYERS, ("blue", "blue", "red", "blue", "green"), strict=True)
          for s in (("tap", f"player/{p}"), ("tap", f"player/{q}"))],
        ("tap", "player/black"),  # rejected: not playing
        ("tap", k[1]),
        ("tap", "onw/seer/1"),  # rejected: another game's card
        *[("tap", t) for t in (k[1], k[0], k[3], k[4])],
        ("press", "next"),
        ("uid", "04DEADBEEF0000"),  # rejected: a UID nobody mapped
        ("tap", "skb/witch"),  # left out
        ("tap", k[2]),  # left out too: a knight left out fails the formation
        ("tap", "player/green"), ("press", "next"),  # the witch's holder taps
        ("press", "next"),
        # round 3: the captain's tile is the witch
        ("press", "back"),  # rejected: nothing to undo
        ("tap", "skb/witch"),  # during the quest: "the captain is ready", not named
        ("press", "next"),  # revealed: the witch team wins at once
        ("tap", "player/yellow"), ("tap", "player/purple"),
        ("press", "next"),
        ("tap", k[0]),  # rejected: the game is over, the table waits for a game card
    ]


def one_night(window_s: float = 10.0) -> list[Step]:
    """Five players: the narrated night (taps refused without a sound), the
    discussion ended early, the vote count, every card revealed, one execution.
    Rejections: taps at night, a role card before a player card, a card twice,
    a card not in the deck, ``next`` before everyone has revealed."""
    cards = ("onw/werewolf/1", "onw/seer/1", "onw/villager/1", "onw/thief/1", "onw/villager/2")
    return [
        ("tap", "game/one-night"),
        *_players(ONW_PLAYERS),
        ("press", "next"),
        ("tap", "onw/seer/1"),  # rejected: deal, then next
        ("press", "next"),  # the night
        ("tap", "player/red"),  # rejected, quietly
        ("tap", "onw/werewolf/2"),  # rejected, quietly
        ("until", "discussion"),
        ("tap", "onw/seer/1"),  # rejected: cards after the vote
        ("press", "next"),  # end the discussion early
        ("until", "count"),  # the vote called: the table counts, or the cards are shown
        ("tap", "onw/thief/1"),  # rejected: player card first
        *[s for p, c in zip(ONW_PLAYERS, cards, strict=True) for s in (("tap", f"player/{p}"), ("tap", c))],
        ("tap", "onw/villager/4"),  # rejected: not in this deck
        ("tap", "player/red"),  # executed
        ("tap", "player/red"),  # rejected: executed twice
        ("press", "next"),
    ]


def count_taps(flow: list[Step]) -> int:
    return sum(1 for kind, _ in flow if kind in ("tap", "uid"))


def engine_step(sim: Any) -> str | None:
    engine = sim.loop.table.engine
    return None if engine is None else str(engine.state.step)


def play(sim: Any, flow: list[Step], pause_s: float = 0.0) -> None:
    """Play a flow on a ``companion.app.simulate.Simulation`` (virtual time, in
    this thread), ``pause_s`` of virtual time after each tap and press."""
    for kind, value in flow:
        if kind == "until":
            while engine_step(sim) != value:
                timers = sim.loop.pending_timers()
                if not timers:
                    raise RuntimeError(f"stuck in {engine_step(sim)}, waiting for {value}")
                sim.step("wait", max(0.0, min(timers.values()) - sim.clock.now()))
        else:
            sim.step(kind, value)
            if pause_s:
                sim.step("wait", pause_s)
