// Hall sensor holder: holds the A3144 (TO-92S) on the FIXED part so the magnet on the turning
// part passes 2-5 mm from the sensor's flat (marked) face once a turn.
//   face = "up"   : the sensor lies flat, marked face up, under a magnet that faces down
//                   (Carrossel: on the base plate under the hub's arm; Monsieur Carrousel: on
//                   the base under the turning top). Legs bent 90 degrees, out at the back.
//   face = "side" : the sensor stands, marked face towards -y, beside a magnet on a rim.
// All dimensions in mm. Glue or screw it down; check the gap with `companion encoder monitor`
// (the index line says "referenced" when the magnet passes).

face         = "up";
sensor_w     = 4.2;    // TO-92S body 4.0 x 3.0 x 1.6 (+ clearance)
sensor_l     = 3.4;
sensor_t     = 1.8;
sensor_h     = 8;      // "side": height of the sensor's centre above the base = the magnet's
block        = [16, 12];
base_t       = 2.0;    // "up": the sensor's face ends level with the block's top, base_t + sensor_t
screw_d      = 3.4;
$fn = 48;

module hall_holder() {
    if (face == "up") difference() {
        translate([-block[0] / 2, -block[1] / 2, 0]) cube([block[0], block[1], base_t + sensor_t]);
        translate([-sensor_w / 2, -sensor_l / 2, base_t]) cube([sensor_w, sensor_l, sensor_t + 1]);
        translate([-sensor_w / 2, -sensor_l / 2, base_t + 0.6]) cube([sensor_w, block[1], sensor_t]);  // legs
        for (x = [-1, 1]) translate([x * (block[0] / 2 - 3), 0, -1]) cylinder(d = screw_d, h = 10);
    } else difference() {
        union() {
            translate([-block[0] / 2 - 6, 0, 0]) cube([block[0] + 12, block[1], 3]);
            translate([-block[0] / 2, 0, 0]) cube([block[0], block[1], sensor_h + 4]);
        }
        translate([-sensor_w / 2, 0.6, sensor_h - sensor_l / 2]) cube([sensor_w, sensor_t, 20]);
        translate([-sensor_w / 2, 0.6, -1]) cube([sensor_w, sensor_t, sensor_h]);
        translate([-sensor_w / 2, 0.6, -0.01]) cube([sensor_w, block[1], 2]);
        for (x = [-1, 1]) translate([x * (block[0] / 2 + 3), block[1] / 2, -1]) cylinder(d = screw_d, h = 5);
    }
}

hall_holder();
