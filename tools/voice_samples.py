"""Render the example files of docs/voice-samples/: three lines per engine
and language, as the table hears them, made small for the repository (mono
16 kHz Ogg Vorbis through sox).  ``python tools/voice_samples.py [DIR]``.

The lines go through the daemon's narrator (so a dynamic line is filled the
way a game fills it) and through the real render worker of each engine; an
engine that is not installed is skipped and named.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from companion.app.catalogue import narrator as table_narrator  # noqa: E402
from voice import engines  # noqa: E402
from voice.render import RenderSettings, SubprocessRenderer  # noqa: E402

LINES = [  # (name, key, params)
    ("seer", "onw.seer.wake", {}),
    ("players", "refuse.player_count", {"low": 3, "high": 5, "count": 2}),
    ("werewolf", "onw.werewolf.wake", {}),
]
VOICES = [("openjtalk", "ja"), ("espeak", "ja"), ("piper", "en"), ("espeak", "en")]


def main(out_dir: Path) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    narrator = table_narrator()  # the shared lines and every game's
    for engine, lang in VOICES:
        problem = engines.info(engine).missing()
        if problem:
            print(f"{engine}: skipped ({problem})", file=sys.stderr)
            continue
        settings = RenderSettings(engines={lang: engine})
        renderer = SubprocessRenderer(settings)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                for name, key, params in LINES:
                    line = narrator.render(key, params, lang)
                    text = line.text if settings.reads_written(lang) else line.reading
                    wav = Path(tmp) / f"{name}.wav"
                    renderer.render(text, lang, wav)
                    target = out_dir / f"{engine}-{lang}-{name}.ogg"
                    subprocess.run(["sox", str(wav), "-r", "16000", "-c", "1", "-C", "3", str(target)], check=True)
                    print(f"{target}: {text}")
        finally:
            renderer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/voice-samples")))
