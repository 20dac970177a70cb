"""The table as a Home Assistant device: MQTT device-based discovery
(Home Assistant 2024.11+), pure functions, no network.

One message on ``homeassistant/device/<table_id>/config`` declares the
device and its components (``dev``, ``o``, ``cmps``, each with its
``platform``); every component reads the table's own topics (docs/integrate/mqtt.md),
so nothing is published for Home Assistant beyond this message:

- ``sensor`` game: the game's name in the language the table speaks (the
  state's ``lang``; the names from the games' folders, handed in by the app),
  with round, whose turn, totals and the deadline as attributes — all from
  ``companion/<id>/state``;
- ``sensor`` step (``device_class: enum``): the state's ``step``; its
  ``options`` are every step of every game and the table's phases;
- ``binary_sensor`` night: the state's ``night`` (eyes closed);
- ``event`` verdict: read from ``companion/<id>/event``: each game declares
  which of its TABLE events says who won, and in which field (its
  manifest's ``outcomes``: Home Assistant reads the games' manifests, as the
  outbox and the venue do, handed in by the app); the value template turns such an event into Home
  Assistant's ``{"event_type": …}`` with the event's own fields, and renders
  nothing for any other event (Home Assistant ignores an empty rendering);
  the totals are its attributes, from the state;
- ``button``s next, back, repeat — only with ``mqtt: commands: on`` — publish
  their name on ``companion/<id>/command``.
Availability is the table's ``status`` (``online``/``offline``, its last will).

The discovery message is not retained (DESIGN.md): the link publishes it on
each connection and again whenever Home Assistant announces itself
(``on_ha_status``).  ``forget`` is the empty payload that removes the device.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from companion.core.manifest import Manifest
from companion.core.table import Table
from companion.core.wire import topic

TABLE_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")  # the MQTT contract's table id
PREFIX = "homeassistant"  # Home Assistant's discovery prefix (its default)
HA_STATUS_TOPIC = f"{PREFIX}/status"  # its birth (online) and last will (offline)
# The discovery goes again at most once in this many seconds however many births come
# (3,000 births once cost 10 MiB of discovery): the first at once, the last when it is up.
REPUBLISH_S = 5.0
BUTTONS = ("next", "back", "repeat")  # what companion/<id>/command takes (the MQTT contract)
ORIGIN = "table companion"
# The components' names in the table's language; a language not here speaks English.
NAMES: Mapping[str, Mapping[str, str]] = {
    "en": {"device": "Game table {table_id}", "model": "Table companion", "game": "Game", "step": "Step",
           "night": "Night", "verdict": "Verdict", "next": "Next", "back": "Back", "repeat": "Repeat"},
    "ja": {"device": "ゲームテーブル {table_id}", "model": "テーブルコンパニオン", "game": "ゲーム", "step": "進行",
           "night": "夜", "verdict": "勝敗", "next": "次へ", "back": "戻る", "repeat": "もう一度"},
}
ICONS = {"game": "mdi:cards-playing", "step": "mdi:progress-clock", "night": "mdi:weather-night",
         "verdict": "mdi:gavel", "next": "mdi:skip-next", "back": "mdi:undo", "repeat": "mdi:replay"}


def config_topic(table_id: str, prefix: str = PREFIX) -> str:
    return f"{prefix}/device/{table_id}/config"


def entity_slug(table_id: str) -> str:
    """The table id as Home Assistant's entity ids take it: ``[a-z0-9_]``,
    no doubled, leading or trailing ``_`` (``table--1-`` → ``table_1``)."""
    return re.sub(r"[^a-z0-9]+", "_", table_id.lower()).strip("_")


def entity_ids(table_id: str, *, commands: bool = False) -> dict[str, str]:
    """The entity ids Home Assistant gives the components, by component
    (each component's ``default_entity_id``): what an automation names."""
    platforms = {"game": "sensor", "step": "sensor", "night": "binary_sensor", "verdict": "event",
                 **({b: "button" for b in BUTTONS} if commands else {})}
    return {key: f"{platform}.companion_{entity_slug(table_id)}_{key}" for key, platform in platforms.items()}


def step_options(games: Iterable[Manifest]) -> list[str]:
    """Every value the state's ``step`` may take: the table's phases (no
    game running), then every step of every game, each once."""
    return list(dict.fromkeys((*Table.PHASES, *(s for g in games for s in g.steps))))


def outcome_events(games: Iterable[Manifest]) -> dict[str, tuple[str | None, str | None]]:
    """The TABLE events that carry a verdict: event → (the field naming the
    side, the game it belongs to where only one game reports it).  Two games
    reading one event by different fields is a mistake in their folders."""
    found: dict[str, tuple[str | None, set[str]]] = {}
    for g in games:
        for o in g.outcomes:
            field, owners = found.setdefault(o.event, (o.field, set()))
            if field != o.field:
                raise ValueError(f"{g.id}: the event {o.event!r} tells its verdict in {o.field!r}, "
                                 f"another game in {field!r}")
            owners.add(g.id)
    return {e: (f, next(iter(owners)) if len(owners) == 1 else None) for e, (f, owners) in found.items()}


def event_types(games: Iterable[Manifest]) -> list[str]:
    """Every verdict Home Assistant's event entity may fire: each declared
    value of a verdict field, and the event's name where it has no field."""
    return list(dict.fromkeys(v for g in games for o in g.outcomes for v in (o.values if o.field else (o.event,))))


def _py(value: Any) -> str:
    """A value as a template literal (the templates keep to the part of
    Jinja that reads as Python: literals, ``.get``, ``in``, ``x if c else y``)."""
    return repr(value)


def _templates(games: tuple[Manifest, ...], names: Mapping[str, Mapping[str, str]], lang: str) -> dict[str, str]:
    options = step_options(games)
    events = outcome_events(games)
    # event → the verdict: its field's value, or the event's name
    verdict = "{" + ", ".join(f"{_py(e)}: " + (f"value_json.get({_py(f)})" if f else _py(e))
                              for e, (f, _) in events.items()) + "}"
    owner = {e: g for e, (_, g) in events.items() if g}
    return {
        # the name in the language the table speaks now (the state's lang), else in the discovery's
        "game": (f"{{{{ {_py(names)}.get(value_json.get('lang'), {_py(names[lang])})"
                 ".get(value_json.get('game'), value_json.get('game')) }}"),
        "game_attributes": "{{ {'round': value_json.get('round'), 'waiting_for': value_json.get('waiting_for'), "
                           "'totals': value_json.get('totals'), 'deadline': value_json.get('deadline')} | to_json }}",
        # a step no option names (a newer table) is unknown, never an error in Home Assistant
        "step": f"{{{{ value_json.get('step') if value_json.get('step') in {_py(options)} else 'None' }}}}",
        "night": "{{ 'ON' if value_json.get('night') else 'OFF' }}",
        "verdict": (f"{{{{ dict(value_json, event_type={verdict}.get(value_json.get('event')), "
                    f"game=value_json.get('game') or {_py(owner)}.get(value_json.get('event'))) | to_json "
                    f"if value_json.get('event') in {_py(list(events))} else '' }}}}"),
        "totals": "{{ {'totals': value_json.get('totals')} | to_json }}",
    }


def game_names(names: Mapping[str, Mapping[str, Any]] | None, games: Iterable[Manifest],
               lang: str) -> dict[str, str]:
    """Each game's name in ``lang``: ``names`` is what the pages get
    (``catalogue.page_games``: language → game → ``{"name": …}``); English,
    then the game's id, where a name is missing."""
    names = names or {}
    out = {}
    for g in games:
        entry = names.get(lang, {}).get(g.id) or names.get("en", {}).get(g.id) or {}
        out[g.id] = str(entry.get("name") or g.id)
    return out


def discovery(table_id: str, games: Iterable[Manifest], *, commands: bool,
              lang: str, names: Mapping[str, Mapping[str, Any]] | None = None, sw: str | None = None,
              prefix: str = PREFIX) -> tuple[str, bytes]:
    """The discovery message: (topic, JSON payload), published QoS 1, not
    retained.  ``games``: the games' manifests (``companion.games.manifests``); ``names``: the games'
    names by language (``catalogue.page_games``); ``commands``: the
    ``mqtt: commands`` setting (the buttons); ``lang``: the table's language
    (the components' names); ``sw``: the companion's version."""
    if not TABLE_ID.fullmatch(table_id):  # it is in every topic: a '/', '+' or '#' would name others'
        raise ValueError(f"not a table id (1 to 32 of a-z, 0-9 and '-'): {table_id!r}")
    games = tuple(games)
    words = {**NAMES["en"], **NAMES.get(lang, {})}
    state, ids = topic(table_id, "state"), entity_ids(table_id, commands=commands)
    langs = dict.fromkeys((lang, *(names or {})))
    tpl = _templates(games, {la: game_names(names, games, la) for la in langs}, lang)

    def component(key: str, platform: str, **options: Any) -> dict[str, Any]:
        return {"p": platform, "name": words[key], "unique_id": f"companion_{table_id}_{key}",
                "default_entity_id": ids[key], "icon": ICONS[key], **options}

    cmps = {
        "game": component("game", "sensor", state_topic=state, value_template=tpl["game"],
                          json_attributes_topic=state, json_attributes_template=tpl["game_attributes"]),
        "step": component("step", "sensor", state_topic=state, device_class="enum", options=step_options(games),
                          value_template=tpl["step"]),
        "night": component("night", "binary_sensor", state_topic=state, value_template=tpl["night"],
                           payload_on="ON", payload_off="OFF"),
    }
    if types := event_types(games):  # Home Assistant wants at least one
        cmps["verdict"] = component("verdict", "event", state_topic=topic(table_id, "event"), event_types=types,
                                    value_template=tpl["verdict"], json_attributes_topic=state,
                                    json_attributes_template=tpl["totals"])
    if commands:
        cmps |= {b: component(b, "button", command_topic=topic(table_id, "command"), payload_press=b, retain=False)
                 for b in BUTTONS}
    payload = {
        "dev": {"ids": [f"companion_{table_id}"], "name": words["device"].format(table_id=table_id),
                "mf": ORIGIN, "mdl": words["model"], **({"sw": sw} if sw else {})},
        "o": {"name": ORIGIN, **({"sw": sw} if sw else {})},
        "cmps": cmps,
        "availability_topic": topic(table_id, "status"), "payload_available": "online", "payload_not_available": "offline",
        "qos": 1,
    }
    return config_topic(table_id, prefix), json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def forget(table_id: str, prefix: str = PREFIX) -> list[tuple[str, bytes]]:
    """What removes the device from Home Assistant: an empty payload on its
    discovery topic (published retained, QoS 1, which also clears any config
    a broker kept): Home Assistant removes the components and the device."""
    return [(config_topic(table_id, prefix), b"")]


def on_ha_status(payload: bytes | str) -> bool:
    """Should the link publish the discovery again, on this message of
    ``homeassistant/status``?  Yes when Home Assistant says it is ``online``
    (its birth: after a restart it knows no device until told)."""
    text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
    return text.strip() == "online"
