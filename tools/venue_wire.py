"""Write venue/wire.json: the wire the games publish, as the venue reads it
(``companion.app.catalogue.venue_wire``: their manifests' events and ratings,
their names and step labels).  tests/test_venue.py fails while the file and
the games' folders differ; a game added or changed is this command again.

    python tools/venue_wire.py      # rewrite the file
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIRE = ROOT / "venue" / "wire.json"


def text() -> str:
    sys.path.insert(0, str(ROOT))
    from companion.app.catalogue import venue_wire

    return json.dumps(venue_wire(), ensure_ascii=False, indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    WIRE.write_text(text(), encoding="utf-8")
    print(f"wrote {WIRE.relative_to(ROOT)}")
