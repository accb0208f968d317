// Monsieur Carrousel for small kids: pictures, no text needed. The die's colour (with its
// symbol, for colour-blind players), the seat to take, sun or rain, the raindrops and sunbeams.
"use strict";
const {el, nav, live, FILL, SYMBOLS, GAME_NAMES} = Companion;
nav();
const NS = "http://www.w3.org/2000/svg";
function svg(inner) { const s = document.createElementNS(NS, "svg"); s.setAttribute("viewBox", "0 0 100 100"); s.innerHTML = inner; return s; }
const SUN = `<g fill="#f6b700" stroke="#e08a00" stroke-width="2"><circle cx="50" cy="50" r="22"/>` +
  [...Array(8).keys()].map((i) => `<rect x="47" y="6" width="6" height="18" rx="3" transform="rotate(${i * 45} 50 50)"/>`).join("") + "</g>";
const RAIN = `<path d="M28 48 a18 18 0 0 1 30 -16 a14 14 0 0 1 22 14 a10 10 0 0 1 -2 20 h-48 a10 10 0 0 1 -2 -18z" fill="#9aa7b5"/>` +
  [30, 50, 70].map((x) => `<path d="M${x} 74 q-5 9 0 14 q5 -5 0 -14z" fill="#1f6fd1"/>`).join("");
const DROP = (x, on) => `<path d="M${x} 10 q-9 16 0 22 q9 -6 0 -22z" fill="${on ? "#1f6fd1" : "#dde3ea"}"/>`;
const BEAM = (x, on) => `<circle cx="${x}" cy="70" r="7" fill="${on ? "#f6b700" : "#eee"}"/>`;
let die = null, seat = null, zone = null, player = "";
function draw(state) {
  const s = (state && state.summary) || {};
  const d = document.getElementById("die"); d.textContent = "";
  d.append(svg(die ? `<rect x="12" y="12" width="76" height="76" rx="14" fill="${FILL[die] || "#888"}" stroke="#0005" stroke-width="3"/>` +
                     `<text x="50" y="66" font-size="44" text-anchor="middle" fill="${die === "yellow" ? "#222" : "#fff"}">${SYMBOLS[die] || "?"}</text>`
                   : `<rect x="12" y="12" width="76" height="76" rx="14" fill="#eee" stroke="#bbb" stroke-width="3"/>`));
  d.dataset.colour = die || "";
  const st = document.getElementById("seat"); st.textContent = "";
  st.append(svg(seat !== null ? `<rect x="20" y="40" width="60" height="40" rx="8" fill="${FILL[seat.colour] || "#888"}"/>` +
                `<rect x="20" y="14" width="14" height="40" rx="6" fill="${FILL[seat.colour] || "#888"}"/>` +
                `<text x="52" y="70" font-size="26" text-anchor="middle" fill="#fff">${SYMBOLS[seat.colour] || ""}</text>` : ""));
  st.dataset.seat = seat !== null ? seat.seat : "";
  const w = document.getElementById("weather"); w.textContent = "";
  w.append(svg(zone === "sun" ? SUN : zone === "rain" ? RAIN : ""));
  w.dataset.zone = zone || "";
  const sky = document.getElementById("sky"); sky.textContent = "";
  const max = s.raindrops_max || 8, drops = s.raindrops || 0, beams = s.sunbeams || 0;
  let inner = "";
  for (let i = 0; i < max; i++) inner += DROP(8 + i * 12, i < drops);
  for (let i = 0; i < 5; i++) inner += BEAM(14 + i * 18, i < beams);
  sky.append(svg(inner));
  sky.dataset.raindrops = drops; sky.dataset.sunbeams = beams;
  document.getElementById("who").textContent = player;
}
function take(ev) {
  const c = ev.call || {};
  if (c.player) player = c.player;
  if (ev.type === "turn") { die = null; seat = null; zone = null; }
  if (c.colour && (ev.type === "seat_kid" || ev.type === "spin" || ev.type === "twins_help")) die = c.colour;
  if (ev.type === "seat_kid") seat = {seat: c.seat, colour: c.colour};
  if (ev.type === "weather") zone = c.zone;
}
// The pictures are Monsieur Carrousel's: at a table playing another game, a sentence says so.
function forMonsieur(state) {
  const game = state && state.game;
  if (!game) return true;  // no game yet
  const other = game !== "monsieur-carrousel";
  document.querySelector(".kids").hidden = other;
  document.getElementById("who").hidden = other;
  const note = document.getElementById("other-game");
  note.hidden = !other;
  note.dataset.game = other ? game : "";
  note.textContent = other ? `The kids' view is for Monsieur Carrousel; this table plays ${GAME_NAMES[game] || game}: ` +
    "its game is on " : "";
  if (other) note.append(el("a", {href: "/", text: "the table's page"}), ".");
  return !other;
}
live({
  hello(h) { for (const ev of h.history) take(ev); if (forMonsieur(h.state)) draw(h.state); },
  call(ev) { take(ev); if (forMonsieur(ev.state)) draw(ev.state); },
  game(ev) { die = seat = zone = null; if (forMonsieur(ev.state)) draw(ev.state); },
});
