"""Accuracy of the Carrousel reader on the path-traced table photographs.

Usage: python bench/carrousel_photos.py [FOLDER] [--overlays DIR]

FOLDER holds images/*.jpg and truth/*.json (default: tests/data/carrousel-table). For every
photo, each space and each card is compared with the truth: "wrong" is a reading that names
the wrong colour (or empty where a horse stands, or a horse where it is empty); "unknown" is an
abstention. Spaces that a hand hides may be unknown. Prints one line per photo and a table per
lighting condition; exit status 1 when any reading is wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.vision.carrousel import CarrouselReader, draw_overlay  # noqa: E402

CALIBRATION_PHOTOS = ("carrousel_000.jpg", "carrousel_036.jpg")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default=str(Path(__file__).resolve().parents[1] / "tests/data/carrousel-table"))
    ap.add_argument("--overlays", metavar="DIR")
    ap.add_argument("--include-calibration", action="store_true", help="also score the calibration photos")
    args = ap.parse_args()
    root = Path(args.folder)
    reader = CarrouselReader()
    per = defaultdict(lambda: defaultdict(int))
    wrong_total = 0
    times = []
    for img_path in sorted((root / "images").glob("*.jpg")):
        if img_path.name in CALIBRATION_PHOTOS and not args.include_calibration:
            continue
        truth = json.loads((root / "truth" / (img_path.stem + ".json")).read_text())
        frame = cv2.imread(str(img_path))
        t0 = time.perf_counter()
        reading = reader.read(frame)
        times.append(time.perf_counter() - t0)
        cond = truth["lighting"]
        notes = []
        for k, (got, want) in enumerate(zip(reading.labels, truth["space_list"])):
            per[cond]["spaces"] += 1
            if got == "unknown":
                per[cond]["space_unknown"] += 1
                if k not in truth["occluded"]:
                    per[cond]["space_unknown_unhidden"] += 1
                notes.append(f"s{k}?{'(hand)' if k in truth['occluded'] else ''}:{reading.spaces[k].reason if reading.spaces else ''}")
            elif got != want:
                per[cond]["space_wrong"] += 1
                notes.append(f"s{k} WRONG {got} (truth {want})")
        for card in truth["cards"]:
            per[cond]["cards"] += 1
            got = reading.cards.get(card["position"]) if reading.spaces else None
            if got is None or got.triple is None:
                per[cond]["card_unknown"] += 1
                notes.append(f"{card['position']}?(vis {card['visibility']['visible_fraction']:.2f}):{got.reason if got else ''}")
            elif list(got.triple) != card["triple"]:
                per[cond]["card_wrong"] += 1
                notes.append(f"{card['position']} WRONG {got.triple} (truth {card['triple']})")
        wrong_total += sum(1 for n in notes if "WRONG" in n)
        print(f"{img_path.name} {cond:20s} {reading.status:4s} " + "; ".join(notes))
        if args.overlays:
            Path(args.overlays).mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(Path(args.overlays) / (img_path.stem + "_overlay.png")), draw_overlay(frame, reading, reader.geometry))
    print()
    print("| lighting | photos | spaces wrong | spaces unknown (of which not hidden) | cards wrong | cards unknown |")
    print("|---|---|---|---|---|---|")
    for cond in sorted(per):
        p = per[cond]
        print(f"| {cond} | {p['cards'] // 4} | {p['space_wrong']}/{p['spaces']} | {p['space_unknown']} ({p['space_unknown_unhidden']}) "
              f"| {p['card_wrong']}/{p['cards']} | {p['card_unknown']} |")
    times.sort()
    print(f"\nread() per photo incl. marker detection: median {1000 * times[len(times) // 2]:.1f} ms")
    return 1 if wrong_total else 0


if __name__ == "__main__":
    sys.exit(main())
