"use strict";
// The venue's board: everything it shows is set as text (textContent), never as markup.
const WORDS = {
  en: {title: "Tonight at the tables", tables: "Tables", noTables: "No table has been heard yet", league: "League",
       tonight: "Tonight (most wins)", season: "Season (by rating)", rank: "#", player: "Player", wins: "Wins",
       plays: "Plays", rating: "Rating", note: "Rating: μ − 3σ (openskill, Weng-Lin): a skill the player is very likely above.",
       online: "Online", offline: "Offline", game: "Game", step: "Step", waiting: "Waiting for", timer: "Timer",
       round: "Round", noGame: "No game", none: "—", night: "Night: eyes closed", noPlays: "No plays yet",
       down: "Reconnecting to the venue…", table: "Table", totals: "Totals"},
  ja: {title: "今夜のテーブル", tables: "テーブル", noTables: "まだテーブルの声はありません", league: "リーグ",
       tonight: "今夜（勝利数）", season: "シーズン（レーティング）", rank: "順位", player: "プレイヤー", wins: "勝利",
       plays: "プレイ", rating: "レーティング", note: "レーティング：μ − 3σ（openskill、Weng-Lin）",
       online: "接続中", offline: "切断", game: "ゲーム", step: "進行", waiting: "手番", timer: "タイマー",
       round: "ラウンド", noGame: "ゲームなし", none: "—", night: "夜：目を閉じて", noPlays: "まだプレイはありません",
       down: "再接続しています…", table: "テーブル", totals: "合計"},
};
const lang = WORDS[document.documentElement.lang] ? document.documentElement.lang : "en";
const W = WORDS[lang];
let games = {};
let offset = 0;  // the venue's clock less this TV's: a countdown is the venue's
const tables = new Map();

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function gameName(id) { return (games[lang] && games[lang][id] && games[lang][id].name) || id; }
function stepName(game, step) {
  const g = games[lang] && games[lang][game];
  return (g && g.steps && g.steps[step]) || step;
}

function countdown(deadline) {
  if (deadline == null) return W.none;
  const left = Math.max(0, Math.round(deadline - (Date.now() / 1000 + offset)));
  return `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
}

function card(t) {
  const id = `table-${t.id}`;
  const a = el("article", {class: "table" + (t.online ? "" : " offline") + (t.night ? " night" : ""), id,
                           "data-table": t.id, "aria-labelledby": `${id}-h`});
  const head = el("div", {class: "head"});
  head.append(el("h3", {id: `${id}-h`}, t.id));
  // online or not in words (and a shape), never by colour alone
  head.append(el("p", {class: "status", "data-online": String(!!t.online)}, (t.online ? "● " : "○ ") + (t.online ? W.online : W.offline)));
  a.append(head);
  const dl = el("dl");
  const row = (cls, label, value) => {
    const empty = value === W.none ? " empty" : "";  // a dense board leaves out what has no value
    dl.append(el("dt", {class: cls + empty}, label));
    dl.append(el("dd", {class: cls + empty}, value));
  };
  row("game", W.game, t.game ? gameName(t.game) : W.noGame);
  row("step", W.step, t.night ? W.night : (t.step ? stepName(t.game, t.step) : W.none));
  row("turn", W.waiting, t.waiting_for && t.waiting_for.length ? t.waiting_for.join(", ") : W.none);
  row("round", W.round, t.round == null ? W.none : String(t.round));
  const empty = t.deadline == null ? " empty" : "";
  dl.append(el("dt", {class: "timer" + empty}, W.timer));
  const dd = el("dd", {class: "timer" + empty});
  dd.append(el("time", {"data-deadline": t.deadline == null ? "" : String(t.deadline)}, countdown(t.deadline)));
  dl.append(dd);
  a.append(dl);
  if (t.totals && Object.keys(t.totals).length && !t.night) {
    const ul = el("ul", {class: "totals", "aria-label": W.totals});
    for (const [name, n] of Object.entries(t.totals)) ul.append(el("li", {}, `${name} ${n}`));
    a.append(ul);
  }
  return a;
}

function drawTables() {
  const grid = document.getElementById("grid");
  const ids = [...tables.keys()].sort((a, b) => a.localeCompare(b, "en", {numeric: true}));  // t2 before t10
  grid.replaceChildren(...ids.map(id => card(tables.get(id))));
  // a café's dozen tables still fit one screen: denser cards as there are more of them
  grid.dataset.size = ids.length > 16 ? "l" : ids.length > 6 ? "m" : "s";
  document.getElementById("no-tables").hidden = ids.length > 0;
}

function drawLeague(which, rows) {
  const body = document.querySelector(`#${which} tbody`);
  if (!rows.length) {
    const tr = el("tr");
    tr.append(el("td", {colspan: "5"}, W.noPlays));
    body.replaceChildren(tr);
    return;
  }
  body.replaceChildren(...rows.map((r, i) => {
    const tr = el("tr", {"data-person": r.person});
    tr.append(el("td", {}, String(i + 1)), el("th", {scope: "row"}, r.name), el("td", {class: "wins"}, String(r.wins)),
              el("td", {class: "plays"}, String(r.plays)), el("td", {class: "rating"}, r.rating.toFixed(1)));
    return tr;
  }));
}

function league(d) {
  drawLeague("tonight", d.tonight);
  drawLeague("season", d.season);
}

function board(d) {
  games = d.games || {};
  offset = d.now - Date.now() / 1000;
  tables.clear();
  for (const t of d.tables) tables.set(t.id, t);
  drawTables();
  league(d);
}

function connect() {
  const link = document.getElementById("link");
  const src = new EventSource("/api/venue/events");
  src.addEventListener("board", e => { link.textContent = ""; board(JSON.parse(e.data)); });
  src.addEventListener("table", e => {
    const t = JSON.parse(e.data);
    if (t.gone) tables.delete(t.id); else tables.set(t.id, t);
    drawTables();
  });
  src.addEventListener("league", e => league(JSON.parse(e.data)));
  src.onerror = () => { link.textContent = W.down; };
}

document.addEventListener("DOMContentLoaded", () => {
  for (const node of document.querySelectorAll("[data-t]")) node.textContent = W[node.dataset.t] || node.textContent;
  document.title = W.title;
  setInterval(() => {
    for (const t of document.querySelectorAll("time[data-deadline]")) {
      const d = t.dataset.deadline;
      if (d) t.textContent = countdown(Number(d));
    }
  }, 1000);
  connect();
});
