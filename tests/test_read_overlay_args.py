"""``companion read ... --overlay OUT``: an empty OUT, or an image file name for several images,
is refused in one line before anything is read (no folder named one.png/ is made)."""

from __future__ import annotations

from pathlib import Path

from companion.cli import main

PHOTO = Path(__file__).parent / "data" / "carrousel-table" / "images" / "carrousel_024.jpg"
SECOND = PHOTO.with_name("carrousel_027.jpg")


def _refused(capsys, *args: str) -> str:
    assert main(["read", "carrousel", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err and err.strip().count("\n") == 0
    return err


def test_several_images_with_an_image_file_name_are_refused_without_making_a_folder(tmp_path, capsys):
    one = tmp_path / "one.png"
    err = _refused(capsys, str(PHOTO), str(SECOND), "--overlay", str(one))
    assert f"--overlay {one}: an image file name" in err and "give a folder" in err
    assert not one.exists()


def test_several_images_with_an_existing_file_are_refused(tmp_path, capsys):
    one = tmp_path / "notes.txt"
    one.write_text("x")
    err = _refused(capsys, str(PHOTO), str(SECOND), "--overlay", str(one))
    assert f"--overlay {one}: a file" in err and one.read_text() == "x"


def test_an_empty_overlay_is_refused_not_ignored(capsys):
    err = _refused(capsys, str(PHOTO), "--overlay", "")
    assert "--overlay: empty" in err


def test_one_image_with_a_new_folder_ending_in_a_slash_writes_into_that_folder(tmp_path, capsys):
    folder = tmp_path / "annotated"
    assert main(["read", "carrousel", str(PHOTO), "--overlay", f"{folder}/"]) == 0
    capsys.readouterr()
    assert [p.name for p in folder.iterdir()] == ["carrousel_024_overlay.png"]
