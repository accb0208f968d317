// Button box: a box with a lid for panel-mount push buttons, and a cable exit at the back.
// Two presets: "kids" (YES green, NO red, electronic die white: three 30 mm arcade buttons,
// Monsieur Carrousel) and "seat" (one 24 mm arcade claim button for one player, Carrousel;
// print four). Arcade buttons need 30 mm / 24 mm holes and about 35 mm of depth under the panel
// with their microswitch. All dimensions in mm. Print the box open side up, the lid flat.

preset       = "kids";       // "kids" or "seat"
part         = "both";       // "box", "lid" or "both"
wall         = 2.4;
depth        = 40;           // inside height under the panel: the button and its microswitch
spacing      = 12;           // between buttons' holes and to the walls
cable_d      = 7;            // grommet/cable exit at the back
screw_d      = 2.8;          // M3 self-tapping into the lid posts
labels       = true;
$fn = 72;

holes  = preset == "kids" ? [30, 30, 30] : [24];
names  = preset == "kids" ? ["YES", "NO", "DIE"] : ["CLAIM"];
inner  = [len(holes) * (max(holes) + spacing) + spacing, max(holes) + 2 * spacing + (labels ? 10 : 0)];

module box() {
    difference() {
        translate([-wall, -wall, 0]) cube([inner[0] + 2 * wall, inner[1] + 2 * wall, depth + wall]);
        translate([0, 0, wall]) cube([inner[0], inner[1], depth + 1]);
        translate([inner[0] / 2, inner[1] + wall + 1, wall + depth / 2]) rotate([90, 0, 0])
            cylinder(d = cable_d, h = wall + 2);
    }
    for (x = [0, inner[0] - 6], y = [0, inner[1] - 6]) translate([x, y, 0]) difference() {
        cube([6, 6, depth + wall]);
        translate([3, 3, wall + 1]) cylinder(d = screw_d, h = depth);
    }
}
module lid() {
    difference() {
        translate([-wall, -wall, 0]) cube([inner[0] + 2 * wall, inner[1] + 2 * wall, wall]);
        for (i = [0 : len(holes) - 1])
            translate([spacing + (max(holes) + spacing) * i + max(holes) / 2, spacing + max(holes) / 2 + (labels ? 10 : 0), -1])
                cylinder(d = holes[i] + 0.3, h = wall + 2);
        for (x = [3, inner[0] - 3], y = [3, inner[1] - 3]) translate([x, y, -1]) cylinder(d = 3.4, h = wall + 2);
        if (labels) for (i = [0 : len(holes) - 1])
            translate([spacing + (max(holes) + spacing) * i + max(holes) / 2, 5, wall - 0.6])
                linear_extrude(1) text(names[i], size = 6, halign = "center");
    }
}
if (part == "box") box();
else if (part == "lid") lid();
else { box(); translate([0, 0, depth + wall + 15]) lid(); }
