// Carousel Companion: what every page shares. No asset from the internet; no polling: the live
// state comes by server-sent events (/api/events), entries go by POST with the page's token.
"use strict";
const Companion = (() => {
  const PAGES = [["/", "Table"], ["/camera", "Camera"], ["/entries", "Entries"], ["/correct", "Correct"],
                 ["/game", "Game"], ["/kids", "Kids"], ["/setup", "Set-up"]];
  // A symbol beside every colour, everywhere (colour-blind players).
  const SYMBOLS = {black: "◆", yellow: "▲", blue: "●", green: "■", red: "♥", orange: "✚", purple: "★", white: "○"};
  const FILL = {black: "#222", yellow: "#f2c200", blue: "#1f6fd1", green: "#1e9e48", red: "#d4202a",
                orange: "#f07f13", purple: "#8a3fc1", white: "#fafafa"};
  const LETTERS = {k: "black", y: "yellow", b: "blue", g: "green", r: "red", ".": "empty"};
  let session = null;
  let last = null;          // the latest state from the server
  let lastAt = 0;           // performance.now() when it came
  window.__latencies = [];  // call-to-DOM, ms (bench/web_latency.py reads it)

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }
  function chip(colour) {
    if (!colour || colour === "empty") return el("span", {class: "chip empty", title: "empty", text: "·"});
    const c = el("span", {class: "chip" + (colour === "yellow" || colour === "white" ? " light" : ""),
                          title: colour, text: SYMBOLS[colour] || "?"});
    c.style.background = FILL[colour] || "#888";
    return c;
  }
  function nav() {
    const n = el("nav");
    for (const [href, name] of PAGES) n.append(el("a", {href, text: name, class: location.pathname === href ? "here" : ""}));
    n.append(el("span", {class: "paused", id: "paused", text: "PAUSED", hidden: ""}));
    n.append(el("span", {class: "conn off", id: "conn", text: "connecting…"}));
    document.body.prepend(n);
  }
  function sessionTime() {  // the session clock now, estimated from the last event
    if (!last) return 0;
    if (last.paused) return last.t || 0;  // the players' pause holds the clock
    return (last.t || 0) + (performance.now() - lastAt) / 1000 * (last.speed || 1);
  }
  async function getSession() {
    const r = await fetch("/api/session", {cache: "no-store"});
    if (!r.ok) throw new Error(await r.text());
    session = await r.json();
    return session;
  }
  async function post(url, obj) {
    if (!session) await getSession();
    let r;
    try {
      r = await fetch(url, {method: "POST", headers: {"content-type": "application/json",
                            "x-companion-token": session.token}, body: JSON.stringify(obj)});
    } catch (e) { return {ok: false, error: "the companion cannot be reached: " + e.message, sentences: []}; }
    const text = await r.text();
    try { return JSON.parse(text); } catch (e) { return {ok: false, error: text.trim() || ("HTTP " + r.status), sentences: []}; }
  }
  // handlers: {hello(h), call(ev), game(ev), state(ev)}; each event carries the latest state.
  function live(handlers) {
    const conn = document.getElementById("conn");
    const es = new EventSource("/api/events");
    const keep = (s) => { if (s) { last = s; lastAt = performance.now();  // every page shows the pause
                                   const p = document.getElementById("paused"); if (p) p.hidden = !s.paused; } };
    es.addEventListener("hello", (m) => { const h = JSON.parse(m.data); keep(h.state); conn.textContent = "live"; conn.className = "conn";
                                          handlers.hello && handlers.hello(h); });
    es.addEventListener("call", (m) => { const ev = JSON.parse(m.data); keep(ev.state); handlers.call && handlers.call(ev);
                                         window.__latencies.push(Date.now() - ev.sent_ms); });
    es.addEventListener("game", async (m) => { const ev = JSON.parse(m.data); keep(ev.state); await getSession();
                                               handlers.game && handlers.game(ev); });
    es.addEventListener("state", (m) => { const ev = JSON.parse(m.data); keep(ev.state); handlers.state && handlers.state(ev); });
    es.onerror = () => { conn.textContent = "reconnecting…"; conn.className = "conn off"; };
    return es;
  }
  // Forms for a game's observations (from /api/session's forms): one field per input.
  function field(f, players, value) {
    const name = f.name.replace(/_/g, " ") + (f.optional ? " (optional)" : "");
    let input;
    if (f.kind === "player") {
      input = el("select", {name: f.name});
      if (f.optional) input.append(el("option", {value: "", text: "—"}));
      for (const p of players) input.append(el("option", {value: p, text: p}));
    } else if (f.kind === "choice" || f.kind === "bool") {
      input = el("select", {name: f.name});
      if (f.optional || f.kind === "bool") input.append(el("option", {value: "", text: "—"}));
      for (const c of (f.kind === "bool" ? ["true", "false"] : f.choices)) input.append(el("option", {value: c, text: c}));
    } else {
      input = el("input", {name: f.name, type: (f.kind === "int" || f.kind === "float") ? "number" : "text",
                           step: f.kind === "float" ? "any" : "1", autocomplete: "off",
                           placeholder: f.kind === "list" ? (f.of === "list" ? "JSON list" : "comma-separated") : ""});
    }
    if (value !== undefined && value !== null) input.value = Array.isArray(value) ? value.join(",") : value;
    return el("label", {}, name, input);
  }
  function parse(f, raw) {  // the form's text -> the JSON value of the field, or undefined (left out)
    raw = raw.trim();
    if (raw === "") return undefined;
    if (f.kind === "int") return Number.isInteger(Number(raw)) ? Number(raw) : raw;
    if (f.kind === "float") return Number(raw);
    if (f.kind === "bool") return raw === "true";
    if (f.kind === "list") {
      if (f.of === "list" || raw.startsWith("[")) { try { return JSON.parse(raw); } catch (e) { return raw; } }
      const items = raw.split(",").map((x) => x.trim()).filter((x) => x !== "");
      if (f.of === "int") return items.map((x) => Number.isInteger(Number(x)) ? Number(x) : x);
      if (f.of === "any") return items.map((x) => (x !== "" && !isNaN(Number(x))) ? Number(x) : x);
      return items;
    }
    return raw;
  }
  function collect(form, fields) {
    const obj = {};
    for (const f of fields) {
      const input = form.elements[f.name];
      if (!input) continue;
      const v = parse(f, input.value);
      if (v !== undefined) obj[f.name] = v;
    }
    return obj;
  }
  function showReply(box, reply) {
    box.hidden = false;
    box.dataset.n = String(Number(box.dataset.n || 0) + 1);  // replies so far (tests wait on it)
    box.className = "reply" + (reply.ok && !(reply.calls || []).some((c) => c.type === "invalid_observation" || c.type.startsWith("illegal")) ? "" : " refused");
    box.textContent = "";
    const lines = reply.sentences && reply.sentences.length ? reply.sentences
                : (reply.ok ? [reply.pending ? "sent; the referee has not answered yet" : "accepted"] : [reply.error || "refused"]);
    for (const s of lines) box.append(el("div", {text: s}));
  }
  const GAME_NAMES = {"carrousel": "Carrousel", "monsieur-carrousel": "Monsieur Carrousel", "carrossel": "Carrossel", "carnival": "Carnival"};
  return {el, chip, nav, live, post, getSession, field, collect, showReply, sessionTime, SYMBOLS, FILL, LETTERS, GAME_NAMES,
          get session() { return session; }, get state() { return last; }};
})();
