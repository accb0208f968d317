// Encoder mount: a flat plate that holds the 600-line shaft encoder (BOM: LPD3806-600BM)
// with its shaft on the rotating part's axis, screwed under the game's base or the table top.
// Used for Monsieur Carrousel's centre coupling and for Carrossel's bearing (centre coupling).
// All dimensions in mm. Print flat, 0.2 mm layers, 4 perimeters, 40 % infill, PETG or PLA.
//
// ENCODER values: the LPD3806 as sellers list it (body 38 mm, front boss 20 mm, 3 x M3 on a
// 30 mm circle, 6 mm shaft). MEASURE YOUR ENCODER and change them: a different encoder only
// changes these five numbers.

encoder_body_d   = 38;    // encoder body diameter
encoder_boss_d   = 20;    // raised boss around the shaft on the mounting face
encoder_hole_pcd = 30;    // pitch circle of the mounting screws
encoder_hole_d   = 3.4;   // M3 clearance
encoder_holes    = 3;     // number of mounting screws
shaft_drop       = 25;    // axis to plate: standoff height = beam coupling length (BOM 6: 25) + clearance

plate_w          = 70;    // plate side
plate_t          = 5;     // plate thickness
screw_d          = 4.5;   // wood screws (4 x 16) into the base
screw_inset      = 7;     // from the plate's edge
standoff_h       = 30;    // plate to encoder face: coupling length + about 5 mm
standoff_d       = 8;
cable_slot_w     = 8;     // slot for the encoder's cable
$fn = 64;

module encoder_mount() {
    difference() {
        union() {
            // the plate that screws to the underside of the base
            translate([-plate_w / 2, -plate_w / 2, 0]) cube([plate_w, plate_w, plate_t]);
            // three standoffs that hold the encoder's face below the plate
            for (k = [0 : encoder_holes - 1])
                rotate(90 + k * 360 / encoder_holes)
                    translate([encoder_hole_pcd / 2, 0, -standoff_h + plate_t])
                        cylinder(d = standoff_d, h = standoff_h);
        }
        // shaft and boss clearance through the plate
        translate([0, 0, -standoff_h]) cylinder(d = encoder_boss_d + 1, h = standoff_h + plate_t + 1);
        // M3 through each standoff (screw from the encoder's side into a nut above the plate)
        for (k = [0 : encoder_holes - 1])
            rotate(90 + k * 360 / encoder_holes) translate([encoder_hole_pcd / 2, 0, -standoff_h]) {
                cylinder(d = encoder_hole_d, h = standoff_h + plate_t + 1);
                translate([0, 0, standoff_h + plate_t - 2.5]) cylinder(d = 6.4, h = 3, $fn = 6);  // M3 nut
            }
        // wood screws
        for (x = [-1, 1], y = [-1, 1])
            translate([x * (plate_w / 2 - screw_inset), y * (plate_w / 2 - screw_inset), -1])
                cylinder(d = screw_d, h = plate_t + 2);
        // cable slot
        translate([encoder_body_d / 2 - 2, -cable_slot_w / 2, -1]) cube([plate_w, cable_slot_w, plate_t + 2]);
    }
}

encoder_mount();
