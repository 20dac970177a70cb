"""Home Assistant's view of a table (mqtt/homeassistant.py, mqtt/forget.py),
tested without Home Assistant:

- the discovery payload against the schema Home Assistant documents for
  device-based discovery (a checker written here from its documentation:
  the abbreviations, the root's required ``device``/``origin``/``components``,
  each component's ``platform`` and ``unique_id``, the keys each platform
  requires and allows) — stricter than Home Assistant, which drops unknown
  keys silently;
- the step sensor's options against every step the games reach (seeded
  playouts of every game) and the table's phases; every verdict the event
  entity declares is reached by some playout, rendered by its own template
  from the event as the link publishes it (docs/integrate/mqtt.md);
- the value templates over the ``state`` messages of docs/integrate/mqtt.md.  Jinja2
  is not installed here (and the project needs it nowhere else), so the
  templates keep to the part of Jinja that reads as Python — literals,
  ``.get``, ``in``, ``x if c else y``, ``dict(...)`` and one ``| to_json``
  filter — and ``render`` below evaluates exactly that part: a template
  outside it fails the test rather than being guessed at (where Jinja2 is
  installed, one test renders every template with it too and compares);
- the docs' automation (docs/integrate/homeassistant.md): the night sensor's transitions over day → night →
  day messages fire its night and morning triggers, once each;
- ``companion mqtt forget`` against a real mosquitto (the ``broker``
  fixture), and its errors as one line.
"""

from __future__ import annotations

import ast
import functools
import io
import json
import random
import re
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import pytest
import yaml

from companion.app import catalogue, cli
from companion.app.simulate import run_script
from companion.core.engine import Engine, Setup
from companion.core.events import Drawn, Press, Refusal, Report
from companion.core.table import Table
from companion.games import GAMES, manifest, manifests
from companion.games.seven_knights import SevenKnights
from conftest import example_scripts
from mqtt import homeassistant as ha
from tests.mosquitto import PASSWORD, USER, needs_mosquitto_passwd, password_broker
from tests.test_legal_perft import PLAYERS, Node, inputs, two_vp_each

ROOT = Path(__file__).resolve().parent.parent
AUTOMATION = ROOT / "docs" / "homeassistant" / "automation.yaml"
TID = "table-1"


# ------------------------------------------------ the documented schema
# https://www.home-assistant.io/integrations/mqtt/ — "Device discovery payload",
# "Supported abbreviations"; the platforms' pages (sensor, binary_sensor, event,
# button .mqtt) for their options.  Only the abbreviations a payload may use.
ABBREVIATIONS = {"dev": "device", "o": "origin", "cmps": "components", "p": "platform", "uniq_id": "unique_id",
                 "def_ent_id": "default_entity_id", "obj_id": "object_id", "stat_t": "state_topic",
                 "cmd_t": "command_topic", "val_tpl": "value_template", "dev_cla": "device_class", "ic": "icon",
                 "json_attr_t": "json_attributes_topic", "json_attr_tpl": "json_attributes_template",
                 "avty_t": "availability_topic", "pl_avail": "payload_available",
                 "pl_not_avail": "payload_not_available", "ops": "options", "evt_typ": "event_types",
                 "pl_on": "payload_on", "pl_off": "payload_off", "pl_prs": "payload_press", "ret": "retain",
                 "en": "enabled_by_default", "ent_cat": "entity_category", "e": "encoding"}
DEVICE_ABBREVIATIONS = {"ids": "identifiers", "cns": "connections", "mf": "manufacturer", "mdl": "model",
                        "mdl_id": "model_id", "sw": "sw_version", "hw": "hw_version", "sn": "serial_number",
                        "sa": "suggested_area", "cu": "configuration_url", "name": "name"}
ORIGIN_ABBREVIATIONS = {"name": "name", "sw": "sw_version", "url": "support_url"}
AVAILABILITY = {"availability_topic", "availability_template", "availability_mode", "payload_available",
                "payload_not_available"}
# the options shared at the root of a device discovery (and also allowed per component)
ROOT_OPTIONS = {"device", "origin", "components", "state_topic", "command_topic", "qos", "encoding", *AVAILABILITY}
DEVICE_OPTIONS = set(DEVICE_ABBREVIATIONS.values()) | {"via_device"}
ENTITY_OPTIONS = {"platform", "name", "unique_id", "default_entity_id", "object_id", "icon", "qos", "encoding",
                  "enabled_by_default", "entity_category", "entity_picture", "json_attributes_topic",
                  "json_attributes_template", *AVAILABILITY}
PLATFORMS: dict[str, tuple[set[str], set[str]]] = {  # platform -> (required, allowed besides the entity options)
    "sensor": ({"state_topic"}, {"state_topic", "value_template", "device_class", "options", "state_class",
                                 "unit_of_measurement", "expire_after", "force_update", "last_reset_value_template",
                                 "suggested_display_precision"}),
    "binary_sensor": ({"state_topic"}, {"state_topic", "value_template", "device_class", "payload_on",
                                        "payload_off", "expire_after", "force_update", "off_delay"}),
    "event": ({"state_topic", "event_types"}, {"state_topic", "event_types", "value_template", "device_class"}),
    "button": ({"command_topic"}, {"command_topic", "command_template", "payload_press", "retain",
                                   "device_class"}),
}
ENTITY_ID = re.compile(r"(?!.+__)(?!_)[\da-z_]+(?<!_)\.(?!_)[\da-z_]+(?<!_)")  # Home Assistant's valid_entity_id


def expand(d: Mapping[str, Any], table: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        full = table.get(k, k)
        assert full not in out, f"{k!r} and its long form both given"
        out[full] = v
    return out


def topic_errors(name: str, topic: Any, publish: bool) -> list[str]:
    if not isinstance(topic, str) or not topic or "\0" in topic or len(topic.encode()) > 65535:
        return [f"{name}: not a topic: {topic!r}"]
    if publish and ("+" in topic or "#" in topic):
        return [f"{name}: a wildcard in a publish topic: {topic!r}"]
    levels = topic.split("/")
    if any(("+" in lv and lv != "+") or ("#" in lv and lv != "#") for lv in levels) or "#" in levels[:-1]:
        return [f"{name}: a malformed wildcard: {topic!r}"]
    return []


def schema_errors(payload: Mapping[str, Any]) -> list[str]:
    """What Home Assistant's documented device-discovery schema says is wrong."""
    errors: list[str] = []
    root = expand(payload, ABBREVIATIONS)
    errors += [f"root: {k!r} is no shared option" for k in set(root) - ROOT_OPTIONS]
    errors += [f"root: {k!r} is required" for k in ("device", "origin", "components") if k not in root]
    dev = expand(root.get("device") or {}, DEVICE_ABBREVIATIONS)
    errors += [f"device: {k!r} is unknown" for k in set(dev) - DEVICE_OPTIONS]
    ids = dev.get("identifiers")
    if not (ids or dev.get("connections")) or not (isinstance(ids, str) or (
            isinstance(ids, list) and all(isinstance(i, str) for i in ids))):
        errors.append("device: needs identifiers (a string or a list of strings) or connections")
    errors += [f"device: {k} must be a string" for k, v in dev.items() if k not in ("identifiers", "connections")
               and not isinstance(v, str)]
    origin = expand(root.get("origin") or {}, ORIGIN_ABBREVIATIONS)
    errors += [f"origin: {k!r} is unknown" for k in set(origin) - set(ORIGIN_ABBREVIATIONS.values())]
    if not isinstance(origin.get("name"), str):
        errors.append("origin: name is required")
    errors += topic_errors("availability_topic", root.get("availability_topic", "x"), publish=False)
    if root.get("qos", 0) not in (0, 1, 2):
        errors.append("root: qos must be 0, 1 or 2")
    cmps = root.get("components")
    if not isinstance(cmps, dict) or not cmps:
        return [*errors, "components: a mapping of at least one component"]
    unique: set[str] = set()
    for cid, raw in cmps.items():
        if not re.fullmatch(r"[a-zA-Z0-9_-]+", cid):
            errors.append(f"{cid}: a component id is [a-zA-Z0-9_-]")
        c = expand(raw, ABBREVIATIONS)
        platform = c.get("platform")
        if platform not in PLATFORMS:
            errors.append(f"{cid}: platform {platform!r} is not one this checker knows (sensor, binary_sensor, "
                          "event, button)")
            continue
        required, allowed = PLATFORMS[platform]
        shared = {k for k in ("state_topic", "command_topic") if k in root}
        errors += [f"{cid}: {k!r} is required" for k in required - set(c) - shared]
        errors += [f"{cid}: {k!r} is unknown to {platform}" for k in set(c) - allowed - ENTITY_OPTIONS]
        if not isinstance(c.get("unique_id"), str) or c["unique_id"] in unique:
            errors.append(f"{cid}: an entity needs its own unique_id")
        unique.add(c.get("unique_id", ""))
        if "object_id" in c:  # deprecated by default_entity_id in 2025.10, gone in 2026.4
            errors.append(f"{cid}: object_id no longer sets the entity id (default_entity_id does)")
        if "default_entity_id" in c and not (ENTITY_ID.fullmatch(c["default_entity_id"])
                                             and c["default_entity_id"].startswith(f"{platform}.")):
            errors.append(f"{cid}: default_entity_id {c['default_entity_id']!r} is no {platform} entity id")
        for k in ("state_topic", "json_attributes_topic"):
            if k in c:
                errors += topic_errors(f"{cid}.{k}", c[k], publish=False)
        if "command_topic" in c:
            errors += topic_errors(f"{cid}.command_topic", c["command_topic"], publish=True)
        errors += [f"{cid}: {k} must be a string" for k in ("name", "icon", "value_template", "device_class",
                                                            "json_attributes_template", "payload_press",
                                                            "payload_on", "payload_off") if k in c
                   and not isinstance(c[k], str)]
        if platform == "sensor" and "options" in c:
            opts = c["options"]
            if c.get("device_class") != "enum" or not opts or not all(isinstance(o, str) for o in opts):
                errors.append(f"{cid}: options are a non-empty list of strings, with device_class enum")
            if {"state_class", "unit_of_measurement"} & set(c):
                errors.append(f"{cid}: an enum sensor has no state_class nor unit_of_measurement")
        if platform == "event" and not (isinstance(c.get("event_types"), list) and c["event_types"]
                                        and all(isinstance(t, str) for t in c["event_types"])):
            errors.append(f"{cid}: event_types is a non-empty list of strings")
        if "retain" in c and not isinstance(c["retain"], bool):
            errors.append(f"{cid}: retain is a boolean")
    return errors


def payload(*, commands: bool = False, lang: str = "en") -> dict[str, Any]:
    lines = catalogue.narrator().lines
    topic, body = ha.discovery(TID, manifests(), commands=commands, lang=lang, sw="0.1.0",
                               names=catalogue.page_games(lines))
    assert topic == f"homeassistant/device/{TID}/config"
    return dict(json.loads(body))


def components(p: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {cid: expand(c, ABBREVIATIONS) for cid, c in p["cmps"].items()}


# ------------------------------------------------ the template subset
class ToJson:
    """``| to_json``: Home Assistant's filter (compact JSON, UTF-8 kept)."""

    def __ror__(self, value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


SAFE = (ast.Expression, ast.IfExp, ast.Dict, ast.List, ast.Tuple, ast.Constant, ast.Name, ast.Load, ast.Attribute,
        ast.Call, ast.keyword, ast.Compare, ast.In, ast.NotIn, ast.Eq, ast.NotEq, ast.BoolOp, ast.And, ast.Or,
        ast.UnaryOp, ast.Not, ast.BinOp, ast.BitOr)


def render(template: str, message: bytes | str) -> str:
    """What Home Assistant renders for ``template`` over an MQTT payload
    (``value_json``: the payload parsed), for the subset the module docstring names."""
    value = eval(checked(template),  # noqa: S307 - the tree is checked
                 {"__builtins__": {}}, {"value_json": json.loads(message), "dict": dict, "to_json": ToJson()})
    return str(value)  # Jinja prints None as "None": Home Assistant's "no value"


@functools.cache
def checked(template: str) -> Any:
    """The template's expression, compiled once it is known to keep to the subset."""
    m = re.fullmatch(r"\{\{ (.*) \}\}", template, re.S)
    assert m, f"not one {{{{ expression }}}}: {template!r}"
    tree = ast.parse(m.group(1), mode="eval")
    for node in ast.walk(tree):
        assert isinstance(node, SAFE), f"{type(node).__name__} is outside the checked subset: {template!r}"
        if isinstance(node, ast.Name):
            assert node.id in ("value_json", "dict", "to_json"), node.id
        if isinstance(node, ast.Attribute):
            assert node.attr == "get", f".{node.attr}: only .get is in the subset"
        if isinstance(node, ast.BinOp):
            assert isinstance(node.right, ast.Name) and node.right.id == "to_json", "| is only | to_json"
    return compile(tree, "<template>", "eval")


def state_message(night: bool = False, **fields: Any) -> bytes:
    """A ``companion/<id>/state`` message as the link publishes it (docs/integrate/mqtt.md)."""
    state = {"table": TID, "game": "one-night", "step": "night" if night else "discussion", "waiting_for": [],
             "round": None, "totals": {"Aiko": 1, "Ben": 0, "Chie": 2}, "deadline": None if night else 1.8e9,
             "night": night, "lang": "en", "online": True}
    return json.dumps({**state, **fields}).encode()


def event_message(report: Report, seq: int = 1) -> bytes:
    """A ``companion/<id>/event`` message as the link publishes it (docs/integrate/mqtt.md)."""
    return json.dumps({"id": f"{TID}/e/{seq}.0", "table": TID, "t": 1.8e9, "event": report.event,
                       **report.fields}).encode()


def fire(template: str, message: bytes, event_types: list[str]) -> tuple[str, dict[str, Any]] | None:
    """What Home Assistant's MQTT event entity does with a message
    (homeassistant/components/mqtt/event.py): an empty rendering is ignored,
    else the JSON's ``event_type`` fires with the other keys as attributes."""
    out = render(template, message)
    if out in ("", "None", "{}"):
        return None
    attrs = json.loads(out)
    kind = str(attrs.pop("event_type"))
    assert kind in event_types, f"{kind!r} would be refused: not in event_types"
    return kind, attrs


# ------------------------------------------------ playouts of every game
def playout(game: type[Engine], n: int, seed: int, rules: tuple[str, ...] = (),
            late: Callable[[Any], None] | None = None, length: int = 600) -> tuple[set[str], list[Report]]:
    """One seeded game on the bare engine: each input drawn at random from
    every input the game knows (the perft's), the secret draws at random;
    ``back`` only where nothing else is taken.  The steps it passed, the TABLE reports it made."""
    rng = random.Random(f"ha:{game.game}:{n}:{rules}:{seed}")
    e = game(Setup(PLAYERS[:n], rules, {}))
    if late is not None:
        late(e)
    out = e.start()
    node = Node(e).after(Press("start"), e, out)
    reports, steps = [o for o in out if isinstance(o, Report)], {e.state.step}
    for _ in range(length):
        if e.finished:
            break
        legal = {"": e.legal(None), **{p: e.legal(p) for p in e.players}}
        candidates = [i for i in inputs(node, legal) if i != Press("back")]
        for d in node.draws:  # a deal at random, often: the verdicts hang on it
            value = [rng.randint(d.low, d.high) for _ in range(d.count)] if d.count else rng.randint(d.low, d.high)
            candidates += [Drawn(d.name, value)] * 20
        rng.shuffle(candidates)
        for inp in (*candidates, Press("back")):  # back only where nothing else goes on (a refused early tile)
            try:
                out = e.handle(inp)
            except Refusal:
                continue
            node = node.after(inp, e, out)
            reports += [o for o in out if isinstance(o, Report) and o.audience == "table"]
            steps.add(e.state.step)
            break
        else:
            break
    return steps, reports


# The set-ups the playouts take turns with: Seven Knights with and without its witch
# team (the cooperative rule's failed formations are its "nobody"), Demagogos near its
# end (a whole game is long), the others with 4 players.
SETUPS: dict[str, list[tuple[int, tuple[str, ...], Callable[[Any], None] | None]]] = {
    "seven-knights": [(5, (), None), (4, ("cooperative",), None)], "demagogos": [(6, (), two_vp_each)]}
FIRST, PLAYOUTS = 2, 150  # playouts per game: always, and at most


@functools.cache
def reached() -> dict[str, tuple[set[str], list[dict[str, Any]]]]:
    """By game: the steps its playouts passed, and its TABLE verdict events
    as the link publishes them — from a few seeded playouts, then the game's
    example scripts (the real table's event log: a Seven Knights formation
    that holds is rare in random play), then more playouts, until every
    verdict the game declares has fired (or the budget is spent)."""
    tpl, types = (components(payload())["verdict"][k] for k in ("value_template", "event_types"))
    out: dict[str, tuple[set[str], list[dict[str, Any]]]] = {}
    for game in GAMES:
        wanted, kinds = set(ha.event_types([manifest(game)])), set(ha.outcome_events([manifest(game)]))
        steps: set[str] = set()
        events: list[dict[str, Any]] = []
        fired_types: set[str] = set()

        def add(new: list[dict[str, Any]]) -> None:
            for e in new:
                if e["event"] in kinds:  # noqa: B023
                    events.append(e)  # noqa: B023
                    if (f := fire(tpl, json.dumps(e).encode(), types)) is not None:
                        fired_types.add(f[0])  # noqa: B023

        setups = SETUPS.get(game.game, [(max(game.min_players, min(game.max_players, 4)), (), None)])
        seeds = iter(range(PLAYOUTS))
        for seed in seeds:
            n, rules, late = setups[seed % len(setups)]
            passed, reports = playout(game, n, seed, rules, late)
            steps |= passed
            add([json.loads(event_message(r)) for r in reports])
            if seed + 1 == FIRST:
                for script in sorted([*example_scripts(f"{game.game}.yaml"),
                                      *example_scripts(f"{game.game}/*.yaml")]):
                    if wanted <= fired_types:
                        break
                    log = io.StringIO()
                    assert run_script(script, out=log) == 0
                    add([{"id": f"{TID}/e/{i}.0", "table": TID, **json.loads(line)}
                         for i, line in enumerate(log.getvalue().splitlines())])
            if seed + 1 >= FIRST and wanted <= fired_types:
                break
        out[game.game] = (steps, events)
    return out


# ================================================================== tests
def test_the_discovery_payload_is_valid_by_the_documented_schema() -> None:
    for commands in (False, True):
        for lang in ("en", "ja"):
            p = payload(commands=commands, lang=lang)
            assert schema_errors(p) == [], (commands, lang)
            assert set(p) >= {"dev", "o", "cmps"}
            expected = {"game": "sensor", "step": "sensor", "night": "binary_sensor", "verdict": "event",
                        **({b: "button" for b in ("next", "back", "repeat")} if commands else {})}
            assert {cid: c["platform"] for cid, c in components(p).items()} == expected


def test_the_schema_checker_finds_what_home_assistant_refuses() -> None:
    good = payload(commands=True)
    assert schema_errors(good) == []
    cases: list[tuple[Callable[[dict[str, Any]], None], str]] = [
        (lambda p: p.pop("o"), "'origin' is required"),
        (lambda p: p["cmps"]["night"].pop("p"), "platform None"),
        (lambda p: p["cmps"]["game"].pop("state_topic"), "'state_topic' is required"),
        (lambda p: p["cmps"]["verdict"].pop("event_types"), "'event_types' is required"),
        (lambda p: p["cmps"]["step"].update(unit_of_measurement="x"), "no state_class nor unit"),
        (lambda p: p["cmps"]["next"].update(command_topic="companion/+/command"), "wildcard"),
        (lambda p: p["cmps"]["game"].update(unique_id=p["cmps"]["step"]["unique_id"]), "own unique_id"),
        (lambda p: p["cmps"]["game"].update(colour="red"), "'colour' is unknown"),
        (lambda p: p["dev"].pop("ids"), "needs identifiers"),
        (lambda p: p["cmps"]["night"].update(object_id="night"), "object_id no longer"),
    ]
    for spoil, said in cases:
        bad = json.loads(json.dumps(good))
        spoil(bad)
        assert any(said in e for e in schema_errors(bad)), (said, schema_errors(bad))


def test_discovery_topics_availability_and_buttons_follow_the_table_topics() -> None:
    p = payload(commands=True)
    assert (p["availability_topic"], p["payload_available"], p["payload_not_available"]) == (
        f"companion/{TID}/status", "online", "offline")
    c = components(p)
    assert {c[k]["state_topic"] for k in ("game", "step", "night")} == {f"companion/{TID}/state"}
    assert c["verdict"]["state_topic"] == f"companion/{TID}/event"
    for b in ("next", "back", "repeat"):
        assert (c[b]["command_topic"], c[b]["payload_press"], c[b]["retain"]) == (
            f"companion/{TID}/command", b, False)
    assert not {"next", "back", "repeat"} & set(components(payload(commands=False)))
    assert ha.entity_ids(TID, commands=True) == {k: v["default_entity_id"] for k, v in c.items()}


def test_the_step_options_hold_every_step_the_games_reach_and_the_tables_phases() -> None:
    options = components(payload())["step"]["options"]
    assert len(options) == len(set(options))
    steps = set().union(*(s for s, _ in reached().values()))
    assert steps >= {"quest", "night", "discussion", "vote", "girl", "cave"}  # the playouts went far
    assert steps <= set(options), steps - set(options)
    assert set(options) == set(Table.PHASES) | {s for g in GAMES for s in g.STEPS}


def test_every_event_type_is_reached_and_rendered_from_a_published_event() -> None:
    c = components(payload())["verdict"]
    types, tpl = c["event_types"], c["value_template"]
    assert len(types) == len(set(types))
    seen: dict[str, dict[str, Any]] = {}
    for game in GAMES:
        fired_here = {}
        for e in reached()[game.game][1]:
            if (f := fire(tpl, json.dumps(e).encode(), types)) is not None:
                fired_here.setdefault(f[0], f[1])
        assert set(ha.event_types([manifest(game)])) <= set(fired_here), (game.game, set(ha.event_types([manifest(game)])) - set(fired_here))
        seen |= fired_here
    assert set(seen) == set(types)
    assert seen["werewolf"]["game"] == "one-night" and "winners" in seen["werewolf"]
    assert seen["knights"]["game"] == "seven-knights" and "tiles" in seen["knights"]
    assert seen["game_over"]["totals"] and seen["game_over"]["winners"]


def test_events_that_are_no_verdict_fire_nothing() -> None:
    c = components(payload())["verdict"]
    for event, fields in (("round_scored", {"game": "seven-knights", "round": 1, "points": {}, "totals": {}}),
                          ("dt_exit", {"player": "Aiko", "vp": 5, "place": 1})):
        assert fire(c["value_template"], event_message(Report(event, fields)), c["event_types"]) is None


def test_the_state_templates_read_the_state_message() -> None:
    c = components(payload(lang="ja"))
    day, night, idle = state_message(), state_message(night=True), state_message(game=None, step="idle")
    assert render(c["night"]["value_template"], night) == "ON"
    assert render(c["night"]["value_template"], day) == "OFF"
    assert render(c["step"]["value_template"], night) == "night"
    assert render(c["step"]["value_template"], idle) == "idle"
    assert render(c["step"]["value_template"], state_message(step="a-newer-step")) == "None"  # unknown, no error
    assert render(c["game"]["value_template"], day) == "One Night Werewolf"  # the table speaks English now
    assert render(c["game"]["value_template"], state_message(lang="ja")) == "ワンナイト人狼"
    assert render(c["game"]["value_template"], state_message(lang="xx")) == "ワンナイト人狼"  # the discovery's
    assert render(c["game"]["value_template"], idle) == "None"
    attrs = json.loads(render(c["game"]["json_attributes_template"], day))
    assert attrs == {"round": None, "waiting_for": [], "totals": {"Aiko": 1, "Ben": 0, "Chie": 2},
                     "deadline": 1.8e9}
    assert json.loads(render(c["verdict"]["json_attributes_template"], day)) == {
        "totals": {"Aiko": 1, "Ben": 0, "Chie": 2}}


def test_the_components_are_named_in_the_tables_language() -> None:
    en, ja = components(payload(lang="en")), components(payload(lang="ja"))
    assert [en[k]["name"] for k in ("game", "step", "night", "verdict")] == ["Game", "Step", "Night", "Verdict"]
    assert [ja[k]["name"] for k in ("game", "step", "night", "verdict")] == ["ゲーム", "進行", "夜", "勝敗"]
    assert payload(lang="ja")["dev"]["name"] == f"ゲームテーブル {TID}"
    assert components(payload(lang="xx"))["night"]["name"] == "Night"  # a language without names: English
    # the entity ids do not change with the language: an automation names them
    assert {k: v["default_entity_id"] for k, v in en.items()} == {k: v["default_entity_id"] for k, v in ja.items()}
    _, body = ha.discovery(TID, manifests(), commands=False, lang="ja", names=None)
    assert render(components(json.loads(body))["game"]["value_template"], state_message()) == "one-night"  # ids


def test_every_template_keeps_to_the_checked_subset() -> None:
    for c in components(payload(commands=True)).values():
        for key in (k for k in c if k.endswith("_template")):
            checked(c[key])  # raises where a template leaves the subset render evaluates
    with pytest.raises(AssertionError, match="outside the checked subset"):
        checked("{{ value_json.get('step')[0] }}")


def test_the_templates_render_alike_in_jinja_where_it_is_installed() -> None:
    """Where Jinja2 is installed (not in this venv: run once with a system
    Python's Jinja2 3.1 when this was written, and it passed), the subset's
    evaluator and Jinja's sandbox — Home Assistant's kind — render every
    template alike over the state messages and every verdict event reached."""
    jinja = pytest.importorskip("jinja2.sandbox", reason="Jinja2 is not installed: render() stands in for it")
    env = jinja.ImmutableSandboxedEnvironment()
    env.filters["to_json"] = lambda v: ToJson().__ror__(v)
    messages = [state_message(), state_message(night=True), state_message(game=None, step="idle"),
                state_message(lang="ja"), state_message(step="zz")]
    events = [json.dumps(e).encode() for _, evs in reached().values() for e in evs]
    for cid, c in components(payload(commands=True, lang="ja")).items():
        for key in (k for k in c if k.endswith("_template")):
            for m in events if (cid, key) == ("verdict", "value_template") else messages:
                assert env.from_string(c[key]).render(value_json=json.loads(m), value=m.decode()) == render(c[key], m)


def test_a_table_id_that_is_no_topic_level_is_refused() -> None:
    for bad in ("", "Table-1", "a/b", "t+", "#", "-t", "x" * 33):
        with pytest.raises(ValueError, match="not a table id"):
            ha.discovery(bad, manifests(), commands=False, lang="en")


def test_entity_ids_are_valid_for_any_table_id() -> None:
    for tid in ("table-1", "t", "a--b-", "0", "x" * 32):
        for eid in ha.entity_ids(tid, commands=True).values():
            assert ENTITY_ID.fullmatch(eid), eid


def test_home_assistant_online_asks_for_the_discovery_again() -> None:
    assert ha.HA_STATUS_TOPIC == "homeassistant/status"
    assert ha.on_ha_status(b"online") and ha.on_ha_status("online\n")
    assert not ha.on_ha_status(b"offline") and not ha.on_ha_status(b"") and not ha.on_ha_status(b"\xff")


def test_the_discovery_is_small_and_without_games_has_no_verdict_entity() -> None:
    assert len(ha.discovery(TID, manifests(), commands=True, lang="ja", names=catalogue.page_games(
        catalogue.narrator().lines))[1]) < 16 * 1024  # far under the 64 KiB a venue takes (the MQTT contract)
    _, body = ha.discovery(TID, [], commands=False, lang="en")
    p = json.loads(body)
    assert schema_errors(p) == [] and set(p["cmps"]) == {"game", "step", "night"}


def test_finding_home_assistant_reads_the_games_manifests() -> None:
    """Home Assistant read each engine's ``STEPS`` and ``outcomes`` while the
    outbox and the venue read the manifests: two readings of one game.  Now
    it is handed the manifests, as they are."""
    games = manifests()
    cmps = json.loads(ha.discovery(TID, games, commands=False, lang="en")[1])["cmps"]
    assert cmps["step"]["options"] == list(dict.fromkeys((*Table.PHASES, *(s for m in games for s in m.steps))))
    assert set(cmps["verdict"]["event_types"]) == {v for m in games for o in m.outcomes
                                                   for v in (o.values if o.field else (o.event,))}


def test_forget_is_the_empty_config() -> None:
    assert ha.forget(TID) == [(f"homeassistant/device/{TID}/config", b"")]


def test_two_games_reading_one_event_differently_is_refused() -> None:
    from companion.core.engine import Outcome

    class Other(SevenKnights):
        game = "other"
        outcomes = (Outcome("formation", "winner", ("a",)),)

    from companion.core.manifest import Manifest

    seven = manifest(SevenKnights)
    with pytest.raises(ValueError, match="formation"):
        ha.discovery(TID, [seven, Manifest(Other, seven.events, "teams")], commands=False, lang="en")


# ------------------------------------------------ the docs' automation
def home_assistant_states(template: str, messages: list[tuple[str, bytes]]) -> list[str]:
    """The night sensor's state after each message, as Home Assistant keeps
    it: ``unavailable`` until the status says online (availability), then
    the value template's ON/OFF as ``on``/``off``."""
    states, available, value = [], False, "unknown"
    for topic, body in messages:
        if topic.endswith("/status"):
            available = body == b"online"
        else:
            out = render(template, body)
            value = {"ON": "on", "OFF": "off", "None": "unknown"}.get(out, value)
        states.append(value if available else "unavailable")
    return states


def fired(automation: Mapping[str, Any], entity: str, states: list[str]) -> list[str]:
    """Home Assistant's state trigger: on each change of ``entity``'s state
    matching ``from``/``to``, the trigger's id."""
    out, old = [], "unavailable"
    for new in states:
        if new != old:
            for t in automation["triggers"]:
                ids = t["entity_id"] if isinstance(t["entity_id"], list) else [t["entity_id"]]
                if (t["trigger"] == "state" and entity in ids
                        and t.get("to", new) == new and t.get("from", old) == old):
                    out.append(t["id"])
        old = new
    return out


def test_the_readme_automation_dims_at_night_and_brightens_at_morning() -> None:
    automation = yaml.safe_load(AUTOMATION.read_text(encoding="utf-8"))
    night = components(payload())["night"]
    entity = night["default_entity_id"]
    assert [t["entity_id"] for t in automation["triggers"]] == [entity, entity]  # the id Home Assistant gives it
    status = f"companion/{TID}/status"
    messages = [(status, b"online"), (night["state_topic"], state_message()),
                (night["state_topic"], state_message(night=True)),
                (night["state_topic"], state_message(night=True)),  # the same night again: no new trigger
                (night["state_topic"], state_message()), (status, b"offline"), (status, b"online")]
    states = home_assistant_states(night["value_template"], messages)
    assert states == ["unknown", "off", "on", "on", "off", "unavailable", "off"]
    assert fired(automation, entity, states) == ["night", "morning"]
    # what each trigger does: the night dims, the morning brightens
    levels = {}
    for option in automation["actions"][0]["choose"]:
        (condition,) = option["conditions"]
        (action,) = option["sequence"]
        assert action["action"] == "light.turn_on"
        levels[condition["id"]] = action["data"]["brightness_pct"]
    assert levels["night"] < levels["morning"]


def test_the_docs_quote_the_automation() -> None:
    page = (ROOT / "docs" / "integrate" / "homeassistant.md").read_text(encoding="utf-8")
    assert AUTOMATION.read_text(encoding="utf-8").strip() in page


# ------------------------------------------------ companion mqtt forget
class Listener:
    """A paho client subscribed to the discovery topics, keeping what arrives."""

    def __init__(self, broker: Any, topic: str = "homeassistant/device/+/config") -> None:
        self.got: list[tuple[str, bytes, bool]] = []
        self.arrived = threading.Condition()
        self.client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=f"ha-listener-{random.random()}")
        self.client.on_message = self._on_message
        subscribed = threading.Event()
        self.client.on_subscribe = lambda *_: subscribed.set()
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        self.client.subscribe(topic, qos=1)
        assert subscribed.wait(5)

    def _on_message(self, _c: Any, _u: Any, msg: Any) -> None:
        with self.arrived:
            self.got.append((msg.topic, msg.payload, bool(msg.retain)))
            self.arrived.notify_all()

    def wait(self, n: int, timeout_s: float = 5.0) -> list[tuple[str, bytes, bool]]:
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.got) >= n, timeout_s)
            return list(self.got)

    def close(self) -> None:
        self.client.disconnect()  # first: it wakes the network loop, which then stops at once
        self.client.loop_stop()


def publish_discovery(broker: Any) -> bytes:
    """The discovery as the link publishes it: QoS 1, not retained."""
    topic, body = ha.discovery(TID, manifests(), commands=False, lang="en")
    pub = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id="ha-link")
    pub.connect(broker.host, broker.port)
    pub.loop_start()
    pub.publish(topic, body, qos=1, retain=False).wait_for_publish(5)
    pub.disconnect()
    pub.loop_stop()
    return body


def test_forget_removes_the_device_on_a_real_broker(broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    listener = Listener(broker)
    try:
        body = publish_discovery(broker)
        assert listener.wait(1) == [(f"homeassistant/device/{TID}/config", body, False)]
        code = cli.main(["mqtt", "forget", "--mqtt", broker.address, "--table-id", TID])
        out = capsys.readouterr()
        assert code == 0, out.err
        assert out.err == "" and len(out.out.strip().splitlines()) == 1 and TID in out.out
        got = listener.wait(2)
        assert got[1] == (f"homeassistant/device/{TID}/config", b"", False)  # Home Assistant removes the device
    finally:
        listener.close()
    late = Listener(broker)  # nothing is left retained: a Home Assistant starting later sees no config
    try:
        assert late.wait(1, timeout_s=0.5) == []
    finally:
        late.close()


def test_forget_reads_the_broker_and_table_from_the_config(broker: Any, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    listener = Listener(broker)
    try:
        settings = {"broker": broker.address, "table_id": "from-config"}
        from mqtt import forget

        args = cli_args(["mqtt", "forget"])
        assert forget.run(args, settings) == 0, capsys.readouterr().err
        assert listener.wait(1)[0][:2] == ("homeassistant/device/from-config/config", b"")
    finally:
        listener.close()


def cli_args(argv: list[str]) -> Any:
    """The namespace ``companion`` parses for ``argv`` (without running it)."""
    import argparse

    from mqtt import forget

    p = argparse.ArgumentParser()
    forget.configure_parser(p)
    return p.parse_args(argv[1:])


@pytest.mark.parametrize("argv, said", [
    (["--mqtt", "127.0.0.1:{closed}", "--table-id", TID], "cannot reach the broker at 127.0.0.1:"),
    (["--mqtt", "127.0.0.1:99999", "--table-id", TID], "must be HOST or HOST:PORT"),
    (["--mqtt", "127.0.0.1:1883", "--table-id", "Table_1"], "the table id must be"),
    (["--table-id", TID], "no broker"),
])
def test_forget_errors_are_one_line(argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.mosquitto import free_port

    argv = [a.replace("{closed}", str(free_port())) for a in argv]  # a free port: nobody listens there
    code = cli.main(["mqtt", "forget", *argv, "--config", str(ROOT / "config" / "companion.yaml")])
    out = capsys.readouterr()
    assert code != 0
    assert out.out == "" and len(out.err.strip().splitlines()) == 1, out.err
    assert said in out.err and "Traceback" not in out.err


def test_forget_says_when_the_broker_refuses_us(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.mosquitto import Broker

    b = Broker(tmp_path / "strict", extra=["allow_anonymous false"]).start()
    try:
        code = cli.main(["mqtt", "forget", "--mqtt", b.address, "--table-id", TID])
    finally:
        b.stop()
    err = capsys.readouterr().err
    assert code != 0 and len(err.strip().splitlines()) == 1 and "refused" in err, err


def test_forget_reads_the_mqtt_settings_as_the_link_does(tmp_path: Path) -> None:
    """D6: forget builds the link's own ``LinkConfig`` from ``mqtt:`` (one
    reading of username, password_file and tls), the command line over it."""
    from companion.app import config
    from mqtt import forget
    from mqtt.link import LinkConfig

    (tmp_path / "pw").write_text("s3cret\n", encoding="utf-8")
    p = tmp_path / "c.yaml"
    p.write_text(f"mqtt:\n  broker: b.local\n  table_id: t-9\n  username: table\n  password_file: {tmp_path / 'pw'}\n"
                 f"  tls: {{ca_file: {tmp_path / 'ca.pem'}}}\n", encoding="utf-8")
    cfg = config.load([p])
    assert forget.target(cli_args(["mqtt", "forget"]), cfg["mqtt"]) == LinkConfig.from_cfg(cfg)[0]
    assert forget.target(cli_args(["mqtt", "forget", "--mqtt", "other:1884", "--table-id", TID]), cfg["mqtt"]) == \
        LinkConfig(TID, "other", 1884, "table", "s3cret", cfg["mqtt"]["tls"])


@needs_mosquitto_passwd
def test_forget_logs_in_with_the_password_file(tmp_path: Path, readable: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from mqtt import forget

    b = password_broker(tmp_path, readable)
    try:
        (tmp_path / "pw").write_text(PASSWORD + "\n", encoding="utf-8")
        settings = {"broker": b.address, "table_id": TID, "username": USER, "password_file": str(tmp_path / "pw")}
        assert forget.run(cli_args(["mqtt", "forget"]), settings) == 0, capsys.readouterr().err
        settings["password_file"] = str(tmp_path / "missing")
        assert forget.run(cli_args(["mqtt", "forget"]), settings) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "cannot read password_file" in err and str(tmp_path / "missing") in err, err
    finally:
        b.stop()
