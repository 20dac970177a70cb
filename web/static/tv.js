// The TV board: the table's public state drawn for a room — big type, two
// columns, read from 3 m.  It starts from the snapshot and the games' names the
// page came with (what /api/table and /api/games hold), then follows the public
// feed (/api/events: a snapshot at each change); it sends nothing.  What whose turn, the count and the deadline
// are comes from the table's ``headline`` where the API has one, else from the
// game's own view (play.step, play.whose_turn).
"use strict";
const $ = (id) => document.getElementById(id);
const T = {
  en: { no_game: "No game yet", list_sep: ", ", last_game: "Last game: {game}", turn: "Whose turn: {who}",
        everyone: "everyone", time_left: "Time left", votes: "Votes", cave: "The cave", board: "On the table",
        pair: "Scan to pair your phone", missing: "Still to pair:", scores: "Scores", tonight: "Tonight",
        total: "Total", place: "Place", role: "Final role", result: "Result", of: "{n} of {m} have voted",
        closed: "closed", min_left: "{n} minutes left", paused: "Paused {time}", one_min_left: "1 minute left", under_min: "under a minute left",
        keep: "Keep her alive", kill: "Kill her", offline: "Reconnecting…", round: "Round {n}",
        deck: "Roles in play", players: "Players", captain: "Captain", start_player: "Starts", girl: "The Girl",
        dead: "Dead", exited: "Out, won", executed: "Executed", shot: "Shot by the hunter",
        outcome: "Result", won: "won", lost: "lost", card: "Card",
        idle: "Between games", gathering: "Players, tap your cards", pairing: "Pairing the phones", playing: "Playing",
        round_col: "R{n}" },
  ja: { no_game: "まだゲームはありません", list_sep: "、", last_game: "前のゲーム: {game}", turn: "手番: {who}",
        everyone: "全員", time_left: "残り時間", votes: "投票", cave: "洞窟", board: "卓の上",
        pair: "スキャンしてスマホをペアリング", missing: "まだペアリングしていない席:", scores: "得点", tonight: "今夜の合計",
        total: "合計", place: "順位", role: "最後の役職", result: "結果", of: "{m}人中{n}人が投票",
        closed: "未開封", min_left: "残り{n}分", paused: "一時停止中 {time}", one_min_left: "残り1分", under_min: "残り1分未満",
        keep: "生かす", kill: "殺す", offline: "再接続中…", round: "第{n}ラウンド",
        deck: "使う役職", players: "プレイヤー", captain: "隊長", start_player: "最初の手番", girl: "少女",
        dead: "死亡", exited: "勝ち抜け", executed: "処刑", shot: "ハンターに撃たれた",
        outcome: "勝敗", won: "勝ち", lost: "負け", card: "カード",
        idle: "ゲームの合間", gathering: "プレイヤーはカードをタッチ", pairing: "スマホのペアリング", playing: "プレイ中",
        round_col: "{n}R" },
};
// What a box held, shown by a sign as well as its words (never by colour alone)
const SIGN = { treasure: "★", empty: "○", disaster: "✖" };
// What a game's view makes public about a player, by the view's key: a name (the captain) or a list of names
// (the dead, the executed, whom a hunter shot), each shown by its word beside the player; the points a
// game keeps (``vp``) as its totals.  A card a view shows face up (``cards``) stands beside its player
// too, in the table's words (the server's ``cards``: "Doppelganger (Villager)").
const MARKS = ["captain", "start_player", "girl", "dead", "exited", "executed", "shot"];
const marksOf = (play, name) => MARKS.filter((k) => play && (play[k] === name || (Array.isArray(play[k]) && play[k].includes(name))));
let state = {}, GAMES = {}, NAMES = {}, lang = "en", drawn = false, skew = 0;  // skew: the table's clock − ours (s)
const t = (k) => (T[lang] || T.en)[k] ?? T.en[k] ?? k;
const fill = (s, args) => s.replace(/\{(\w+)\}/g, (m, k) => String(args[k] ?? m));
// A player as the table names them (the page's ``names``: the voice's name lines), a capital first
// A player as the table names them, and the display name their page chose after it.
const who = (name) => {
  const n = (NAMES[lang] || {})[name] ?? (NAMES.en || {})[name] ?? name;
  const seat = (state.seats || []).find((s) => s.name === name);
  return n.charAt(0).toUpperCase() + n.slice(1) + (seat && seat.called ? ` · ${seat.called}` : "");
};
const gameInfo = (id) => ((GAMES[lang] || {})[id]) || ((GAMES.en || {})[id]) || {};
const gameName = (id) => gameInfo(id).name || id;
// a game's step by its label; the table's own phases (gathering, pairing) by the board's words
const totalWord = (id) => gameInfo(id).points || t("total");  // a game's own word for its totals ("VP")
const stepLabel = (id, step) => (gameInfo(id).steps || {})[step] || (step in T.en ? t(step) : step);
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) k === "text" ? (e.textContent = v) : e.setAttribute(k, v);
  e.append(...kids);
  return e;
};
const show = (id, on) => { $(id).hidden = !on; return on; };

// The headline as /api/table has it (docs/reference/pages.md), or what the game's view says until the API has one
// (``waiting`` here: players' names, as the games' views and totals name them; the headline names seats)
function headline() {
  const play = state.play || {};
  const h = state.headline;
  const nameOf = (id) => ((state.seats || []).find((s) => s.id === id) || { name: id }).name;
  if (h) return { ...h, waiting: (h.waiting_for || []).map(nameOf) };
  return { step: play.step || null, waiting: play.whose_turn || [], anyone: false, count: null,
           deadline: null, night: play.step === "night" };
}

function render() {
  lang = state.lang || "en";
  document.documentElement.lang = lang;
  document.body.dataset.version = String(state.version ?? "");  // which snapshot is drawn (the tests wait for it)
  document.querySelectorAll("[data-t]").forEach((e) => { e.textContent = t(e.dataset.t); });
  const h = headline();
  // By night every page shows the same near-black screen with the step's name, whatever the deal
  const night = !!h.night;
  $("night").hidden = !night; $("day").hidden = night;
  document.body.classList.toggle("night", night);
  if (night) { $("night-step").textContent = stepLabel(state.game, h.step || "night"); countdown(null); return; }
  const res = !state.play && state.result;
  $("game").textContent = state.game ? gameName(state.game)
    : res ? fill(t("last_game"), { game: gameName(res.game) }) : t(tonightPlayed() ? "idle" : "no_game");
  const sentence = state.headline_text || h.text || turnText(h);  // the table's sentence once it has one
  // No game: the table's sentence names the phase itself ("Between games: tap a game card."), said once
  $("step").textContent = state.game && h.step ? stepLabel(state.game, h.step) : sentence ? "" : t(state.phase || "idle");
  $("step").hidden = !$("step").textContent;
  $("turn").textContent = sentence;
  // the round the game is in, where its view counts rounds (One Night has one: none said)
  const round = (state.play || {}).round;
  if (show("round", Number.isInteger(round))) $("round").textContent = fill(t("round"), { n: round });
  countdown(h.deadline ?? null, (state.play || {}).paused_s);
  said();
  renderTally(); renderDeck(); renderCave(); renderResult(); renderLines(); renderPairing(); renderScores();
  renderVerdict(); renderTiles();
  place(); fit();
}

// The screen is the board's.  What a game always has stands in its own column (the
// vote, the deck, the cave, a result to the left; the players to the right); the other
// panels (the verdict, first in its column; the table's lines; the QR code) each go to the column with less in it; a
// column with nothing in it gives its room to the other.  A panel is as tall as what it
// holds: a panel stretched to the foot of the screen around one line reads as empty.
const MOVABLE = ["round-verdict-section", "lines-section", "pair-section"];
function place() {
  const main = document.querySelector("#day > main");
  const cols = [...main.querySelectorAll(".col")];
  main.style.setProperty("--fit", "1");  // measured at full size
  main.classList.remove("one");
  cols.forEach((c) => { c.hidden = false; });
  const used = (col) => [...col.children].filter((e) => !e.hidden && !MOVABLE.includes(e.id))
    .reduce((h, e) => h + e.offsetHeight, 0);
  const height = cols.map(used);
  for (const id of MOVABLE) {
    const e = $(id);
    if (e.hidden) continue;
    const i = height[0] <= height[1] ? 0 : 1;
    cols[i].append(e);
    height[i] += e.offsetHeight;
  }
  for (const col of cols) col.hidden = ![...col.children].some((e) => !e.hidden);
  main.classList.toggle("one", cols.some((c) => c.hidden));
}

// A TV cannot scroll: the header and the last line said keep their size, and what
// stands between them (main, sized in its own --rem) shrinks step by step until it
// fits the height left — never below 0.6 of its size, where it would no longer read
// from across the room (whatever is left over is then cut off, the last line still seen).
const FIT_MIN = 0.6, FIT_STEP = 0.05;
function fit() {
  const main = document.querySelector("#day > main");
  let f = 1;
  main.style.setProperty("--fit", "1");
  while (main.scrollHeight > main.clientHeight && f - FIT_STEP >= FIT_MIN - 1e-9) {
    f = Math.round((f - FIT_STEP) * 100) / 100;
    main.style.setProperty("--fit", String(f));
  }
}

// Tonight's totals hold a game played: without a game or its result, the table is between games.
const tonightPlayed = () => Object.keys(state.tonight || {}).length > 0;

function turnText(h) {
  const turn = h.waiting;
  if (!turn.length) return "";
  const seated = (state.seats || []).length;
  return fill(t("turn"), { who: h.anyone || (turn.length === seated && seated > 1) ? t("everyone") : turn.map(who).join(t("list_sep")) });
}

// The last line said, unless it told the time left (a game's ``clock`` lines) while a
// countdown runs: said a minute ago, it no longer holds; the countdown says the time — one clock.
function said() {
  const now = state.now || {};
  const stale = deadline !== null && (gameInfo(state.game).clock || []).includes(now.key);
  $("line").textContent = (!stale && now.line) || "";
}

// The discussion's countdown to the table's deadline (wall-clock seconds): the
// big digits every quarter second; for a screen reader, a polite sentence at
// most once a minute (the timer's own region stays quiet).  Paused, no deadline:
// the time it goes on from stands still, "Paused 1:00" (the game's ``paused_s``).
let deadline = null, stopped = null, ticker = null, saidMinute = null;
function countdown(at, pausedS) {
  deadline = typeof at === "number" ? at : null;
  stopped = deadline === null && typeof pausedS === "number" ? pausedS : null;
  if (!show("timer-section", deadline !== null || stopped !== null)) {
    if (ticker) { clearInterval(ticker); ticker = null; }
    saidMinute = null;
    return;
  }
  tick();
  if (!ticker) ticker = setInterval(tick, 250);
}
function tick() {
  if (deadline === null && stopped === null) return;
  const left = stopped ?? Math.max(0, Math.ceil(deadline - (Date.now() / 1000 + skew)));
  const clock = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
  const text = stopped === null ? clock : fill(t("paused"), { time: clock });
  if ($("countdown").textContent !== text) {  // paused: the word small beside the digits ("Paused 1:00")
    const [word, digits] = stopped === null ? ["", clock] : [text.slice(0, text.length - clock.length), clock];
    $("countdown").replaceChildren(...(word ? [el("span", { class: "paused", text: word })] : []), digits);
  }
  // whole minutes left, as the digits read them (1:29 is "1 minute left", as the table says it at 1:00)
  const minute = Math.floor(left / 60);
  if (`${lang}${minute}` !== saidMinute) {  // once a minute, and again in another language
    saidMinute = `${lang}${minute}`;
    $("countdown-said").textContent = minute > 1 ? fill(t("min_left"), { n: minute })
      : minute === 1 ? t("one_min_left") : t("under_min");
  }
}

// The vote as it fills, exactly as public as the rules make it — the game's view
// holds only that: a count of pointing (``tally``: the votes each player got, said
// aloud as they came) or sides (``votes``: each said aloud with its side), and how
// many have voted.  The names here are the view's keys, never a game's.
function renderTally() {
  const play = state.play || {};
  const list = $("tally"); list.replaceChildren();
  let count = null;  // the vote's own count (the headline's may count something else: cards shown, bids)
  if (play.tally) {
    const entries = Object.entries(play.tally.for).sort((a, b) => b[1] - a[1]);
    for (const [name, n] of entries) list.append(el("li", { "data-player": name },
      el("span", { class: "name", text: who(name) }), el("span", { class: "n", text: String(n) }),
      el("span", { class: "bar", "aria-hidden": "true", text: "▮".repeat(n) })));
    count = { done: play.tally.done, of: play.tally.of };
  } else if (play.votes && ["vote", "battle"].includes(play.step) && Object.keys(play.votes).length) {
    for (const side of ["keep", "kill"]) {
      const names = Object.entries(play.votes).filter(([, s]) => s === side).map(([p]) => who(p));
      list.append(el("li", { "data-side": side }, el("span", { class: "name", text: t(side) }),
        el("span", { class: "n", text: String(names.length) }), el("span", { class: "who", text: names.join(t("list_sep")) })));
    }
    const done = Object.keys(play.votes).length;
    const living = (state.seats || []).filter((st) => st.name !== play.girl && !(play.dead || []).includes(st.name));
    if (play.step === "vote") count = { done, of: living.length };  // every living investigator votes
  } else {
    show("tally-section", false);
    return;
  }
  // who still has to vote, as the table's line names them (names only: never for whom)
  const still = (state.board || []).find((l) => l.key.endsWith(".board.to_vote"));
  $("tally-count").textContent = count ? fill(t("of"), { n: count.done, m: count.of }) : "";
  $("tally-still").textContent = still ? still.text : "";
  show("tally-section", true);
}

// The deck in play (One Night's), public: the table chose it — as the game's board lines name it
// (``….board.deck_role…``: each role, by the edition's name, and its count), from the first card
// tapped into it while it is built to the end of the game.
function renderDeck() {
  const roles = (state.board || []).filter((l) => /\.board\.deck_/.test(l.key));
  show("deck-section", roles.length > 0);
  $("deck").replaceChildren(...roles.map((l) => el("li", { "data-key": l.key, text: l.text.charAt(0).toUpperCase() + l.text.slice(1) })));
}

// A cave of boxes (``boxes``, ``opened``): one box a cell, opened or not; an opened box shows what it
// held (a sign and the game's own line for it: by whom, the gems), as the table saw it.
function renderCave() {
  const play = state.play || {};
  const grid = $("cave"); grid.replaceChildren();
  if (!show("cave-section", !!play.boxes && Array.isArray(play.opened))) return;
  const lines = (state.board || []).filter((l) => l.key.includes(".box."));
  for (let box = 1; box <= play.boxes; box++) {
    const i = play.opened.findIndex((o) => o.box === box);
    const o = play.opened[i];
    const content = o ? (o.voided ? "voided" : o.content) : "closed";
    const cell = el("li", { "data-box": String(box), "data-content": content },
      el("span", { class: "n", text: String(box) }),
      el("span", { class: "sign", "aria-hidden": "true", text: o ? SIGN[o.content] || "?" : "▢" }));
    if (o) cell.append(el("span", { class: "what", text: (lines[i] && lines[i].text) || `${o.content} · ${who(o.player)}` }));
    else cell.append(el("span", { class: "what", text: t("closed") }));
    grid.append(cell);
  }
}

// A finished game, winners first, as the phones' result view has it: the read
// side's result and the server's verdict (the lines said, each final role)
function renderResult() {
  const res = !state.play && state.result;
  if (!show("result-section", !!res)) return;
  $("result-title").textContent = `${t("result")} · ${gameName(res.game)}`;
  const roles = res.players.some((p) => p.role);
  const teams = !!gameInfo(res.game).no_points;  // a side wins, no totals: each player won or lost, as on the phones
  const words = state.verdict || { lines: [], roles: {} };
  const marked = res.players.some((p) => marksOf(res.play, p.name).length);  // the game's last view: the executed, the shot
  const table = $("result"); table.replaceChildren();
  const rounds = roundsOf(res.play);
  table.append(el("tr", {}, el("th", { text: t(teams ? "outcome" : "place"), scope: "col" }), el("th", { text: "", scope: "col" }),
    ...roundHeads(rounds), ...(teams ? [] : [el("th", { text: totalWord(res.game), scope: "col" })]),
    ...(roles ? [el("th", { class: "card", text: t("role"), scope: "col" })] : []), ...(marked ? [el("th", { text: "", scope: "col" })] : [])));
  for (const p of res.players) {
    table.append(el("tr", p.winner ? { class: "winner", "data-player": p.name } : { "data-player": p.name },
      el("td", { text: teams ? t(p.winner ? "won" : "lost") : String(p.place) }),
      el("td", { text: who(p.name) + (p.winner ? " ★" : "") }),  // the winners by a sign, not colour alone; the verdict says it
      ...roundCells(rounds, p.name), ...(teams ? [] : [el("td", { class: "total", text: String(p.total) })]),
      ...(roles ? [el("td", { class: "card", text: words.roles[p.name] || p.role || "" })] : []),
      ...(marked ? [el("td", { class: "marks", text: marksOf(res.play, p.name).map(t).join(" · ") })] : [])));
  }
  // its last line (who won) stands large on its own (``renderVerdict``)
  $("verdict").replaceChildren(...words.lines.slice(0, -1).map((l) => el("li", { "data-key": l.key, text: l.text })));
}

// The board lines a panel of its own draws from the view (the cave's boxes, the victory points,
// One Night's deck and tally): the "on the table" panel leaves them out, so nothing is said twice.
const PANELLED = /\.box\.|\.vp$|\.boxes$|\.board\.(deck|votes_for|voted|to_vote|laid|aside|verdict)/;

// The verdict while it stands, the largest line on the board, where a player who missed it looks first:
// a round's (the board's ``….board.verdict…`` line, in the table's words), or a finished game's last
// line said — who won (its other lines stay in the result)
function renderVerdict() {
  const line = (state.board || []).find((l) => /\.board\.verdict(\.|$)/.test(l.key));
  const said = (!state.play && state.result && (state.verdict || {}).lines) || [];
  const text = line ? line.text : said.length ? said[said.length - 1].text : "";
  if (!show("round-verdict-section", !!text)) return;
  $("round-verdict").textContent = text;
  $("round-verdict").dataset.verdict = (state.play || {}).verdict || "";
}

// Tiles as the table lays them (``laid``: left to right, as revealed) and those set aside (``aside``),
// each row under the label of the step that lays it (the game's own word, /api/games): no game named here
function renderTiles() {
  const play = state.play || {};
  const rows = [["laid", play.laid], ["aside", play.aside]];
  show("tiles-section", rows.some(([, r]) => r));
  for (const [id, row] of rows) {
    show(`${id}-title`, !!row); show(id, !!row && row.tiles.length > 0);
    $(`${id}-title`).textContent = row ? stepLabel(state.game, row.step) : "";
    $(id).replaceChildren(...(row ? row.tiles : []).map((tile) => el("li", { "data-tile": tile, text: who(tile) })));
  }
  $("tiles-section").setAttribute("aria-labelledby", play.laid ? "laid-title" : "aside-title");
}

// The game's other public lines (its board: bids in, an auction, role results)
function renderLines() {
  const lines = (state.board || []).filter((l) => !PANELLED.test(l.key));
  $("lines").replaceChildren(...lines.map((l) => el("li", { "data-key": l.key, text: l.text })));
  show("lines-section", lines.length > 0);
}

// While phones are missing: the page's address as a large QR code and the seats still to pair
function renderPairing() {
  const missing = (state.seats || []).filter((s) => !s.paired);
  if (!show("pair-section", missing.length > 0)) return;
  document.body.classList.toggle("pairing", state.phase !== "playing");  // before the game: the code is the board
  const qr = $("qr");
  if (!qr.getAttribute("src")) { qr.src = "/qr.svg"; }
  qr.alt = state.address || "QR";
  $("address").textContent = state.address || "";
  $("missing").replaceChildren(...missing.map((s) => el("li", { "data-seat": s.id, text: who(s.name) })));
}

// The players: while a game plays, every seat with what its view makes public about them (its totals,
// the captain, the dead…) and whose turn it is; between games tonight's standings — the evening's, every
// game's totals summed, highest first (a tie in the order the table keeps: the same after a restart)
function renderScores() {
  const play = state.play;
  const turn = new Set(headline().waiting);
  const table = $("scores"); table.replaceChildren();
  let rows = [], title = t("scores"), points = true;
  if (play) {
    const totals = play.totals || play.vp;
    points = !!totals;
    rows = (state.seats || []).map((s) => [s.name, totals ? totals[s.name] ?? 0 : null]);
    if (!points) title = t("players");
  } else if (Object.keys(state.tonight || {}).length) {
    const evening = new Map();
    for (const totals of Object.values(state.tonight)) {
      for (const [name, n] of Object.entries(totals)) evening.set(name, (evening.get(name) || 0) + n);
    }
    rows = [...evening.entries()].sort((a, b) => b[1] - a[1]); title = t("tonight");
  } else if (state.phase === "gathering") {  // seated for the next game: who is at the table (pairing: the QR's list)
    rows = (state.seats || []).map((s) => [s.name, null]); title = t("players"); points = false;
  }
  $("scores-title").textContent = title;
  if (!show("scores-section", rows.length > 0)) return;
  const cards = (play && state.cards) || {};  // the cards shown face up, in the table's words
  const shown = Object.keys(cards).length > 0;
  const rounds = points && play ? roundsOf(play) : [];
  table.append(el("tr", {}, el("th", { text: "", scope: "col" }), ...roundHeads(rounds),
    ...(points ? [el("th", { text: play ? totalWord(state.game) : t("total"), scope: "col" })] : []),
    ...(shown ? [el("th", { class: "card", text: t("card"), scope: "col" })] : []), el("th", { text: "", scope: "col" })));
  for (const [name, n] of rows) {
    const mine = turn.has(name);
    table.append(el("tr", { "data-player": name, ...(mine ? { class: "turn", "aria-current": "true" } : {}) },
      el("td", { text: (mine ? "▸ " : "") + who(name) }),
      ...roundCells(rounds, name), ...(points ? [el("td", { class: "total", text: String(n) })] : []),
      ...(shown ? [el("td", { class: "card", text: cards[name] || "" })] : []),
      el("td", { class: "marks", text: marksOf(play, name).map(t).join(" · ") })));
  }
}

// Each scored round's points in a column of its own, before the total, where the game's view keeps its
// rounds (``rounds``: [{round, points}]) — the last few, where a long game has more than a row can hold
const ROUND_COLS = 6;
const roundsOf = (play) => (Array.isArray(play && play.rounds) ? play.rounds.slice(-ROUND_COLS) : []);
const roundHeads = (rounds) => rounds.map((r) => el("th", { class: "round", scope: "col", text: fill(t("round_col"), { n: r.round }) }));
const roundCells = (rounds, name) => rounds.map((r) => el("td", { class: "round", text: String((r.points || {})[name] ?? 0) }));

function drawnOnce() {  // the bench's mark: the first frame holding the table's state
  if (drawn) return;
  drawn = true;
  requestAnimationFrame(() => setTimeout(() => performance.mark("tv-drawn"), 0));
}

function listen() {
  const source = new EventSource("/api/events");
  source.onopen = () => { $("offline").hidden = true; };
  source.onerror = () => { $("offline").textContent = t("offline"); $("offline").hidden = false;
    if (source.readyState === EventSource.CLOSED) setTimeout(listen, 1000); };
  source.addEventListener("table", (e) => { state = JSON.parse(e.data); render(); drawnOnce(); });
  source.addEventListener("event", (e) => {
    const ev = JSON.parse(e.data);
    // an aside (the pages' address, said at start) is not the game's line
    if (ev.event === "say" && !ev.aside && !headline().night) { state.now = { ...(state.now || {}), line: ev.text, key: ev.key }; said(); fit(); }
  });
}
// The page came with the table's snapshot, the games' and the players' names: the first frame is the table's
const boot = JSON.parse($("boot").textContent);
state = boot.state; GAMES = boot.games; NAMES = boot.names;
skew = boot.clock - Date.now() / 1000;  // the deadline is on the table's clock, which this screen's may not keep
render(); drawnOnce();
listen();
addEventListener("resize", () => { if (!$("day").hidden) fit(); });
document.fonts.ready.then(() => { if (!$("day").hidden) fit(); });  // a font come late measures otherwise
