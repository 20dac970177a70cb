"""The shell's output side for sound: narration lines per language and the
backends that speak them (recording, console, pyttsx3 via a WAV cache)."""
