"""Draw hardware/wiring.svg from the pin map (hardware/pins.toml). Run after changing pins:

    python hardware/tools/draw_wiring.py
"""

from __future__ import annotations

import tomllib
from pathlib import Path

HW = Path(__file__).resolve().parent.parent
PINS = tomllib.loads((HW / "pins.toml").read_text(encoding="utf-8"))
P = PINS["pins"]

# Raspberry Pi 40-pin header: physical pin -> name (BCM numbering)
HEADER = {
    1: "3V3", 2: "5V", 3: "GPIO 2", 4: "5V", 5: "GPIO 3", 6: "GND", 7: "GPIO 4", 8: "GPIO 14",
    9: "GND", 10: "GPIO 15", 11: "GPIO 17", 12: "GPIO 18", 13: "GPIO 27", 14: "GND",
    15: "GPIO 22", 16: "GPIO 23", 17: "3V3", 18: "GPIO 24", 19: "GPIO 10", 20: "GND",
    21: "GPIO 9", 22: "GPIO 25", 23: "GPIO 11", 24: "GPIO 8", 25: "GND", 26: "GPIO 7",
    27: "ID_SD", 28: "ID_SC", 29: "GPIO 5", 30: "GND", 31: "GPIO 6", 32: "GPIO 12",
    33: "GPIO 13", 34: "GND", 35: "GPIO 19", 36: "GPIO 16", 37: "GPIO 26", 38: "GPIO 20",
    39: "GND", 40: "GPIO 21",
}
PHYS = {int(v.split()[1]): k for k, v in HEADER.items() if v.startswith("GPIO")}

HX, TOP, ROW, HW_ = 470, 130, 31, 190  # header left x, first row y, row pitch, header width
out: list[str] = []


def y_of(pin: int) -> float:
    return TOP + ((pin - 1) // 2) * ROW


def x_of(pin: int) -> float:
    return HX if pin % 2 else HX + HW_


def text(x, y, s, size=13, anchor="start", weight="normal", fill="#000"):
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out.append(f'<text x="{x:.0f}" y="{y:.0f}" font-size="{size}" text-anchor="{anchor}" '
               f'font-weight="{weight}" fill="{fill}">{s}</text>')


def line(x1, y1, x2, y2, color="#333", w=2.5):
    out.append(f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" '
               f'stroke="{color}" stroke-width="{w}"/>')


def rect(x, y, w, h, fill="#fff", stroke="#333", rx=6, sw=2):
    out.append(f'<rect x="{x:.0f}" y="{y:.0f}" width="{w:.0f}" height="{h:.0f}" rx="{rx}" '
               f'fill="{fill}" stroke="{stroke}" stroke-width="{sw}"/>')


def resistor(x, y, label):
    """A resistor symbol centred on (x, y) on a horizontal wire."""
    rect(x - 16, y - 6, 32, 12, "#fff", "#333", 1, 1.5)
    text(x, y - 10, label, 11, "middle")


def wire_to(pin, x_end, label, color, parts=()):
    """A horizontal wire from a header pin to x_end, label at the far end, parts on the way."""
    y = y_of(pin)
    x0 = x_of(pin)
    line(x0, y, x_end, y, color)
    for px, plabel in parts:
        resistor(px, y, plabel)
    if x_end < x0:
        text(x_end - 6, y + 4, label, 12, "end")
    else:
        text(x_end + 6, y + 4, label, 12)


W, H = 1640, 1010
out.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" font-family="DejaVu Sans, Arial, sans-serif">')
out.append('<rect width="100%" height="100%" fill="white"/>')
text(20, 32, "Carousel Companion wiring (default pins from hardware/pins.toml)", 20, weight="bold")
text(20, 56, "Left: the Raspberry Pi's 40-pin header seen from above, pin 1 top left (square pad). "
     "Right: the Pico, the shaft encoder and the index sensor. All signals 3.3 V. "
     "Every part to GND = any GND pin.", 12, fill="#444")

# --- the header
rect(HX - 20, TOP - 28, HW_ + 40, 20 * ROW + 26, "#e8f5e9")
text(HX + HW_ / 2, TOP - 10, "Raspberry Pi header", 14, "middle", "bold")
used = set()
for key, v in P.items():
    for n in v if isinstance(v, list) else [v]:
        used.add(PHYS[n])
for pin, name in HEADER.items():
    x, y = x_of(pin), y_of(pin)
    colour = "#000" if name.startswith("GPIO") else "#c62828" if name in ("5V", "3V3") else "#555"
    fill = "#ffd54f" if pin in used else "#fff"
    out.append(f'<circle cx="{x}" cy="{y}" r="7" fill="{fill}" stroke="#333" stroke-width="1.5"/>')
    text(x + (14 if pin % 2 else -14), y + 4, f"{pin}", 10, "start" if pin % 2 else "end", fill="#666")
    text(x + (38 if pin % 2 else -38), y + 4, name, 11, "start" if pin % 2 else "end",
         fill=colour)

LEFT, RIGHT = HX - 70, HX + HW_ + 70
enc_a, enc_b, idx = PHYS[P["encoder_a"]], PHYS[P["encoder_b"]], PHYS[P["encoder_index"]]
# GPIO-path encoder (left)
wire_to(1, LEFT, "3V3: pull-ups of the GPIO-path encoder and index", "#c62828")
wire_to(idx, LEFT, f"index: hall sensor out (GPIO path); 10k to 3V3", "#ad1457")
wire_to(enc_a, LEFT, f"encoder A (GPIO path only, slow knobs); 4.7k to 3V3", "#2e7d32")
wire_to(enc_b, LEFT, f"encoder B (GPIO path only); 4.7k to 3V3", "#757575")
wire_to(PHYS[P["die_button"]], LEFT, "electronic die button -> GND", "#00838f")
for i, n in enumerate(P["claim_buttons"]):
    wire_to(PHYS[n], LEFT, f"claim button, seat {i + 1} -> GND", "#00838f")
for i, n in enumerate(P["player_leds"]):
    pin = PHYS[n]
    label = f"seat {i + 1} LED: 270 ohm -> anode; cathode -> GND"
    if pin % 2:
        wire_to(pin, LEFT, label, "#5e35b1", [(HX - 40, "270")])
    else:
        wire_to(pin, RIGHT, label, "#5e35b1", [(HX + HW_ + 40, "270")])
wire_to(9, LEFT, "GND: buttons, LEDs, encoder/hall (GPIO path)", "#333")
# right side
wire_to(2, RIGHT, "5V: buzzer +, encoder and hall VCC (GPIO path)", "#c62828")
wire_to(PHYS[P["yes_button"]], RIGHT, "kids' YES button (green) -> GND", "#00838f")
wire_to(PHYS[P["no_button"]], RIGHT, "kids' NO button (red) -> GND", "#00838f")
wire_to(PHYS[P["buzzer"]], RIGHT, "buzzer driver: 1k -> NPN base (see box)", "#ef6c00",
        [(HX + HW_ + 40, "1k")])
wire_to(34, RIGHT, "GND: NPN emitter", "#333")

# buzzer detail box
bx, by = 60, 800
rect(bx, by, 380, 150, "#fffde7")
text(bx + 10, by + 22, "Buzzer driver (passive buzzer, TonalBuzzer)", 13, weight="bold")
for i, s in enumerate([
    f"GPIO {P['buzzer']} (pin {PHYS[P['buzzer']]}) -> 1k -> base of S8050 / 2N2222",
    "emitter -> GND (pin 34)",
    "collector -> buzzer (-);  buzzer (+) -> 5V (pin 2 or 4)",
    "1N4148 across the buzzer, band (cathode) to buzzer (+)",
    "a GPIO gives 16 mA at most; the buzzer wants about 30 mA",
]):
    text(bx + 10, by + 46 + i * 20, s, 12)

# --- Pico panel
px, py = 1120, 130
rect(px - 40, py - 60, 520, 720, "#f5f9ff", "#90a4ae", 10, 1.5)
text(px + 220, py - 36, "Shaft encoder counted by the Pico", 15, "middle", "bold")
rect(px, py, 180, 300, "#e3f2fd")
text(px + 90, py + 24, "Raspberry Pi Pico", 14, "middle", "bold")
pico = PINS["pico"]
pico_rows = [
    ("VBUS 5V (pin 40)", "#c62828"), ("3V3 OUT (pin 36)", "#c62828"), ("GND (pin 38)", "#333"),
    (f"GP{pico['encoder_a']} (pin 4): A", "#2e7d32"), (f"GP{pico['encoder_b']} (pin 5): B", "#757575"),
    (f"GP{pico['index']} (pin 6): index", "#ad1457"),
]
ys = {}
for i, (lab, col) in enumerate(pico_rows):
    y = py + 60 + i * 36
    ys[lab.split()[0]] = y
    out.append(f'<circle cx="{px + 180}" cy="{y}" r="6" fill="#ffd54f" stroke="#333"/>')
    text(px + 170, y + 4, lab, 11, "end", fill=col)
text(px + 10, py + 290, f"USB {pico['usb_id']} -> a Pi USB port", 11)
# encoder and hall boxes
ex = px + 330
rect(ex, py, 140, 150, "#fff3e0")
text(ex + 70, py + 22, "Encoder", 13, "middle", "bold")
text(ex + 70, py + 38, "600 lines, NPN OC", 10, "middle")
rect(ex, py + 200, 140, 110, "#fce4ec")
text(ex + 70, py + 222, "Hall A3144", 13, "middle", "bold")
text(ex + 70, py + 238, "flat face, legs down", 10, "middle")
rows_enc = {"VCC": py + 60, "GND": py + 82, "A": py + 104, "B": py + 126}
for lab, y in rows_enc.items():
    out.append(f'<circle cx="{ex}" cy="{y}" r="5" fill="#fff" stroke="#333"/>')
    text(ex + 10, y + 4, {"VCC": "red: VCC", "GND": "black: 0V", "A": "green: A", "B": "white: B"}[lab], 11)
rows_hall = {"VCC": py + 258, "GND": py + 278, "OUT": py + 298}
for lab, y in rows_hall.items():
    out.append(f'<circle cx="{ex}" cy="{y}" r="5" fill="#fff" stroke="#333"/>')
    text(ex + 10, y + 4, {"VCC": "1: VCC", "GND": "2: GND", "OUT": "3: out"}[lab], 11)


def route(x0, y0, x1, y1, xm, color):
    out.append(f'<polyline points="{x0},{y0} {xm},{y0} {xm},{y1} {x1},{y1}" fill="none" '
               f'stroke="{color}" stroke-width="2.5"/>')


pp = px + 180
route(pp, ys["VBUS"], ex, rows_enc["VCC"], pp + 40, "#c62828")
route(pp, ys["VBUS"], ex, rows_hall["VCC"], pp + 40, "#c62828")
route(pp, ys["GND"], ex, rows_enc["GND"], pp + 60, "#333")
route(pp, ys["GND"], ex, rows_hall["GND"], pp + 60, "#333")
route(pp, ys[f"GP{pico['encoder_a']}"], ex, rows_enc["A"], pp + 80, "#2e7d32")
route(pp, ys[f"GP{pico['encoder_b']}"], ex, rows_enc["B"], pp + 100, "#757575")
route(pp, ys[f"GP{pico['index']}"], ex, rows_hall["OUT"], pp + 120, "#ad1457")
# pull-ups from 3V3
y3 = ys["3V3"]
line(pp, y3, pp + 20, y3, "#c62828")
line(pp + 20, y3, pp + 20, py + 440, "#c62828")
for i, (lab, target_y, xm, val) in enumerate([
    ("A", ys[f"GP{pico['encoder_a']}"], pp + 80, "4.7k"),
    ("B", ys[f"GP{pico['encoder_b']}"], pp + 100, "4.7k"),
    ("idx", ys[f"GP{pico['index']}"], pp + 120, "10k"),
]):
    yy = py + 380 + i * 30
    line(pp + 20, yy, xm, yy, "#c62828")
    out.append(f'<rect x="{xm - 6}" y="{yy - 40}" width="12" height="26" fill="#fff" stroke="#333" stroke-width="1.5"/>')
    line(xm, yy, xm, yy - 14, "#c62828")
    top = max(target_y, rows_enc["A"] if lab == "A" else rows_enc["B"] if lab == "B" else rows_hall["OUT"])
    line(xm, yy - 40, xm, top, "#555", 1.5)
    out.append(f'<circle cx="{xm}" cy="{top}" r="4" fill="#333"/>')
    text(xm + 9, yy - 22, val, 10)
text(px, py + 500, "Pull-ups go to 3V3, never 5V: the encoder and the hall sensor", 12)
text(px, py + 518, "only pull their outputs low (open collector), so a 5V supply", 12)
text(px, py + 536, "for them is safe. Cable shield to GND at the Pico end only.", 12)
text(px, py + 566, "Magnet (6 x 3 mm) on the rotating part, south pole to the", 12)
text(px, py + 584, "sensor's flat face, passing 2-5 mm away once a turn.", 12)
text(px, py + 614, "If the angle runs backwards: swap A and B, or set", 12)
text(px, py + 632, '[encoder] direction = "cw".', 12)
out.append("</svg>")
SVG = "\n".join(out) + "\n"

if __name__ == "__main__":
    (HW / "wiring.svg").write_text(SVG, encoding="utf-8")
    print("wrote", HW / "wiring.svg")
