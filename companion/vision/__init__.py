"""The camera reader: frames in, readings of the table out.

* :mod:`companion.vision.registration` - ArUco markers at known places give a homography from
  the image to board millimetres (:class:`~companion.vision.registration.Registrar`).
* :mod:`companion.vision.colour` - region colours in CIE Lab against a white reference, with
  abstention, and the settle-time :class:`~companion.vision.colour.Stabiliser`.
* :mod:`companion.vision.carrousel` - the Carrousel reader: the 7 spaces and the players' cards.
* :mod:`companion.vision.frames` - frame sources (picamera2, OpenCV ``VideoCapture``, an image
  folder, the simulated camera) behind one interface.
* :mod:`companion.vision.sim` - the simulated camera: rendered frames with their ground truth.
* :mod:`companion.vision.calibration` - intrinsics from chessboard views, the printable marker
  sheet, the horses' reference colours.

A frame is always ``H x W x 3 uint8, BGR`` (OpenCV's order). Board coordinates are millimetres
with the origin at the mat centre, x right and y up as seen from above.
"""
