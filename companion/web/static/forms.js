// The entries and correction pages: a form per observation of the game being refereed, built
// from the vocabulary the server describes (/api/session's forms); each entry is POSTed to
// /api/entry, goes through the entry source (journaled, judged), and the referee's answer is
// shown in words, a refusal too.
"use strict";
const EntryPage = (() => {
  const {el, chip, nav, live, post, getSession, field, collect, showReply, LETTERS} = Companion;
  const COLOURS = ["black", "yellow", "blue", "green", "red"];
  let fields = [];

  function boardEditor(name, count, current, withEmpty) {  // spaces / a card: one select per place, a symbol per colour
    const box = el("div", {class: "spaces", "data-field": name});
    for (let i = 0; i < count; i++) {
      const s = el("select", {name: `${name}.${i}`, "aria-label": `${name} ${i}`});
      for (const c of (withEmpty ? ["empty", ...COLOURS] : COLOURS)) s.append(el("option", {value: c, text: `${Companion.SYMBOLS[c] || "·"} ${c}`}));
      if (current && current[i]) s.value = current[i];
      box.append(s);
    }
    return el("label", {}, name, box);
  }

  function build(kind) {
    const s = Companion.session;
    const box = document.getElementById("fields");
    box.textContent = "";
    fields = (s.forms[kind] || []);
    const summary = (Companion.state && Companion.state.summary) || {};
    for (const f of fields) {
      if (s.game === "carrousel" && f.name === "spaces") {
        box.append(boardEditor("spaces", 7, (summary.position || "").split("").map((c) => LETTERS[c]), true));
      } else if (s.game === "carrousel" && f.name === "card") {
        box.append(boardEditor("card", 3, null, false));
      } else {
        box.append(field(f, s.players, f.name === "player" ? summary.player : undefined));
      }
    }
  }

  function gather(form) {
    const obj = collect(form, fields.filter((f) => !form.querySelector(`[data-field='${f.name}']`)));
    for (const f of fields) {
      const ed = form.querySelector(`[data-field='${f.name}']`);
      if (ed) obj[f.name] = [...ed.querySelectorAll("select")].map((x) => x.value);
    }
    return obj;
  }

  async function send(obj) {
    const reply = await post("/api/entry", obj);
    showReply(document.getElementById("reply"), reply);
    return reply;
  }

  function addCall(ev) {
    const list = document.getElementById("calls");
    if (ev.spoken === false) return;
    const bad = ev.type === "invalid_observation" || ev.type.startsWith("illegal");
    list.prepend(el("li", {class: bad ? "refused" : "", "data-type": ev.type}, el("span", {class: "t", text: (ev.t || 0).toFixed(1) + " s"}), ev.sentence));
    while (list.children.length > 6) list.lastChild.remove();
  }

  async function setup(opts) {
    const s = await getSession();
    const select = document.getElementById("kind");
    select.textContent = "";
    const kinds = opts.kinds === "corrections" ? s.corrections : Object.keys(s.forms);
    const none = document.getElementById("none");
    if (!s.game) {
      document.getElementById("context").textContent = "No game is being refereed now: start one on the Game page.";
    }
    if (none) {
      none.hidden = kinds.length > 0;
      none.textContent = s.game ? `The ${s.game} referee has no correction entry: a wrong entry cannot be undone yet; ` +
        "tell the table and play on (every entry stays in the journal)." : "";
    }
    document.getElementById("entry").hidden = kinds.length === 0;
    for (const k of kinds) select.append(el("option", {value: k, text: k.replace(/_/g, " ")}));
    if (kinds.length) build(kinds[0]);
    const yn = document.getElementById("yesno");
    if (yn && opts.kinds !== "corrections") yn.hidden = !s.forms.answer;
  }

  async function start(opts) {
    nav();
    await setup(opts);
    document.getElementById("kind").addEventListener("change", (e) => build(e.target.value));
    document.getElementById("entry").addEventListener("submit", async (e) => {
      e.preventDefault();
      await send({type: document.getElementById("kind").value, ...gather(e.target)});
    });
    const raw = document.getElementById("raw");
    if (raw) raw.addEventListener("submit", async (e) => {
      e.preventDefault();
      let obj;
      try { obj = JSON.parse(document.getElementById("rawtext").value); }
      catch (err) { showReply(document.getElementById("reply"), {ok: false, error: "not JSON: " + err.message}); return; }
      await send(obj);
    });
    for (const [id, value] of [["yes", "yes"], ["no", "no"]]) {
      const b = document.getElementById(id);
      if (b) b.addEventListener("click", () => send({type: "answer", value}));
    }
    live({
      hello(h) {  // the state is known now: fill the form from it (the board as the referee believes it)
        for (const ev of h.history.slice(-6)) addCall(ev);
        const kind = document.getElementById("kind").value;
        if (kind) build(kind);
      },
      call: addCall,
      async game() { await setup(opts); },
    });
  }
  return {start};
})();
