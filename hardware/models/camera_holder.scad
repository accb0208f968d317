// Camera holder: holds a Raspberry Pi Camera Module 3 (or v2: same 25 x 24 mm board and hole
// pattern) looking down, on the end of an overhead arm with a 1/4"-20 camera screw (most desk
// clamp arms, phone/camera overhead arms and ball heads end in one). The camera plate hangs from
// the base on an M3 x 35 bolt with a nyloc nut tightened for friction: tilt it 0 (straight
// down) to at most 35 degrees (the reader's limit, docs/vision.md); there is no printed stop,
// `max_tilt` only poses the preview. The arm's screw goes into the base's captive 1/4"-20 nut.
// Camera Module 3 (standard or wide): 25 x 24 mm, M2 holes 21 x 12.5 mm apart.
// All dimensions in mm. Print both parts flat; `part` chooses which.

part          = "both";  // "base", "plate" or "both"
cam_board     = [25, 24];
cam_holes     = [21, 12.5];  // M2 hole pattern (Camera Module 3 / v2 mechanical drawing)
cam_hole_from_top = 2.5;     // the hole row nearest the board's top edge (connector at the bottom)
m2_pilot      = 1.8;         // M2 self-tapping into the post
post_h        = 4;           // board above the plate: room for the parts on its back
plate_t       = 3;
lens_d        = 9;           // lens clearance (the camera looks through the plate)
ribbon_w      = 17;          // FPC slot (the 15-way, 16 mm wide camera cable)
max_tilt      = 35;          // degrees: the preview's pose (the reader's limit)
nut_af        = 11.2;        // 1/4"-20 hex nut across flats (7/16") + 0.1
nut_h         = 5.6;
screw_clear   = 6.7;         // 1/4" clearance
$fn = 48;

w = cam_board[0] + 10;       // width of both parts
module plate() {
    difference() {
        union() {
            translate([-w / 2, 0, 0]) cube([w, cam_board[1] + 8, plate_t]);
            for (x = [-1, 1], y = [0, 1])
                translate([x * cam_holes[0] / 2, 4 + cam_hole_from_top + y * cam_holes[1], plate_t])
                    cylinder(d = 4.5, h = post_h);
            // hinge knuckles at the plate's back edge
            for (x = [-1, 1]) translate([x * (w / 2 - 3) - 3, -8, 0]) cube([6, 10, plate_t + 5]);
        }
        for (x = [-1, 1], y = [0, 1])
            translate([x * cam_holes[0] / 2, 4 + cam_hole_from_top + y * cam_holes[1], -1])
                cylinder(d = m2_pilot, h = plate_t + post_h + 2);
        // the lens sits 9.5 mm from the board's top edge on Camera Module 3
        translate([0, 4 + 9.5, -1]) cylinder(d = lens_d, h = plate_t + 2);
        translate([-ribbon_w / 2, cam_board[1] + 2, -1]) cube([ribbon_w, 3, plate_t + 2]);
        translate([-w, -5, plate_t / 2 + 2.5]) rotate([0, 90, 0]) cylinder(d = 3.4, h = 2 * w);
    }
}
module base() {
    difference() {
        union() {
            translate([-w / 2 + 6.5, -10, 0]) cube([w - 13, 26, nut_h + 3]);
            // the knuckle between the plate's two
            translate([-w / 2 + 6.5, -10, 0]) cube([w - 13, 10, nut_h + 3 + 6]);
        }
        translate([0, 6, -1]) cylinder(d = screw_clear, h = 20);
        translate([0, 6, -0.01]) cylinder(d = nut_af / cos(30), h = nut_h, $fn = 6);
        translate([-w, -5, nut_h + 3 + 1.5]) rotate([0, 90, 0]) cylinder(d = 3.4, h = 2 * w);
    }
}
if (part == "plate") plate();
else if (part == "base") base();
else { base(); translate([0, -5, nut_h + 4.5]) rotate([max_tilt, 0, 0]) mirror([0, 1, 0]) translate([0, 5, -plate_t / 2 - 2.5]) plate(); }
