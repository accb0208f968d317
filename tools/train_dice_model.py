"""Train the dice reader's face classifier and export it to ONNX.

The model (``companion/data/dice_faces.onnx``) reads one die: input ``N x 3 x 48 x 48
float32`` (BGR, 0-1: the die's box grown by ``MODEL_MARGIN`` and resampled, as
``companion.readers.dice.die_patch`` makes it; here the resampling is done in two steps, with
a random shift, scale and turn), output ``N x 7`` logits: class 0 "not one die"
(tray floor, part of a die, two dice), classes 1-6 the face value. It runs with OpenCV's DNN
module on the Pi; PyTorch is needed only here, to train it.

Data: the train split of nell-byler/dice_detection (BSD-3-Clause) and, with ``--rendered N``,
N dice trays rendered by our renderer (companion/sim/dice_render.py: 16 mm dice of the colours
real dice have in felt trays, 350-600 mm below the camera, boxes 14-38 px, touching and cocked
dice, hands, glare, five lightings). A fixed set of train photos (:func:`holdout`: every fifth
photo by name, and the four photos of tests/data/dice) and a fixed set of rendered scenes (seeds
from ``RENDER_HELD_SEED0``) are never trained on: their figures go in the training record
(``dice_faces.json`` beside the model). The photo set's test split and the dice-tray
photographs (../shared/data/dice-tray) are not read here.

Augmentation (the dice of a real table are of other colours, turned, lit otherwise): the eight
turns and mirror images of the square (a face's value does not change), a shifted and rescaled
box (the finder's boxes are not exact), colour channels permuted and scaled, brightness and
contrast, blur, noise.

Usage (a machine with PyTorch, CPU only; ``nice`` it on a shared machine)::

  python -m venv /tmp/train && /tmp/train/bin/pip install torch onnx opencv-python-headless numpy
  nice -n 10 /tmp/train/bin/python tools/train_dice_model.py --data /work/shared/data/dice \\
      --rendered 1600 --held-rendered 150 --per-epoch 16000 --epochs 12 --cache /tmp/dice-cache \\
      --out companion/data/dice_faces.onnx

(The rendering needs only OpenCV and numpy: ``--render-only`` fills the cache with the project's
own virtualenv first.) The older packaged model was the mean of three trained on the photos alone,
combined by ``--combine``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))

from companion.readers.dice import MODEL_INPUT_PX, MODEL_MARGIN  # noqa: E402
from dice_bench import load_labels  # noqa: E402  (labels.csv of the data set)

#: Training patches are cut wider than the model's input so that shifts and scales can be drawn.
WIDE = 2.0  # the wide patch spans WIDE x the box's side
WIDE_PX = 96
TESTS_PHOTOS = {"IMG_20191208_112710.jpg", "IMG_20191208_112847.jpg", "IMG_20191209_095604.jpg", "IMG_20191208_112942.jpg"}


def holdout(names: list[str]) -> set[str]:
    """The train photos never trained on: every fifth by name, and the tests' photos."""
    names = sorted(names)
    return set(names[::5]) | (TESTS_PHOTOS & set(names))


def wide_patch(frame: np.ndarray, cx: float, cy: float, side: float) -> np.ndarray:
    """A square of WIDE x ``side`` px around (cx, cy) resampled to WIDE_PX (uint8 BGR)."""
    half = side * WIDE / 2
    s = WIDE_PX / (2 * half)
    m = np.float32([[s, 0, -(cx - half) * s], [0, s, -(cy - half) * s]])
    return cv2.warpAffine(frame, m, (WIDE_PX, WIDE_PX), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)


def _overlap(a, b) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    return ix * iy / max(1e-6, (a[2] - a[0]) * (a[3] - a[1]))


def patches(folder: Path, names: list[str], rng: random.Random):
    """Wide patches and labels: every labelled die (1-6) and negatives (0)."""
    labels = load_labels(folder)
    xs, ys = [], []
    for name in names:
        frame = cv2.imread(str(folder / name))
        dice = labels[name]
        sides = [max(b[2] - b[0], b[3] - b[1]) for b, _ in dice]
        for (box, value), side in zip(dice, sides):
            cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
            xs.append(wide_patch(frame, cx, cy, side))
            ys.append(value)
            # Part of this die: the box shifted by half a die or more.
            for _ in range(1):
                ang = rng.uniform(0, 2 * np.pi)
                d = rng.uniform(0.5, 0.8) * side
                xs.append(wide_patch(frame, cx + d * np.cos(ang), cy + d * np.sin(ang), side))
                ys.append(0)
        # A part of the face seen at a larger scale (one pip, a corner): not a die either; the
        # finder meets it when the dice are larger than expected or a box covers a die in part.
        for (box, value), side in zip(dice, sides):
            cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
            part = rng.uniform(0.3, 0.6) * side
            off = (side - part) / 2
            xs.append(wide_patch(frame, cx + rng.uniform(-off, off), cy + rng.uniform(-off, off), part))
            ys.append(0)
        # Two dice close together, seen as one region (at most one such pair a die).
        pairs = []
        for i in range(len(dice)):
            for j in range(i + 1, len(dice)):
                (a, _), (b, _) = dice[i], dice[j]
                u = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                side = max(u[2] - u[0], u[3] - u[1])
                if side < 1.9 * max(sides[i], sides[j]):
                    pairs.append((u, side))
        for u, side in rng.sample(pairs, min(len(pairs), max(1, len(dice) // 2))):
            xs.append(wide_patch(frame, (u[0] + u[2]) / 2, (u[1] + u[3]) / 2, side))
            ys.append(0)
        # The tray floor, its wall and stand: die-sized squares clear of every die.
        typical = float(np.median(sides))
        tries = 0
        made = 0
        while made < max(2, len(dice) // 2) and tries < 200:
            tries += 1
            side = typical * rng.uniform(0.8, 1.3)
            cx, cy = rng.uniform(side, frame.shape[1] - side), rng.uniform(side, frame.shape[0] - side)
            sq = (cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2)
            if all(_overlap(sq, b) < 0.05 and _overlap(b, sq) < 0.05 for b, _ in dice):
                xs.append(wide_patch(frame, cx, cy, side))
                ys.append(0)
                made += 1
    return np.stack(xs), np.array(ys, np.int64)


#: Rendered scenes: seeds from RENDER_SEED0 for training; the held-out rendered scenes use seeds
#: from RENDER_HELD_SEED0 (never trained on, never used for a choice before the figures).
RENDER_SEED0 = 1_000_000
RENDER_HELD_SEED0 = 9_000_000
#: A die's top face must show this share of its flat part to be a training die of its value;
#: under HIDDEN_FRACTION (a hand or another die over it) it is a "not one die" example.
SEEN_FRACTION = 0.97
HIDDEN_FRACTION = 0.75


def _geo_side(geo, centre_px) -> float:
    """The reader's die side (px) at a top face's centre: the mean of the whole die's box at yaws
    0 and 45 degrees (``DiceReader._side_at``)."""
    return 0.5 * (geo.die_side_px(centre_px, 0.0) + geo.die_side_px(centre_px, 45.0))


def rendered_patches(n_scenes: int, seed0: int, rng: random.Random, log_every: int = 200):
    """Wide patches and labels from ``n_scenes`` rendered dice trays (companion.sim.dice_render).

    Per die: a flat die whose top face shows whole gives two patches of its value - one
    centred on the box of its visible pixels (the finder's box), one on its top face's centre
    with the geometry's die side (the reader's view once the pips are found); a die mostly
    hidden (a hand, another die over it) gives a "not one die" patch. Negatives as for the
    photos: a die's box shifted by half a die or more, part of a face at a larger scale, two
    touching dice as one square, felt, walls and hands clear of every die. Cocked dice are not
    trained on (their pips decide: the reader calls them ``cocked``).

    Returns:
        ``(N x WIDE_PX x WIDE_PX x 3 uint8, N int64)``.
    """
    from companion.sim.dice_render import HAND_LABEL, TrayRenderer, random_scene

    renderer = TrayRenderer()
    xs, ys = [], []
    t0 = time.time()
    for k in range(n_scenes):
        scene = random_scene(np.random.default_rng(seed0 + k))
        geo = scene.geometry
        w, h = geo.image_size
        centres = np.array([geo.project(d.centre_mm[None])[0] for d in scene.dice]) if scene.dice else np.zeros((0, 2))
        if len(centres) == 0:
            continue
        big = max(_geo_side(geo, c) for c in centres)
        lo = np.maximum(0, centres.min(0) - 2.5 * big - 8).astype(int)
        hi = np.minimum([w, h], centres.max(0) + 2.5 * big + 8).astype(int)
        frame, labels, dice = renderer.render(scene, window=(lo[0], lo[1], hi[0], hi[1]))
        off = np.array([lo[0], lo[1]], float)
        boxes = [d.box for d in dice]
        for d in dice:
            if d.box is None:
                continue
            bx = d.box
            side_box = max(bx[2] - bx[0], bx[3] - bx[1])
            cx, cy = (bx[0] + bx[2]) / 2, (bx[1] + bx[3]) / 2
            gside = _geo_side(geo, np.asarray(d.top_centre_px) + off)
            if d.state == "cocked":
                continue
            if d.visible_fraction >= SEEN_FRACTION:
                xs.append(wide_patch(frame, cx, cy, side_box))
                ys.append(d.value)
                xs.append(wide_patch(frame, d.top_centre_px[0], d.top_centre_px[1], gside))
                ys.append(d.value)
            elif d.visible_fraction < HIDDEN_FRACTION:
                xs.append(wide_patch(frame, d.top_centre_px[0], d.top_centre_px[1], gside))
                ys.append(0)
            ang = rng.uniform(0, 2 * np.pi)
            dist = rng.uniform(0.5, 0.8) * gside
            xs.append(wide_patch(frame, cx + dist * np.cos(ang), cy + dist * np.sin(ang), gside))
            ys.append(0)
            part = rng.uniform(0.3, 0.6) * gside
            offp = (gside - part) / 2
            xs.append(wide_patch(frame, d.top_centre_px[0] + rng.uniform(-offp, offp),
                                 d.top_centre_px[1] + rng.uniform(-offp, offp), part))
            ys.append(0)
        for i, d in enumerate(dice):
            for j in d.touching:
                if j > i and d.box is not None and dice[j].box is not None:
                    a, b = d.box, dice[j].box
                    u = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                    c = (np.asarray(d.top_centre_px) + np.asarray(dice[j].top_centre_px)) / 2
                    gs = _geo_side(geo, c + off)
                    xs.append(wide_patch(frame, c[0], c[1], gs * rng.uniform(0.9, 1.2)))
                    ys.append(0)
                    xs.append(wide_patch(frame, (u[0] + u[2]) / 2, (u[1] + u[3]) / 2, max(u[2] - u[0], u[3] - u[1])))
                    ys.append(0)
        # felt, walls, the hand: squares of a die's size clear of every die
        fh, fw = frame.shape[:2]
        made = tries = 0
        want = max(2, len(dice))
        while made < want and tries < 60:
            tries += 1
            cx, cy = rng.uniform(0, fw), rng.uniform(0, fh)
            s = big * rng.uniform(0.8, 1.3)
            sq = (cx - s / 2, cy - s / 2, cx + s / 2, cy + s / 2)
            if all(bb is None or (_overlap(sq, bb) < 0.05 and _overlap(bb, sq) < 0.05) for bb in boxes):
                ix, iy = int(min(fw - 1, cx)), int(min(fh - 1, cy))
                if labels[iy, ix] in (0,) and rng.random() < 0.7:
                    continue  # the table far from the tray: fewer of those
                xs.append(wide_patch(frame, cx, cy, s))
                ys.append(0)
                made += 1
        if scene.hand is not None:
            hy, hx = np.nonzero(labels == HAND_LABEL)
            if len(hx):
                for _ in range(2):
                    i = rng.randrange(len(hx))
                    xs.append(wide_patch(frame, float(hx[i]), float(hy[i]), big * rng.uniform(0.8, 1.3)))
                    ys.append(0)
        if log_every and (k + 1) % log_every == 0:
            print(f"  rendered {k + 1} of {n_scenes} scenes, {len(ys)} patches, {time.time() - t0:.0f} s", flush=True)
    return np.stack(xs), np.array(ys, np.int64)


def cached_rendered(n_scenes: int, seed0: int, cache: Path | None, seed: int, chunk: int = 100):
    """:func:`rendered_patches` of scenes ``seed0 .. seed0 + n_scenes - 1``, rendered in chunks
    of ``chunk`` scenes each kept in ``cache`` (an ``.npz`` per chunk) so that a second run, or
    one cut short, does not render again."""
    xs, ys = [], []
    for c0 in range(0, n_scenes, chunk):
        n = min(chunk, n_scenes - c0)
        path = cache / f"rendered_{seed0 + c0}_{n}_{seed}.npz" if cache is not None else None
        if path is not None and path.is_file():
            with np.load(path) as z:
                x, y = z["x"], z["y"]
        else:
            x, y = rendered_patches(n, seed0 + c0, random.Random(seed * 1_000_003 + seed0 + c0), log_every=0)
            if path is not None:
                cache.mkdir(parents=True, exist_ok=True)
                np.savez(path, x=x, y=y)
        xs.append(x)
        ys.append(y)
        print(f"  rendered scenes {seed0 + c0}-{seed0 + c0 + n - 1}: {len(y)} patches", flush=True)
    return np.concatenate(xs), np.concatenate(ys)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="/work/shared/data/dice", help="folder with train/")
    ap.add_argument("--out", default=str(ROOT / "companion" / "data" / "dice_faces.onnx"))
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--all", action="store_true", help="train on the holdout photos too")
    ap.add_argument("--threads", type=int, default=2, help="CPU threads for PyTorch")
    ap.add_argument("--rendered", type=int, default=0, metavar="N",
                    help="also train on N rendered dice-tray scenes (companion.sim.dice_render)")
    ap.add_argument("--held-rendered", type=int, default=200, metavar="N",
                    help="rendered scenes held out for the training record's figures (with --rendered)")
    ap.add_argument("--per-epoch", type=int, default=0, metavar="N",
                    help="each epoch a random N of the patches (0: all); keeps the training within the hour")
    ap.add_argument("--cache", type=Path, help="folder keeping the rendered patches between runs")
    ap.add_argument("--render-only", action="store_true", help="render (into --cache) and stop")
    ap.add_argument("--init", type=Path, metavar="MODEL.onnx",
                    help="start from this trained model (the first of an ensemble), its batch normalisation frozen")
    ap.add_argument("--lr", type=float, default=3e-3, help="the largest learning rate (one cycle)")
    ap.add_argument("--combine", nargs="+", metavar="MODEL.onnx",
                    help="instead of training: average these trained models into --out")
    args = ap.parse_args(argv)
    if args.combine:
        combine(args.combine, args.out)
        records = [json.loads(Path(p).with_suffix(".json").read_text()) for p in args.combine]
        meta = dict(records[0], seed=[r["seed"] for r in records], combined=len(records))
        Path(args.out).with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
        print(f"wrote {args.out}: the mean of {len(records)} models")
        return 0
    t0 = time.time()
    if args.rendered:
        xr, yr = cached_rendered(args.rendered, RENDER_SEED0, args.cache, args.seed)
        xh, yh = cached_rendered(args.held_rendered, RENDER_HELD_SEED0, args.cache, args.seed)
        print(f"{args.rendered} rendered scenes: {len(yr)} patches ({np.bincount(yr, minlength=7).tolist()} by class); "
              f"{args.held_rendered} held out: {len(yh)}; {time.time() - t0:.0f} s", flush=True)
        if args.render_only:
            return 0
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.set_num_threads(args.threads)
    folder = Path(args.data) / "train"
    names = sorted(load_labels(folder))
    held = holdout(names)
    train_names = names if args.all else [n for n in names if n not in held]
    real_cache = args.cache / f"photos_{len(train_names)}_{args.seed}.npz" if args.cache else None
    if real_cache is not None and real_cache.is_file():
        with np.load(real_cache) as z:
            x, y = z["x"], z["y"]
        rng = random.Random(args.seed + 2)
    else:
        x, y = patches(folder, train_names, rng)
        if real_cache is not None:
            np.savez(real_cache, x=x, y=y)
    n_real = len(y)
    print(f"{len(train_names)} photos, {len(y)} patches ({np.bincount(y).tolist()} by class) in {time.time() - t0:.1f} s")
    if args.rendered:
        x, y = np.concatenate([x, xr]), np.concatenate([y, yr])
    xt = torch.from_numpy(x).permute(0, 3, 1, 2)  # uint8: a float copy of every patch would not fit
    yt = torch.from_numpy(y)

    model = build_model(nn)
    if args.init:
        load_onnx_weights(model, args.init, torch, nn)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    per_epoch = min(len(yt), args.per_epoch) if args.per_epoch else len(yt)
    steps = args.epochs * ((per_epoch + 127) // 128)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps)
    weights = torch.tensor([0.5, 1, 1, 1, 1, 1, 1], dtype=torch.float32)
    for epoch in range(args.epochs):
        model.train()
        if args.init:
            for mod in model.modules():
                if isinstance(mod, nn.BatchNorm2d):
                    mod.eval()  # the starting model's batch statistics are kept
        perm = torch.randperm(len(yt))[:per_epoch]
        total, right = 0.0, 0
        for k in range(0, per_epoch, 128):
            idx = perm[k : k + 128]
            xb = augment(xt[idx].float() / 255.0, torch, F)
            logits = model(xb)
            loss = F.cross_entropy(logits, yt[idx], weight=weights, label_smoothing=0.02)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
            right += int((logits.argmax(1) == yt[idx]).sum())
            if (k // 128) % 25 == 24:
                print(f"  epoch {epoch + 1}: {k + len(idx)} of {per_epoch} patches, {time.time() - t0:.0f} s", flush=True)
        print(f"epoch {epoch + 1}: loss {total / per_epoch:.4f}, augmented accuracy {right / per_epoch:.4f}, "
              f"{time.time() - t0:.0f} s", flush=True)
    model.eval()
    held_figures = {}
    if not args.all:
        xv, yv = patches(folder, sorted(held), random.Random(args.seed + 1))
        held_figures["photos"] = evaluate(model, xv, yv, torch, F)
    if args.rendered:
        held_figures["rendered"] = evaluate(model, xh, yh, torch, F)
    for k, v in held_figures.items():
        print(f"held out ({k}): {v}")
    out = Path(args.out)
    dummy = torch.zeros(1, 3, 48, 48)
    torch.onnx.export(
        model, dummy, str(out), input_names=["patch"], output_names=["logits"],
        dynamic_axes={"patch": {0: "n"}, "logits": {0: "n"}}, opset_version=13, dynamo=False,
    )
    meta = {
        "input": f"N x 3 x {MODEL_INPUT_PX} x {MODEL_INPUT_PX} float32 BGR 0-1",
        "classes": ["not one die", 1, 2, 3, 4, 5, 6],
        "trained_on": "nell-byler/dice_detection train split" + ("" if args.all else " minus holdout")
        + (f" + {args.rendered} rendered dice-tray scenes (companion/sim/dice_render.py, seeds "
           f"{RENDER_SEED0}-{RENDER_SEED0 + args.rendered - 1})" if args.rendered else ""),
        "photos": len(train_names),
        "held_out": [] if args.all else sorted(held),
        "held_out_rendered": (f"{args.held_rendered} scenes, seeds {RENDER_HELD_SEED0}-"
                              f"{RENDER_HELD_SEED0 + args.held_rendered - 1}") if args.rendered else None,
        "patches": int(len(y)),
        "patches_photos": int(n_real),
        "patches_rendered": int(len(y) - n_real),
        "patches_by_class": np.bincount(y, minlength=7).tolist(),
        "epochs": args.epochs,
        "init": str(args.init) + " (its first model, batch normalisation frozen)" if args.init else None,
        "lr": args.lr,
        "patches_per_epoch": int(per_epoch),
        "seed": args.seed,
        "weights": int(sum(p.numel() for p in model.parameters())),
        "torch": torch.__version__,
        "threads": args.threads,
        "train_s": int(time.time() - t0),
        "held_out_figures": held_figures,
        "not_used": "the dice-tray photographs (../shared/data/dice-tray) and the photo set's test split",
    }
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {out} ({out.stat().st_size} bytes)")
    return 0


def evaluate(model, x: np.ndarray, y: np.ndarray, torch, F) -> dict:
    """Held-out figures of a trained model on wide patches (the model's centred view, the eight
    turns averaged as :class:`companion.readers.dice.FaceModel` does): dice read right, read as
    another value, read as "not one die"; non-dice read as a die."""
    xt = torch.from_numpy(x).permute(0, 3, 1, 2).float() / 255.0
    base = (1 + 2 * MODEL_MARGIN) / WIDE
    probs = []
    with torch.no_grad():
        for k in range(0, len(xt), 256):
            xb = xt[k : k + 256]
            theta = torch.tensor([[base, 0.0, 0.0], [0.0, base, 0.0]]).expand(len(xb), 2, 3)
            grid = F.affine_grid(theta, (len(xb), 3, MODEL_INPUT_PX, MODEL_INPUT_PX), align_corners=False)
            v = F.grid_sample(xb, grid, mode="bilinear", padding_mode="border", align_corners=False)
            p = 0
            for flip in (False, True):
                vv = torch.flip(v, dims=(3,)) if flip else v
                for r in range(4):
                    p = p + torch.softmax(model(torch.rot90(vv, r, dims=(2, 3))), 1)
            probs.append(p / 8)
    p = torch.cat(probs).numpy()
    pred = p.argmax(1)
    dice = y > 0
    return {
        "dice": int(dice.sum()),
        "right": int((pred[dice] == y[dice]).sum()),
        "other_value": int(((pred[dice] != y[dice]) & (pred[dice] > 0)).sum()),
        "other_value_p_over_0.6": int(((pred[dice] != y[dice]) & (pred[dice] > 0) & (p[dice].max(1) >= 0.6)).sum()),
        "not_one_die": int((pred[dice] == 0).sum()),
        "non_dice": int((~dice).sum()),
        "non_dice_read_as_die": int((pred[~dice] > 0).sum()),
    }


def combine(paths: list[str], out: str) -> None:
    """Several trained models -> one ONNX file: the same input to each, the mean of their
    softmax probabilities, output as log-probabilities (so that a softmax of the output gives
    that mean, as for one model's logits)."""
    import onnx
    from onnx import compose, helper, numpy_helper

    models = [compose.add_prefix(onnx.load(p), prefix=f"m{i}_") for i, p in enumerate(paths)]
    nodes, inits = [], []
    for i, m in enumerate(models):
        g = m.graph
        for node in g.node:
            node.input[:] = ["patch" if x == f"m{i}_patch" else x for x in node.input]
            nodes.append(node)
        inits.extend(g.initializer)
        nodes.append(helper.make_node("Softmax", [f"m{i}_logits"], [f"m{i}_p"], axis=1))
    total = "m0_p"
    for i in range(1, len(models)):
        nodes.append(helper.make_node("Add", [total, f"m{i}_p"], [f"sum{i}"]))
        total = f"sum{i}"
    inits.append(numpy_helper.from_array(np.array([1.0 / len(models)], np.float32), "inv_n"))
    nodes.append(helper.make_node("Mul", [total, "inv_n"], ["mean_p"]))
    inits.append(numpy_helper.from_array(np.array([1e-7], np.float32), "eps"))
    nodes.append(helper.make_node("Add", ["mean_p", "eps"], ["mean_p_eps"]))
    nodes.append(helper.make_node("Log", ["mean_p_eps"], ["logits"]))
    g0 = onnx.load(paths[0]).graph
    graph = helper.make_graph(nodes, "dice_faces_ensemble", [g0.input[0]], [g0.output[0]], inits)
    model = helper.make_model(graph, opset_imports=onnx.load(paths[0]).opset_import)
    model.ir_version = onnx.load(paths[0]).ir_version
    onnx.checker.check_model(model)
    onnx.save(model, out)


def load_onnx_weights(model, path: Path, torch, nn) -> None:
    """Set ``model`` (:func:`build_model`) to the first model of an ONNX file made by this script
    (its convolutions with the batch normalisation folded in): each convolution takes the folded
    weights, each batch normalisation becomes the identity with the folded bias as its shift
    (so the model computes what the file does while its batch statistics stay frozen)."""
    import onnx
    from onnx import numpy_helper

    g = onnx.load(str(path)).graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    prefix = "m0_" if any(k.startswith("m0_") for k in inits) else ""
    convs = [n for n in g.node if n.op_type == "Conv" and (not prefix or n.input[1].startswith(prefix))]
    gemm = next(n for n in g.node if n.op_type == "Gemm" and (not prefix or n.input[1].startswith(prefix)))
    mods = list(model.modules())
    pairs = [(m, mods[i + 1]) for i, m in enumerate(mods) if isinstance(m, nn.Conv2d)]
    if len(pairs) != len(convs):
        raise ValueError(f"{path}: {len(convs)} convolutions, the model has {len(pairs)}")
    with torch.no_grad():
        for (conv, bn), node in zip(pairs, convs):
            conv.weight.copy_(torch.from_numpy(inits[node.input[1]]))
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
            bn.weight.fill_(1.0)
            bn.bias.copy_(torch.from_numpy(inits[node.input[2]]))
        lin = next(m for m in mods if isinstance(m, nn.Linear))
        lin.weight.copy_(torch.from_numpy(inits[gemm.input[1]]))
        lin.bias.copy_(torch.from_numpy(inits[gemm.input[2]]))


def build_model(nn):
    """A small CNN: 3 x 3 convolutions with batch normalisation, 16-32-32-64-64-64 channels
    over 48-24-12-6 px, global average pooling, a linear layer to 7 classes. About 107,000
    weights, 18 million multiply-adds a patch."""

    def conv(cin, cout):
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

    return nn.Sequential(
        *conv(3, 16), nn.MaxPool2d(2),                 # 24
        *conv(16, 32), *conv(32, 32), nn.MaxPool2d(2),  # 12
        *conv(32, 64), *conv(64, 64), nn.MaxPool2d(2),  # 6
        *conv(64, 64),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(64, 7),
    )


def augment(xb, torch, F):
    """Wide patches (``B x 3 x WIDE_PX x WIDE_PX``) -> model inputs ``B x 3 x 48 x 48``."""
    b = xb.shape[0]
    # Crop: the model sees the box grown by MODEL_MARGIN; scale and shift it a little.
    base = (1 + 2 * MODEL_MARGIN) / WIDE
    scale = base * torch.empty(b).uniform_(0.85, 1.2)
    shift = torch.empty(b, 2).uniform_(-0.1, 0.1) / WIDE * 2
    ang = torch.randint(0, 4, (b,)).float() * (np.pi / 2) + torch.empty(b).uniform_(-0.15, 0.15)
    cos, sin = torch.cos(ang) * scale, torch.sin(ang) * scale
    flip = torch.where(torch.rand(b) < 0.5, -1.0, 1.0)
    theta = torch.stack([torch.stack([cos * flip, -sin, shift[:, 0]], 1), torch.stack([sin * flip, cos, shift[:, 1]], 1)], 1)
    grid = F.affine_grid(theta, (b, 3, MODEL_INPUT_PX, MODEL_INPUT_PX), align_corners=False)
    out = F.grid_sample(xb, grid, mode="bilinear", padding_mode="border", align_corners=False)
    # Colour: permute the channels (a red die becomes a blue one), scale each, brightness, contrast.
    perm = torch.stack([torch.randperm(3) for _ in range(b)])
    out = torch.gather(out, 1, perm[:, :, None, None].expand_as(out))
    out = out * torch.empty(b, 3, 1, 1).uniform_(0.8, 1.2)
    mean = out.mean(dim=(1, 2, 3), keepdim=True)
    out = (out - mean) * torch.empty(b, 1, 1, 1).uniform_(0.7, 1.3) + mean * torch.empty(b, 1, 1, 1).uniform_(0.75, 1.25)
    # Blur some (out of focus, motion), noise all.
    blur = torch.rand(b) < 0.25
    if blur.any():
        k = torch.tensor([1.0, 2.0, 1.0])
        k = (k[:, None] * k[None, :]) / 16
        out[blur] = F.conv2d(F.pad(out[blur], (1, 1, 1, 1), mode="replicate"), k.expand(3, 1, 3, 3).contiguous(), groups=3)
    out = out + torch.randn_like(out) * torch.empty(b, 1, 1, 1).uniform_(0, 0.03)
    return out.clamp(0, 1)


if __name__ == "__main__":
    raise SystemExit(main())
