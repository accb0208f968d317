// Friction wheel for the rim mounting (BOM 7): a 20 mm wheel on the encoder's 6 mm D-shaft with
// a groove for a rubber O-ring tyre, pressed against the rotating part's rim or underside.
// gear_ratio = part diameter at the contact / wheel_d (tyre included).
// All dimensions in mm.

wheel_d      = 20;    // over the tyre: the diameter that sets gear_ratio
oring_cs     = 2.0;   // O-ring cross-section (e.g. 16 x 2 mm NBR)
width        = 6;
shaft_d      = 6.0;   // encoder shaft
d_flat       = 5.5;   // across the flat of a D-shaft (LPD3806: 5.5)
fit          = 0.1;
hub_len      = 8;
set_screw_d  = 2.8;
$fn = 96;

module friction_wheel() {
    core_d = wheel_d - oring_cs;  // the O-ring sits half in its groove
    difference() {
        union() {
            cylinder(d = core_d, h = width);
            cylinder(d = 12, h = width + hub_len);
        }
        // O-ring groove, 0.75 of the cross-section deep
        translate([0, 0, width / 2]) rotate_extrude() translate([core_d / 2, 0]) circle(d = oring_cs * 1.05);
        // D bore
        translate([0, 0, -1]) intersection() {
            cylinder(d = shaft_d + 2 * fit, h = width + hub_len + 2);
            translate([-shaft_d, -shaft_d, 0]) cube([shaft_d + d_flat - shaft_d / 2 + fit, 2 * shaft_d, width + hub_len + 2]);
        }
        translate([0, 0, width + hub_len / 2]) rotate([0, 90, 0]) cylinder(d = set_screw_d, h = 10);
    }
}

friction_wheel();
