"""The shell's input side: tag readers (nfcpy, simulated) and the button/LED
panel (gpiozero).  Nothing here knows any game; it only reports what was
tapped or pressed, through the small interfaces in ``hardware.base``."""
