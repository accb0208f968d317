// Pivot coupler (Monsieur Carrousel, centre coupling): a sleeve pressed over the carousel's
// pivot from below, with a 6 mm stub that goes into the flexible beam coupling (BOM 6) on the
// encoder shaft. One encoder turn per carousel turn (gear_ratio = 1).
// All dimensions in mm. Print standing (stub up), 100 % infill for the stub.
//
// The pivot's size is NOT public: MEASURE the pin (or the hole) under the carousel with a
// caliper and set pivot_d; a hole in the carousel instead of a pin: set pivot_is_hole = true
// and the sleeve becomes a plug.

pivot_d        = 8.0;    // MEASURE: the pivot pin's diameter (or the hole's)
pivot_is_hole  = false;  // true: plug into a hole instead of a sleeve over a pin
fit            = 0.15;   // radial clearance for a snug press fit (tune to your printer)
grip_len       = 12;     // length of the sleeve/plug on the pivot
wall           = 3;      // sleeve wall
stub_d         = 6.0;    // into the beam coupling's 6 mm bore
stub_len       = 10;     // coupling's half length (BOM 6: L25) less 2.5 mm
flat_depth     = 0.5;    // D-flat for the coupling's set screw
set_screw_d    = 2.8;    // M3 tapped (or self-tapping) into the sleeve
$fn = 64;

module pivot_coupler() {
    outer = pivot_is_hole ? pivot_d - 2 * fit : pivot_d + 2 * (fit + wall);
    difference() {
        union() {
            cylinder(d = outer, h = grip_len);
            translate([0, 0, grip_len]) cylinder(d = max(outer, stub_d + 4), h = 2);  // shoulder
            translate([0, 0, grip_len + 2]) difference() {
                cylinder(d = stub_d, h = stub_len);
                translate([stub_d / 2 - flat_depth, -stub_d, 0]) cube([stub_d, 2 * stub_d, stub_len + 1]);
            }
        }
        if (!pivot_is_hole) {
            translate([0, 0, -1]) cylinder(d = pivot_d + 2 * fit, h = grip_len + 1);
            translate([0, 0, grip_len / 2]) rotate([0, 90, 0]) cylinder(d = set_screw_d, h = outer);
        }
    }
}

pivot_coupler();
