// Marker cap: carries the ArUco marker of a TURNING part flat and centred on its axis.
//   "roof"  : Monsieur Carrousel's roof marker (id 9, 30 mm black square on 38 mm paper),
//             a cap pressed onto the roof's flat top (DESIGN.md: the roof marker gives the
//             carousel's angle);
//   "board" : Carrossel's centre marker (id 14, 30 mm on 38 mm paper), a disc with a peg into
//             the round board's centre hole (or stuck on the centre with double-sided tape).
// Print the marker with `companion calibrate markers` at 100 %, cut it to the paper square and
// glue it in the recess with its top edge towards the notch: the notch points at the part's
// zero mark (the marker's top edge is its angle 0). All dimensions in mm.

variant      = "roof";   // "roof" or "board"
paper        = 38;       // marker paper square (black square 30 mm + 4 mm white all round)
recess       = 0.4;      // depth of the paper's recess
plate_t      = 2.4;
roof_top_d   = 60;       // MEASURE: the roof's flat top (the photographed table: 60)
skirt_h      = 4;        // how far the cap's skirt reaches down the roof's top
fit          = 0.2;
peg_d        = 0;        // "board": peg into the board's centre hole; 0 = none (tape) (MEASURE)
peg_h        = 5;
$fn = 96;

module marker_cap() {
    top_d = variant == "roof" ? roof_top_d + 2 * (fit + 1.6) : paper * sqrt(2) + 4;
    difference() {
        union() {
            cylinder(d = top_d, h = plate_t);
            if (variant == "roof") translate([0, 0, -skirt_h]) difference() {
                cylinder(d = top_d, h = skirt_h);
                translate([0, 0, -1]) cylinder(d = roof_top_d + 2 * fit, h = skirt_h + 1);
            }
            if (variant == "board" && peg_d > 0) translate([0, 0, -peg_h]) cylinder(d = peg_d, h = peg_h);
        }
        translate([-paper / 2 - fit, -paper / 2 - fit, plate_t - recess]) cube([paper + 2 * fit, paper + 2 * fit, 1]);
        // the notch: towards the marker's top edge, i.e. the part's zero mark
        translate([0, top_d / 2, -skirt_h - 1]) cylinder(d = 3, h = plate_t + skirt_h + 2, $fn = 3);
    }
}

marker_cap();
