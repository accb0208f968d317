// Carrossel bearing hub: the centre piece of the turntable under Carrossel's round board.
// It is screwed, centred, to the UNDERSIDE of the turntable disc (300 mm plywood or MDF on a
// lazy-susan bearing) and turns with it. It carries (1) a 6 mm stub on the axis that goes down
// through the bearing's open centre and the base plate into the encoder's beam coupling
// (centre coupling, gear_ratio = 1), (2) the index magnet in the tip of one arm, facing down
// at the hall sensor lying on the base plate.
// All dimensions in mm. Print flat (arms on the bed, stub up), 4 perimeters, 50 % infill.
//
// The stack, bottom to top (z = 0 is the base plate's top):
//   base plate, 12 mm plywood 420 x 420, a 12 mm hole on the axis for the stub;
//   lazy-susan bearing (BOM: 152 mm / 6 inch square, about 8 mm tall, open centre >= 100 mm)
//   screwed to the base plate;
//   turntable disc screwed to the bearing's turning plate; this hub under it, inside the
//   bearing's opening; the round board lies on the disc.
// Under the base plate: encoder_mount.scad (shaft up, on the axis) and the beam coupling.

bearing_opening = 110;   // MEASURE: the bearing's open centre; the hub must turn freely inside
bearing_h       = 8;     // MEASURE: the bearing's height = the disc's underside above the base
span            = 90;    // tip to tip; less than bearing_opening - 10
arm_w           = 14;
arm_t           = 4;     // leaves bearing_h - arm_t = 4 mm above the base plate for the sensor
hub_d           = 26;
screw_d         = 4.0;   // 3.5 x 12 wood screws into the disc
stub_d          = 6.0;   // into the beam coupling's 6 mm bore
stub_len        = 30;    // (bearing_h - arm_t) + base plate 12 + coupling half 10 + 4
magnet_d        = 6.2;   // BOM: 6 x 3 mm neodymium disc, + 0.2 clearance
magnet_h        = 3.2;
$fn = 64;

assert(span < bearing_opening - 10, "span: the hub would rub on the bearing's opening");

module carrossel_bearing_hub() {
    r = span / 2;
    difference() {
        union() {
            cylinder(d = hub_d, h = arm_t + 2);
            for (k = [0 : 3]) rotate(90 * k) translate([0, -arm_w / 2, 0]) cube([r - arm_w / 2, arm_w, arm_t]);
            for (k = [0 : 3]) rotate(90 * k) translate([r - arm_w / 2, 0, 0]) cylinder(d = arm_w, h = arm_t);
            // the stub, printed upwards; in use it points down
            cylinder(d = stub_d, h = arm_t + stub_len);
        }
        // wood screws into the disc, half way along each arm
        for (k = [0 : 3]) rotate(90 * k) translate([r * 0.55, 0, -1]) {
            cylinder(d = screw_d, h = arm_t + 2);
            cylinder(d1 = screw_d * 2, d2 = screw_d, h = 1 + screw_d / 2);  // countersink (disc side)
        }
        // the index magnet in arm 0's tip, open on the side that faces down in use
        translate([r - arm_w / 2, 0, arm_t - magnet_h + 0.01]) cylinder(d = magnet_d, h = magnet_h);
        // D-flat for the coupling's set screw
        translate([stub_d / 2 - 0.5, -stub_d, arm_t + 6]) cube([stub_d, 2 * stub_d, stub_len]);
    }
}

carrossel_bearing_hub();
