"""``companion update`` and ``companion update --rollback``: they hand over to
the installer (systemd/install.sh, systemd/release.sh; tested in
tests/test_release_update.py) with the right checkout, as root only."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.app import cli, update_cmd


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """An installed prefix whose current release came from a checkout; exec recorded, not done."""
    checkout = tmp_path / "companion"
    (checkout / "systemd").mkdir(parents=True)
    (checkout / "systemd" / "install.sh").write_text("")
    release = tmp_path / "opt" / "releases" / "r1"
    (release / "systemd").mkdir(parents=True)
    (release / "systemd" / "release.sh").write_text("")
    (release / ".source").write_text(f"{checkout}\n")
    (tmp_path / "opt" / "current").symlink_to("releases/r1")
    monkeypatch.setenv("COMPANION_PREFIX", str(tmp_path / "opt"))
    monkeypatch.setattr(update_cmd.os, "geteuid", lambda: 0)
    monkeypatch.setattr(update_cmd, "own_release", lambda: release)
    ran: list[list[str]] = []
    monkeypatch.setattr(update_cmd.os, "execvp", lambda _f, argv: ran.append(list(argv)))
    return {"ran": ran, "checkout": checkout, "release": release, "prefix": tmp_path / "opt"}


def test_update_installs_the_checkout_the_current_release_came_from(layout: dict) -> None:
    cli.main(["update", "--no-voice"])
    assert layout["ran"] == [["bash", f"{layout['checkout']}/systemd/install.sh", "--no-voice"]]


def test_rollback_goes_through_the_current_releases_installer(layout: dict) -> None:
    cli.main(["update", "--rollback"])
    assert layout["ran"] == [["bash", f"{layout['prefix']}/current/systemd/release.sh", "rollback"]]


def test_only_root_may_switch_releases(layout: dict, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(update_cmd.os, "geteuid", lambda: 1000)
    assert cli.main(["update", "--rollback"]) == 1
    assert "sudo companion update --rollback" in capsys.readouterr().err
    assert layout["ran"] == []


def test_after_a_rollback_to_the_release_before_release_folders_it_still_works(
        layout: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """'legacy' has neither the command nor the installer's script: the PATH's
    companion runs the newer release's, which knows both."""
    legacy = layout["prefix"] / "releases" / "legacy"
    legacy.mkdir()
    (layout["prefix"] / "current").unlink()
    (layout["prefix"] / "current").symlink_to("releases/legacy")
    cli.main(["update", "--rollback"])
    cli.main(["update"])
    assert layout["ran"] == [["bash", f"{layout['release']}/systemd/release.sh", "rollback"],
                             ["bash", f"{layout['checkout']}/systemd/install.sh"]]


def test_a_release_that_does_not_name_its_checkout_asks_for_one(layout: dict,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (layout["release"] / ".source").unlink()
    assert cli.main(["update"]) == 2
    assert "companion update --from DIR" in capsys.readouterr().err
    cli.main(["update", "--from", str(layout["checkout"])])
    assert layout["ran"] == [["bash", f"{layout['checkout']}/systemd/install.sh"]]


def test_a_folder_that_is_no_checkout_is_refused(layout: dict, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["update", "--from", str(tmp_path)]) == 2
    assert "not a checkout" in capsys.readouterr().err and layout["ran"] == []
