"""Config: defaults, and every bad file refused with its file and line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from companion.app import config
from companion.app.config import ConfigError
from conftest import example_script

ROOT = Path(__file__).resolve().parent.parent


def write(tmp_path: Path, text: str | bytes, name: str = "c.yaml") -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def test_shipped_config_equals_schema_defaults() -> None:
    cfg = config.load([ROOT / "config" / "companion.yaml"])
    expected = config.defaults()
    assert Path(cfg["reader"]["tag_map"]) == ROOT / "config" / "tags.yaml"
    cfg["reader"]["tag_map"] = expected["reader"]["tag_map"]
    assert cfg == expected


@pytest.mark.parametrize("text, line, words", [
    ("voice:\n  rate: fast\n", 2, "voice.rate must be a number"),
    ("voice:\n  rat: 1\n", 2, "unknown setting 'voice.rat'"),
    ("language: fr\n", 1, "must be one of en, ja"),
    ("games:\n  one-night:\n    jitter_s: [3, 1]\n", 3, "min <= max"),
    ("voice:\n  rate: [1\n", 3, "broken YAML"),
    ("panel:\n  pins:\n    next: 40\n", 3, "between 0 and 27"),
    ("players:\n  names: {red: Aki Tanaka}\n", 2, "lower-case"),
    ("language: en\nlanguage: ja\n", 2, "given twice"),
    ("- just\n- a list\n", 1, "must be a mapping"),
    ("voice:\n\trate: 1\n", 2, "broken YAML"),
    ("games:\n  one-night:\n    masking: 1\n", 3, "true or false"),
])
def test_bad_setting_names_file_line_and_problem(tmp_path: Path, text: str, line: int, words: str) -> None:
    p = write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        config.load([p])
    assert e.value.file == str(p)
    assert e.value.line == line
    assert words in str(e.value)
    assert str(e.value).startswith(f"{p}:{line}: ")


def test_every_switch_reads_a_quoted_word_as_its_bare_yaml_boolean(tmp_path: Path) -> None:
    """D7: one switch check for the whole config (core settings): the
    reader's beep, One Night's masking and mqtt's switches alike."""
    p = write(tmp_path, "reader:\n  beep: 'on'\ngames:\n  one-night:\n    masking: \"off\"\n"
                        "mqtt:\n  commands: 'yes'\n  homeassistant: \"OFF\"\n")
    cfg = config.load([p])
    got = (cfg["reader"]["beep"], cfg["games"]["one-night"]["masking"], cfg["mqtt"]["commands"],
           cfg["mqtt"]["homeassistant"])
    assert got == (True, False, True, False) and all(type(v) is bool for v in got)


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    p = write(tmp_path, "language: en\nplayers:\n  names: {red: \xe9}\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8") as e:
        config.load([p])
    assert e.value.line == 3


def test_huge_file_refused_before_parsing(tmp_path: Path) -> None:
    p = write(tmp_path, "# " + "x" * (config.MAX_FILE_BYTES + 10) + "\n")
    with pytest.raises(ConfigError, match="bytes"):
        config.load([p])


def test_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        config.load([tmp_path / "nope.yaml"])


def test_later_files_and_overrides_win(tmp_path: Path) -> None:
    a = write(tmp_path, "language: ja\nvoice: {rate: 120}\n", "a.yaml")
    b = write(tmp_path, "voice: {rate: 180}\n", "b.yaml")
    cfg = config.load([a, b], {"voice": {"volume": 0.5}})
    assert (cfg["language"], cfg["voice"]["rate"], cfg["voice"]["volume"]) == ("ja", 180, 0.5)


def test_bad_override_is_refused_like_a_file() -> None:
    with pytest.raises(ConfigError, match="overrides"):
        config.load([], {"voice": {"rate": "fast"}})


def test_tag_map_relative_to_the_file_that_sets_it(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    p = write(tmp_path, "reader: {tag_map: sub/t.yaml}\n")
    assert config.load([p])["reader"]["tag_map"] == str(tmp_path / "sub" / "t.yaml")


def test_tag_map_loads_and_normalises(tmp_path: Path) -> None:
    p = write(tmp_path, "04:a1:b2:c3: skb/knight/1\n04A1B2C4: player/aki\n")
    assert config.load_tag_map(p, ["aki"]) == {"04A1B2C3": "skb/knight/1", "04A1B2C4": "player/aki"}


@pytest.mark.parametrize("text, line, words", [
    ("04A1B2C3: skb/knight/9\n", 1, "not a known tag identity"),
    ("nothex!: skb/knight/1\n", 1, "not a tag UID"),
    ("04A1B2C3: skb/knight/1\n04a1b2c3: skb/knight/2\n", 2, "mapped twice"),
    ("[1, 2]\n", 1, "mapping UID: identity"),
])
def test_bad_tag_map(tmp_path: Path, text: str, line: int, words: str) -> None:
    p = write(tmp_path, text, "tags.yaml")
    with pytest.raises(ConfigError, match=words) as e:
        config.load_tag_map(p)
    assert e.value.line == line


def test_missing_tag_map_is_empty(tmp_path: Path) -> None:
    assert config.load_tag_map(tmp_path / "none.yaml") == {}


def test_panel_pin_defaults_match_the_panel() -> None:
    from dataclasses import asdict

    from hardware.panel import PanelPins

    assert config.defaults()["panel"]["pins"] == asdict(PanelPins())


def test_reader_defaults_match_the_nfc_reader() -> None:
    from hardware.nfc_reader import NfcConfig

    reader = config.defaults()["reader"]
    nfc = NfcConfig.from_mapping(reader)
    assert (list(nfc.targets), nfc.release_misses, nfc.debounce_s, nfc.beep) == (
        reader["targets"], reader["release_misses"], reader["debounce_s"], reader["beep"])
    assert NfcConfig.from_mapping({}) == nfc


@pytest.mark.parametrize("value", ["null", "~", "'null'", ""])
def test_voice_player_null_is_yaml_null_or_the_word(tmp_path: Path, value: str) -> None:
    """`player: null` (as the docs and the config say) was once refused as None."""
    cfg = config.load([write(tmp_path, f"voice:\n  player: {value}\n")])
    assert cfg["voice"]["player"] == "null"


def test_voice_player_other_values_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        config.load([write(tmp_path, "voice:\n  player: pulse\n")])
    assert "c.yaml:2" in str(exc.value) and "aplay, null" in str(exc.value)


def test_shipped_config_comments_every_setting() -> None:
    """Every setting in config/companion.yaml says what it does
    (the panel's pin numbers share the comment of `pins:`)."""
    uncommented = []
    under_pins = False
    for line in (ROOT / "config" / "companion.yaml").read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("pins:"):
            under_pins = True
        elif under_pins and line.startswith("    "):
            continue
        else:
            under_pins = False
        is_section = stripped.endswith(":")  # a heading like `reader:`, `games:`
        if not is_section and "#" not in line:
            uncommented.append(stripped)
    assert uncommented == []


def test_bug_the_shipped_defaults_are_found_from_the_moved_config_module() -> None:
    """Regression: after the layout move SHIPPED pointed at companion/config/, so a
    checkout's commands read no shipped file (found by the web pages' helper)."""
    assert config.shipped_paths() == [Path(__file__).resolve().parents[1] / "config" / "companion.yaml"]


# ------------------------------------------------ one schema, built from parts
def test_two_panel_pins_on_one_gpio_are_refused_at_load_with_the_line(tmp_path: Path) -> None:
    """The panel's own rule (a GPIO each), run by the schema once every file is
    merged: the line named is that of the setting that made the clash."""
    p = write(tmp_path, "panel:\n  pins:\n    next: 27\n")  # back is on GPIO27 by default
    with pytest.raises(ConfigError) as e:
        config.load([p])
    assert str(e.value) == f"{p}:3: panel.pins.next and panel.pins.back are both GPIO27: each needs a pin of its own"


def test_a_pin_clash_made_by_a_later_file_names_that_file(tmp_path: Path) -> None:
    a = write(tmp_path, "panel: {pins: {next: 23}}\n", "a.yaml")
    b = write(tmp_path, "language: en\npanel:\n  pins:\n    error: 23\n", "b.yaml")
    with pytest.raises(ConfigError) as e:
        config.load([a, b])
    assert (e.value.file, e.value.line) == (str(b), 4)
    assert "panel.pins.next and panel.pins.error are both GPIO23" in str(e.value)
    moved = write(tmp_path, "panel: {pins: {next: 23, back: 24}}\n", "c.yaml")
    assert config.load([moved, write(tmp_path, "panel: {pins: {back: 17}}\n", "d.yaml")])["panel"]["pins"] == {
        **config.defaults()["panel"]["pins"], "next": 23, "back": 17}  # swapped pins are no clash


def test_a_table_scripts_pin_clash_names_the_script_line(tmp_path: Path) -> None:
    from companion.app.simulate import load_script

    p = write(tmp_path, "config:\n  panel:\n    pins: {ok: 5}\nsteps: []\n", "s.yaml")
    with pytest.raises(ConfigError) as e:
        load_script(p)
    assert (e.value.file, e.value.line) == (str(p), 3) and "panel.pins.ready and panel.pins.ok" in str(e.value)


@pytest.mark.parametrize("section, raw", [
    ("reader", {"poll_s": 0}), ("reader", {"targets": ["106X"]}), ("reader", {"device": ""}),
    ("reader", {"retry_s": [5, 1]}), ("reader", {"release_misses": 0}), ("reader", {"beep": "maybe"}),
    ("panel", {"pins": {"start": 4}}), ("panel", {"pins": {"ok": 40}}), ("panel", {"hold_back_s": 0}),
    ("panel", {"pins": {"next": 22}}),
])
def test_a_device_built_from_raw_values_says_what_the_config_file_says(tmp_path: Path, section: str,
                                                                      raw: dict) -> None:
    """One rule, one text: a device built directly (tests, tools) refuses a bad
    value in the very words a config file gets after its file:line."""
    from hardware.nfc_reader import NfcConfig
    from hardware.panel import PanelConfig

    build = NfcConfig.from_mapping if section == "reader" else PanelConfig.from_dict
    with pytest.raises(ValueError) as raw_error:
        build(raw)
    p = write(tmp_path, yaml.safe_dump({section: raw}, default_flow_style=True))
    with pytest.raises(ConfigError) as file_error:
        config.load([p])
    assert str(raw_error.value) == file_error.value.problem


def test_parts_built_from_a_loaded_config_are_not_checked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader checked everything once; the reader and the panel read the
    checked values (a second check would be a second place for each rule)."""
    from companion.app import wiring
    from companion.core import settings

    cfg = config.load([], {"reader": {"backend": "nfc", "poll_s": 0.2}, "panel": {"backend": "mock"}})

    def no_second_check(*args: object, **kwargs: object) -> None:
        raise AssertionError("a device checked its settings again")

    monkeypatch.setattr(settings, "checked", no_second_check)
    reader = wiring.make_reader(cfg, simulate=False)
    assert reader.config.poll_s == 0.2 and reader.supervisor.backoff.max_s == 30.0
    panel = wiring._default_panel(cfg)(lambda name: None)
    try:
        assert panel.pins.back == cfg["panel"]["pins"]["back"]
    finally:
        panel.close()


def test_each_game_declares_its_own_section() -> None:
    """Adding a game is one folder and one line in GAMES: its settings come with it."""
    from companion.games import GAMES

    assert {g: s for g, s in config.SCHEMA["games"].items()} == {cls.game: cls.settings for cls in GAMES
                                                                  if cls.settings}
    assert set(config.SCHEMA["games"]) == {"seven-knights", "one-night", "madness-hour"}


# Private messages, scores and pages find a seat by its name, so two
# seats answering to one name would mix them.  Names are lower-case only, so comparing
# them as written is comparing them case-insensitively.
@pytest.mark.parametrize("text, line, seats", [
    ("players:\n  names: {red: blue}\n", 2, ("red", "blue")),  # blue's own name, blue still a seat
    ("players:\n  names: {red: aki, green: aki}\n", 2, ("red", "green")),
    ("players:\n  extra: [pink]\n  names:\n    red: pink\n", 4, ("red", "pink")),  # an extra player's name
    ("players:\n  names: {red: pink}\n  extra: [pink]\n", 3, ("red", "pink")),  # the line set last
    ("players:\n  names: {red: blue, blue: ben}\n", 2, ("red", "blue")),  # another seat's colour, renamed
    ("players:\n  extra: [blue]\n", 2, ("blue",)),  # a colour's card already
    ("players:\n  extra: [pink, pink]\n", 2, ("pink",)),
])
def test_two_seats_with_one_name_are_refused_naming_both(tmp_path: Path, text: str, line: int,
                                                                seats: tuple[str, ...]) -> None:
    p = write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        config.load([p])
    assert str(e.value).startswith(f"{p}:{line}: players."), e.value
    for seat in seats:
        assert seat in e.value.problem


def test_a_seat_may_keep_its_own_colour_as_its_name(tmp_path: Path) -> None:
    cfg = config.load([write(tmp_path, "players:\n  names: {red: red, blue: aki}\n  extra: [pink]\n")])
    assert cfg["players"] == {"names": {"red": "red", "blue": "aki"}, "extra": ["pink"]}


def test_the_six_player_demagogos_with_a_colliding_name_is_refused_at_load(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from companion.app.cli import main

    lines = example_script("demagogos/6p.yaml").read_text().splitlines()
    at = lines.index(next(s for s in lines if s.startswith("title:"))) + 1
    lines[at:at] = ["config:", "  players: {names: {red: blue}}"]
    p = write(tmp_path, "\n".join(lines) + "\n", "6p.yaml")
    assert main(["simulate", str(p)]) == 2  # a bad setting
    out = capsys.readouterr()
    assert out.err.startswith(f"companion: {p}:{at + 2}: players.names "), out.err
    assert "red" in out.err and "blue" in out.err and "Traceback" not in out.err
    assert '"event"' not in out.out  # not one step was played


def _tree(node: yaml.Node, seen: set[int] | None = None) -> object:
    """A node tree as (tag, line, value) all the way down: what validation reads and names
    (a node met again — an alias, which the config refuses — only by its place)."""
    seen = set() if seen is None else seen
    if id(node) in seen:
        return ("alias", node.start_mark.line)
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        return (node.tag, node.start_mark.line, [(_tree(k, seen), _tree(v, seen)) for k, v in node.value])
    if isinstance(node, yaml.SequenceNode):
        return (node.tag, node.start_mark.line, [_tree(v, seen) for v in node.value])
    return (node.tag, node.start_mark.line, node.value)


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
def test_settings_files_are_read_by_libyaml_with_the_lines_pyyaml_gives_them() -> None:
    """libyaml composes a settings file in a fraction of PyYAML's time (each start reads
    two); its tree must be PyYAML's, line for line, so every `file:line` a check names
    is the same — the shipped files and every file of the bad-files corpus it accepts."""
    root = Path(__file__).resolve().parent.parent
    files = [*sorted((root / "config").glob("*.yaml")), *sorted((root / "qa/reliability/corpus").rglob("*.yaml"))]
    compared = 0
    for path in files:
        if not path.is_file():
            continue
        try:
            text = path.read_bytes().decode("utf-8")
            fast = yaml.compose(text, Loader=yaml.CSafeLoader)
        except (UnicodeDecodeError, yaml.YAMLError, RecursionError):
            continue  # refused: read again by PyYAML for its words (the bad-files tests hold those)
        assert config.LOADER is yaml.CSafeLoader
        slow = yaml.compose(text, Loader=yaml.SafeLoader)
        assert (fast is None) == (slow is None), path
        if fast is not None:
            assert _tree(fast) == _tree(slow), path
            compared += 1
    assert compared >= 20
