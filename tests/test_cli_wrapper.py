"""The documented ``companion …`` as typed on the Pi: systemd/companion-cli,
installed by install.sh as /usr/local/bin/companion, runs the current
release's companion as the service's user, in its state folder, with its
environment; the commands that only make something for the person run as
whoever typed them, where they are."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from companion.app import cli

ROOT = Path(__file__).resolve().parent.parent
WRAPPER = ROOT / "systemd" / "companion-cli"
SH = shutil.which("sh")
pytestmark = pytest.mark.skipif(SH is None, reason="sh not installed")

# The stand-in release companion: says who ran it, where, with which state folder and arguments.
SAYS = f"""#!{sys.executable}
import os, pwd, sys
print(pwd.getpwuid(os.getuid()).pw_name, os.getcwd(), os.environ.get("STATE_DIRECTORY", "-"), *sys.argv[1:])
"""


def _exe(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)


def installed(tmp: Path, user: str = "companion") -> tuple[Path, Path, Path]:
    """The wrapper as install.sh writes it, over a temp prefix whose current
    release holds the stand-in; returns (the wrapper, the state folder, the prefix)."""
    prefix, state = tmp / "opt", tmp / "state"
    venv_bin = prefix / "releases" / "r1" / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    state.mkdir()
    (prefix / "current").symlink_to("releases/r1")
    _exe(venv_bin / "companion", SAYS)
    (prefix / "releases" / "r1" / "systemd").mkdir()
    (prefix / "releases" / "r1" / "systemd" / "release.sh").write_text("")  # a release that knows `update`
    text = WRAPPER.read_text(encoding="utf-8")
    for key, value in (("PREFIX", prefix), ("STATE", state), ("SERVICE_USER", user)):
        assert f"\n{key}=" in text
        text = text.replace(f"\n{key}=", f"\n{key}={value}\n#", 1)
    wrapper = tmp / "companion"
    _exe(wrapper, text)
    return wrapper, state, prefix


def as_someone(tmp: Path, name: str, uid: int) -> dict[str, str]:
    """A PATH on which `id` says NAME/UID and `sudo`/`runuser` say how they
    were called, then run the command (as this test's own user)."""
    bin_dir = tmp / f"bin-{name}"
    bin_dir.mkdir(exist_ok=True)
    _exe(bin_dir / "id", f'#!/bin/sh\ncase "$1" in -un) echo {name} ;; -u) echo {uid} ;; *) exit 2 ;; esac\n')
    for tool in ("sudo", "runuser"):
        _exe(bin_dir / tool, f'#!/bin/sh\nprintf "{tool} %s %s " "$1" "$2"\nshift 3\nexec "$@"\n')
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp)}


def typed(tmp: Path, who: tuple[str, int], *args: str, cwd: Path | None = None) -> str:
    """What `companion ARGS` prints, typed by WHO in CWD, over the layout in TMP."""
    if not (tmp / "companion").exists():
        installed(tmp)
    proc = subprocess.run([str(SH), str(tmp / "companion"), *args], capture_output=True, text=True,
                          cwd=cwd or tmp, env=as_someone(tmp, *who), timeout=30, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


ME = pwd.getpwuid(os.getuid()).pw_name
PI = ("pi", 1000)


def test_finding_the_documented_command_runs_as_the_service_user_in_its_state_folder(tmp_path: Path) -> None:
    """`companion doctor` typed by the pi user: the current release's
    companion, through sudo as the service's user, in its state folder, with
    the service's STATE_DIRECTORY — what the service sees, and where it writes."""
    state = tmp_path / "state"
    for words in (["doctor"], ["scores"], ["tags", "write", "one-night"], ["backup"], ["voice", "prerender"],
                  ["--config", "x.yaml", "doctor"]):
        out = typed(tmp_path, PI, *words)
        assert out == f"sudo -u companion {ME} {state} {state} {' '.join(words)}", out


def test_finding_every_command_the_build_pages_write_runs_as_written_on_the_pi(tmp_path: Path) -> None:
    """The Build pages write a bare `companion …`: each is a command there
    is, and typed by the pi user it reaches the current release's companion
    through the `companion` install.sh puts on the PATH."""
    pages = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs" / "build").glob("*.md")))
    code: list[str] = []  # the lines of code blocks, and inline code elsewhere
    in_block = False
    for line in pages.splitlines():
        if line.startswith("```"):
            in_block = not in_block
        elif in_block:
            code.append(line)
        else:
            code += re.findall(r"`([^`]+)`", line)
    written = {m.group(1) for c in code if (m := re.match(r"\s*(?:sudo )?companion ([a-z][a-z-]*)", c))}
    assert {"doctor", "scores", "tags", "web", "update"} <= written
    assert written <= set(cli.COMMANDS), written - set(cli.COMMANDS)
    for command in sorted(written):
        out = typed(tmp_path, PI, command)
        assert out.endswith(f" {command}") and ME in out, out
    install = (ROOT / "systemd" / "install.sh").read_text(encoding="utf-8")
    release = (ROOT / "systemd" / "release.sh").read_text(encoding="utf-8")
    assert 'BIN_DIR="${COMPANION_BIN_DIR:-/usr/local/bin}"' in install and '"$BIN_DIR/companion"' in release
    assert 'write_wrapper "$SRC/systemd/companion-cli"' in install


def test_finding_tags_learn_runs_as_root_for_the_tag_map_is_in_the_config_folder(tmp_path: Path) -> None:
    """`companion tags learn` saves the tag map (`reader: tag_map:`, tags.yaml beside
    companion.yaml in /etc/companion, which install.sh makes root's and 0755): as the
    service's user the walk asked for the first tag, then could not save it. It runs as
    root, with the service's environment, as editing the config does."""
    state = tmp_path / "state"
    words = ["tags", "learn", "skb/knight/1", "--force"]
    assert typed(tmp_path, PI, *words) == f"sudo -u root {ME} {state} {state} {' '.join(words)}"
    assert typed(tmp_path, ("root", 0), *words) == f"{ME} {state} {state} {' '.join(words)}"
    assert typed(tmp_path, PI, "--config", "x.yaml", "tags", "learn").startswith("sudo -u root ")
    assert typed(tmp_path, PI, "tags", "write", "one-night").startswith("sudo -u companion ")  # the state's
    install = (ROOT / "systemd" / "install.sh").read_text(encoding="utf-8")
    assert 'run install -d -m 0755 "$ETC"' in install and 'for f in companion.yaml tags.yaml' in install


def test_root_uses_runuser_and_the_service_user_runs_it_directly(tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert typed(tmp_path, ("root", 0), "scores").startswith(f"runuser -u companion {ME} {state} ")
    assert typed(tmp_path, ("companion", 999), "scores") == f"{ME} {state} {state} scores"


def test_what_is_made_for_the_person_is_made_where_they_are(tmp_path: Path) -> None:
    """`companion web qr -o card.svg` from the pi user's folder (which the
    service's user cannot write): run as pi, there."""
    home = tmp_path / "home"
    home.mkdir()
    for words in (["web", "qr", "-o", "card.svg"], ["tags", "sheet", "one-night", "-o", "labels.pdf"],
                  ["tags", "list"], ["simulate", "x.yaml"], ["update", "--rollback"], ["doctor", "--help"], [],
                  ["run", "--simulate", "--state", "try"]):
        out = typed(tmp_path, PI, *words, cwd=home)
        assert out == f"{ME} {home} - {' '.join(words)}".rstrip(), out


def test_update_after_a_rollback_to_the_release_before_release_folders(tmp_path: Path) -> None:
    """'legacy' (current again after a roll-back) has no `update`: the
    previous, newer release's companion runs it."""
    _, _, prefix = installed(tmp_path)
    legacy_bin = prefix / "releases" / "legacy" / ".venv" / "bin"
    legacy_bin.mkdir(parents=True)
    _exe(legacy_bin / "companion", "#!/bin/sh\necho legacy\n")
    (prefix / "current").unlink()
    (prefix / "current").symlink_to("releases/legacy")
    (prefix / "previous").symlink_to("releases/r1")
    assert typed(tmp_path, ("root", 0), "update", "--rollback") == f"{ME} {tmp_path} - update --rollback"
    assert typed(tmp_path, ("root", 0), "doctor") == "runuser -u companion legacy"


def test_the_commands_it_names_are_the_commands_there_are() -> None:
    """The ones run as the caller exist (a renamed command would otherwise
    silently run as the service's user, which is safe but not what it says)."""
    text = WRAPPER.read_text(encoding="utf-8")
    case = next(line for line in text.splitlines() if '"simulate "*' in line)
    named = {word.strip('"*').split()[0] for word in case.split(")")[0].split("|") if word.strip('" ')}
    assert named <= set(cli.COMMANDS), named - set(cli.COMMANDS)


def test_no_release_installed_says_so(tmp_path: Path) -> None:
    wrapper, _, prefix = installed(tmp_path)
    (prefix / "current").unlink()
    proc = subprocess.run([str(SH), str(wrapper), "doctor"], capture_output=True, text=True, timeout=30,
                          check=False, env=as_someone(tmp_path, *PI))
    assert proc.returncode == 1 and "no release is installed" in proc.stderr


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("runuser") is None or not Path("/usr/bin/python3").exists(),
                    reason="needs root, runuser and /usr/bin/python3")
def test_for_real_the_state_is_written_as_the_service_user(tmp_path: Path) -> None:
    """With the real runuser and a real other user (nobody) standing in for
    the service's: what the command writes in the state folder belongs to that
    user, and the folder stays closed to others."""
    user = "nobody"
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        pytest.skip("no user 'nobody' here")
    top = Path(tempfile.mkdtemp(prefix="companion-wrapper-", dir="/tmp"))
    try:
        top.chmod(0o755)
        wrapper, state, prefix = installed(top, user)
        _exe(prefix / "current" / ".venv" / "bin" / "companion",
             "#!/usr/bin/python3\nimport os\nopen('made-by-backup', 'w').write(os.environ['STATE_DIRECTORY'])\n")
        os.chown(state, entry.pw_uid, entry.pw_gid)
        state.chmod(0o750)
        proc = subprocess.run([str(SH), str(wrapper), "backup"], capture_output=True, text=True, timeout=60,
                              check=False, cwd="/", env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
        assert proc.returncode == 0, proc.stderr
        made = state / "made-by-backup"
        assert made.read_text() == str(state) and made.stat().st_uid == entry.pw_uid
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_the_wrapper_is_written_with_its_paths() -> None:
    text = (ROOT / "systemd" / "release.sh").read_text(encoding="utf-8")  # write_wrapper, install.sh's too
    for key in ("PREFIX", "STATE", "SERVICE_USER"):
        assert f'-e "s|^{key}=.*|{key}=${key}|"' in text or f'"s|^{key}=.*|{key}=${key}|"' in text
    assert stat.S_IMODE(WRAPPER.stat().st_mode) & 0o444
