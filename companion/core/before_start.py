"""What a game says and checks before it starts: the seats and rule cards,
the lines said while phones pair, the components a table may tap before the
start (One Night's deck).  A part of ``Engine`` (its base), kept apart
because it is asked of the game's class while no game exists yet."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from companion.core.events import Output, Refusal


class BeforeStart:
    """The class methods the table calls before a game is made (defaults:
    the player count checked, nothing said, no card taken before the start)."""

    game: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]

    @classmethod
    def check_setup(cls, players: Sequence[str], rules: Sequence[str],
                    options: Mapping[str, Any]) -> None:
        """Raise ``Refusal`` if the game cannot start with these players and
        rule cards.  The default checks the player count."""
        n = len(players)
        if not cls.min_players <= n <= cls.max_players:
            raise Refusal("refuse.player_count",
                          f"{cls.game} needs {cls.min_players} to {cls.max_players} players, not {n}",
                          count=n, low=cls.min_players, high=cls.max_players)

    @classmethod
    def pairing_lines(cls, players: Sequence[str], rules: Sequence[str],
                      options: Mapping[str, Any]) -> list[Output]:
        """Lines said with the pairing prompt of a game that needs pages: what
        the table can set out while the phones pair.  Default: none."""
        return []

    # The table may tap this game's components before the start (One Night's deck): each is
    # ``setup_card``'s to take or refuse, the lot ``check_cards``' at ``next``; then ``Setup.cards``.
    setup_cards: ClassVar[bool] = False

    @classmethod
    def setup_card(cls, rules: Sequence[str], options: Mapping[str, Any], cards: Sequence[str],
                   card: str) -> list[Output]:
        """What is said when ``card`` is tapped before the start (``cards``:
        those tapped so far); raise ``Refusal`` to refuse it."""
        raise Refusal("refuse.not_before_start", "seat the players first, then press next")

    @classmethod
    def setup_board(cls, rules: Sequence[str], options: Mapping[str, Any],
                    cards: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
        """The cards tapped before the start as the public board's lines (a
        deck being built is public: each tap was said aloud)."""
        return []

    @classmethod
    def check_cards(cls, players: Sequence[str], rules: Sequence[str], options: Mapping[str, Any],
                    cards: Sequence[str]) -> None:
        """Raise ``Refusal`` if the cards tapped before the start cannot be
        played by these players (checked at ``next``)."""
