"""Pico pin assignment (GPIO numbers, "GP" on the Pico's silkscreen).

Must agree with the ``[pico]`` table of ``hardware/pins.toml`` (a test checks it).
"""

#: Encoder channel A (pin 4 of the Pico header); channel B must be the next GPIO.
ENCODER_A = 2
#: Encoder channel B (pin 5).
ENCODER_B = 3
#: Index input: hall sensor output, active low, pull-up (pin 6).
INDEX = 4
#: On-board LED (no header pin): lit while the host reads the link.
LED = 25
