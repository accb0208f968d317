// The table: game, players, scores, whose turn, the last calls in plain sentences, and each
// game's own board: the dead end's countdown (Carrousel), raindrops and sunbeams (Monsieur
// Carrousel), sectors facing each booth (Carrossel), midways and tickets (Carnival).
"use strict";
const {el, chip, nav, live, LETTERS, GAME_NAMES} = Companion;
nav();
const callsBox = document.getElementById("calls");
let countdownBox = null;

function addCall(ev, top = true) {
  if (ev.spoken === false) return;  // every legal move: the board shows it, the list does not
  const refused = ev.type === "invalid_observation" || ev.type.startsWith("illegal") || ev.type === "penalty";
  const li = el("li", {class: refused ? "refused" : "", "data-type": ev.type, "data-seq": ev.seq},
                el("span", {class: "t", text: (ev.t || 0).toFixed(1) + " s"}), ev.sentence);
  if (top) callsBox.prepend(li); else callsBox.append(li);
  while (callsBox.children.length > 12) callsBox.lastChild.remove();
}

function scoresOf(game, s) {
  if (game === "carrossel") return s.vp || {};
  if (game === "carnival") return {};  // four complete rides win: the rides are shown, not a number
  return s.scores || {};
}

function render(state) {
  const game = state.game, s = state.summary || {};
  document.getElementById("title").textContent = game
    ? `${GAME_NAMES[game] || game}${state.over ? " — over" : ""}${state.table === "sim" ? " (simulated table)" : ""}`
    : "No game is being refereed";
  const whose = s.player || null;
  const scores = scoresOf(game, s);
  const box = document.getElementById("players");
  box.textContent = "";
  for (const p of state.players || []) {
    const card = el("div", {class: "panel player" + (p === whose ? " turn" : ""), "data-player": p},
                    el("span", {class: "score", text: scores[p] !== undefined ? String(scores[p]) : ""}),
                    el("div", {class: "name", text: p + (p === whose ? "  ← turn" : "")}));
    if (game === "carrousel" && s.cards && s.cards[p]) card.append(el("div", {class: "big"}, "card ", ...s.cards[p].map(chip)));
    if (game === "carrossel") {
      if (s.sectors && s.sectors[p]) card.append(el("div", {class: "big", text: "facing sector " + s.sectors[p].join(", ")}));
      if ((s.waiting_for || []).includes(p)) card.append(el("div", {class: "muted", text: "to play"}));
    }
    if (game === "carnival") {
      card.append(el("div", {text: `tickets ${(s.tickets || {})[p] ?? 0} · cards in hand ${(s.hands || {})[p] ?? 0}`}));
      const t = el("table");
      for (const [ride, cards] of Object.entries((s.midways || {})[p] || {})) t.append(el("tr", {}, el("td", {text: ride.replace(/_/g, " ")}), el("td", {text: cards})));
      card.append(t);
    }
    box.append(card);
  }
  const extra = document.getElementById("extra");
  extra.textContent = "";
  countdownBox = null;
  if (game === "carrousel") {
    const spaces = (s.position || "").split("").map((c) => LETTERS[c] || "empty");
    extra.append(el("div", {class: "panel"}, el("div", {class: "muted", text: "the carousel, spaces 0-6"}),
                    el("div", {class: "spaces"}, ...spaces.map(chip)),
                    el("div", {class: "muted", text: `first to ${s.target || "?"} points`})));
    countdownBox = el("div", {class: "countdown", id: "countdown"});
    extra.append(el("div", {class: "panel"}, el("div", {class: "muted", text: "dead end in"}), countdownBox));
  } else if (game === "monsieur-carrousel") {
    extra.append(el("div", {class: "panel big", id: "weather"},
      el("div", {text: `raindrops ${s.raindrops ?? 0} of ${s.raindrops_max ?? 8}`}),
      el("div", {text: `sunbeams ${s.sunbeams ?? 0} (fragments ${s.fragments ?? 0})`}),
      el("div", {text: `kids seated ${s.seated ?? 0}`}),
      el("div", {class: "muted", text: `phase ${s.phase || ""}`})));
  } else if (game === "carrossel") {
    extra.append(el("div", {class: "panel big"},
      el("div", {text: `round ${s.round ?? 0} · ${s.phase || ""}`}),
      el("div", {text: `board at ${s.angle_deg ?? 0}° · turning ${s.direction || ""}`})));
  } else if (game === "carnival") {
    extra.append(el("div", {class: "panel big"},
      el("div", {text: `turn ${s.turn ?? 0} · ${s.player || ""} · step ${s.step || ""}`}),
      el("div", {text: `${(s.rolled || []).length ? `rolled ${s.rolled.join(" ")} · choose two` : `dice ${(s.dice || []).join(" ") || "—"}`} · deck ${s.deck ?? 0} · discard ${s.discard_top || "—"}`})));
  }
  tick();
}

function tick() {  // the dead end's countdown, from the referee's deadline and the session clock
  if (!countdownBox) return;
  const st = Companion.state;
  if (!st || st.deadline === null || st.deadline === undefined || st.over) { countdownBox.textContent = "—"; return; }
  const left = Math.max(0, st.deadline - Companion.sessionTime());
  countdownBox.textContent = Math.ceil(left) + " s";
}
setInterval(tick, 250);  // redraws the countdown only; nothing is fetched

live({
  hello(h) { callsBox.textContent = ""; for (const ev of h.history) addCall(ev); render(h.state); },
  call(ev) { addCall(ev); render(ev.state); },
  game(ev) { callsBox.textContent = ""; render(ev.state); },
  state(ev) { render(ev.state); },
});
