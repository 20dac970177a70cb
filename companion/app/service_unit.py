"""What the installed service may write, read from its unit as systemd reads
it: ``companion doctor`` runs outside the service's sandbox, where a folder
the service cannot write (``ProtectSystem=strict`` makes every path
read-only but those the unit lists) is writable and looks fine.
"""

from __future__ import annotations

import os
from pathlib import Path

UNIT = Path("/etc/systemd/system/companion.service")


def installed_text(unit: Path = UNIT) -> str | None:
    """The installed unit and its drop-ins (``systemctl edit companion``
    writes ``companion.service.d/override.conf``), in the order systemd
    reads them; None when the service is not installed here."""
    try:
        parts = [unit.read_text(encoding="utf-8")]
        drop_ins = Path(f"{unit}.d")
        if drop_ins.is_dir():
            parts += [p.read_text(encoding="utf-8") for p in sorted(drop_ins.glob("*.conf"))]
    except OSError:
        return None
    return "\n".join(parts)


def _service_settings(text: str) -> dict[str, list[str]]:
    """The [Service] keys: a key given again adds to the list; given empty, clears it."""
    settings: dict[str, list[str]] = {}
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, sep, value = line.partition("=")
        if sep and section == "Service":
            values = value.split()
            settings[key.strip()] = settings.get(key.strip(), []) + values if values else []
    return settings


def sandbox_refuses(unit_text: str, folder: str) -> str | None:
    """Why the service's sandbox keeps it from writing ``folder`` (None: it
    does not).  Under ``ProtectSystem=strict`` only the unit's
    ``ReadWritePaths=`` (a leading ``-``: optional) and its
    ``StateDirectory=`` are writable."""
    settings = _service_settings(unit_text)
    if (settings.get("ProtectSystem") or ["no"])[-1] != "strict":
        return None
    writable = [p.lstrip("-+") for p in settings.get("ReadWritePaths", [])]
    writable += [f"/var/lib/{d}" for d in settings.get("StateDirectory", [])]
    real = os.path.realpath(folder)
    for path in writable:
        allowed = os.path.realpath(path)
        if real == allowed or real.startswith(allowed.rstrip("/") + "/"):
            return None
    return ("the service cannot write it: its sandbox (ProtectSystem=strict) makes every folder read-only "
            f"but {', '.join(writable) or 'none'}")
