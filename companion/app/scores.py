"""``companion scores`` — the game in progress, tonight's totals and the
history, read from the journal (safe beside the running daemon: WAL lets a
reader in).  ``--export csv|json`` writes the plays; the JSON is BG Stats'
push format (web/bgstats.py: the pages' "send to BG Stats" links are the
same records).  Dates are shown and exported in local time (the journal
keeps UTC)."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from companion.app.start import state_dir
from companion.runtime.journal import Journal
from web.bgstats import ExportGame, local_date, record


def export_games() -> dict[str, ExportGame]:
    """Each game's English name and scoring, from its folder (companion.app.catalogue)."""
    from companion.app import catalogue

    return catalogue.export_games(catalogue.narrator().lines)


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state", type=Path, help="state directory holding journal.sqlite (default: state_dir "
                   "from the config, else $STATE_DIRECTORY, else ./state)")
    p.add_argument("--export", choices=("csv", "json"), help="write every play in this format")
    p.add_argument("-o", "--output", type=Path, help="export to this file (default: stdout)")


def plays_json(plays: list[dict[str, Any]]) -> dict[str, Any]:
    games = export_games()
    return {"plays": [{**record(p, games=games), "rules": p.get("rules", [])} for p in plays]}


def write_csv(plays: list[dict[str, Any]], out: TextIO) -> None:
    w = csv.writer(out)
    w.writerow(["play", "playDate", "game", "durationMin", "player", "score", "winner", "startPlayer"])
    for p in plays:
        for pl in p["players"]:
            w.writerow([p["id"], local_date(p["playDate"]), p["game"], p["durationMin"], pl["name"], pl["score"],
                        int(pl["winner"]), int(pl["startPlayer"])])


def current(cfg: dict[str, Any], journal: Journal) -> Any:
    """The table as the daemon has it now (replayed, no hardware)."""
    from companion.core.table import Table
    from companion.games import registry

    # The settings in force come from the journal itself; these only fill a blank one.
    table = Table(registry(), lang=cfg["language"], options=cfg["games"], names=cfg["players"]["names"])
    seq, cp = journal.checkpoint()
    for _ in table.replay(cp, journal.entries(after=seq)):
        pass
    return table


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    import sqlite3

    from companion.app.config import for_command

    out = out or sys.stdout

    cfg = for_command(args)
    path = state_dir(cfg) / "journal.sqlite"
    if not path.exists():
        print(f"No journal at {path}: no games played yet.", file=out)
        return 0 if not args.export else 1
    try:
        return _show(args, cfg, Journal(path, readonly=True), out)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as e:  # a damaged SD card: say so; the daemon recovers it at its next start
        print(f"companion scores: the journal {path} is damaged ({e}); the daemon sets it aside and recovers "
              "it at its next start; `companion doctor` says which backup it would use", file=sys.stderr)
        return 1


def _show(args: argparse.Namespace, cfg: dict[str, Any], journal: Journal, out: TextIO) -> int:
    plays = journal.plays()
    if args.export:
        target = open(args.output, "w", newline="", encoding="utf-8") if args.output else out
        try:
            if args.export == "csv":
                write_csv(plays, target)
            else:
                json.dump(plays_json(plays), target, ensure_ascii=False, indent=2)
                print(file=target)
        finally:
            if args.output:
                target.close()
        return 0
    table = current(cfg, journal)
    st = table.state
    names = {game: g.name for game, g in export_games().items()}
    if table.engine is not None:
        print(f"Playing now: {names.get(st.game or '', st.game)} — {', '.join(table.players)}", file=out)
        totals = getattr(table.engine.state, "totals", None)
        if totals:
            print("  so far: " + "  ".join(f"{p} {n}" for p, n in totals.items()), file=out)
    elif st.phase == "gathering":
        print(f"Setting up: {names.get(st.game or '', st.game)} — seated: {', '.join(table.players) or 'nobody'}",
              file=out)
    else:
        print("No game in progress.", file=out)
    for game, totals in table.public_view()["tonight"].items():
        ranked = sorted(totals.items(), key=lambda kv: -kv[1])
        print(f"Tonight, {names.get(game, game)}: " + "  ".join(f"{p} {n}" for p, n in ranked), file=out)
    skipped = f" ({len(journal.skipped)} unreadable rows left out)" if journal.skipped else ""
    print(f"History: {len(plays)} plays{skipped}", file=out)
    for p in plays[-20:]:
        winners = ", ".join(pl["name"] for pl in p["players"] if pl["winner"]) or "nobody"
        scores = "  ".join(f"{pl['name']} {pl['score']}" for pl in p["players"])
        print(f"  #{p['id']:<4} {local_date(p['playDate'])}  {names.get(p['game'], p['game']):24} {p['durationMin']:3} min  "
              f"{scores}   winners: {winners}", file=out)
    return 0
