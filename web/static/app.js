// The table's page: the public scoreboard for anyone, and, once this phone is
// paired with a seat, that seat's private page and the controls.  No build
// step, no library: the server sends snapshots and events over SSE.
"use strict";
const $ = (id) => document.getElementById(id);
const CSRF = document.querySelector('meta[name="csrf"]').content;
const T = {
  en: { scores: "Scores", seats: "Seats", tonight: "Tonight", history: "History", pair: "Pair this phone with a seat",
        your_seat: "Your seat: ", unseated: "Not seated now, tap this card to sit again: ", next: "Next", back: "Back", repeat: "Repeat", round: "Round", total: "Total",
        export: "Export all plays (JSON)", virtual: "Virtual table", bgstats: "Send to BG Stats",
        waiting: "Tap your player card on the reader now…", paired: "This phone is {seat}'s page.",
        unpaired: "This phone is no longer a seat's page: pair it again.",
        no_game: "No game yet", list_sep: ", ", idle: "Between games", gathering: "Players, tap your cards",
        pairing: "Pairing the phones", board: "On the table", playing: "Playing", winners: "winners", turn: "Whose turn: {who}", everyone: "everyone",
        evening: "Evening {n}", export_evening: "export",
        unplug: "Unplug the reader", plug: "Plug the reader in", hold_back: "Hold to restart the step (or leave the game)", min: "min", send: "Send",
        hold_key: "Back, held: restart the step (or leave the game)", amount: "How many", chart: "Totals by round",
        chart_summary: "After round {n}: {totals}.", on: "on", off: "off",
        yes: "Yes, send", cancel: "Cancel", range: "Enter a number from {low} to {high}.", offline: "Reconnecting…",
        unreachable: "The table cannot be reached: nothing was sent.", result: "Result", last_game: "Last game: {game}",
        place: "Place", outcome: "Result", player: "Player", executed: "Executed", nobody: "nobody", role: "Final role", team: "Winning team",
        girl: "The Girl's card", escaped: "Escaped",
        too_late: "The table was busy: nothing was done; try again.", no_answer: "The table took it but has not answered; look at the table.",
        log: "Game log", your_turn: "Your turn.", may_nothing: "Nothing to do on this page now.",
        may_press: "You may press {buttons}.", or_press: "Or press {buttons}.", or: " or ",
        reveal: "Hold to see your secrets", revealed: "Let go to hide them", lost: "lost", won: "won",
        new_secret: "The table told you something: hold to see it.", sent_secret: "✓ Sent: hold to see it.",
        choose: "Choose…", choose_first: "Choose first, then send.",
        ends_in: "Ends in {time}", paused: "Paused {time}", yes_next: "Yes, go on",
        csrf: "This page is out of date: reload it.", not_paired: "Pair this phone with a seat first.",
        too_many: "Too many attempts from this phone: wait a minute.", too_big: "That was too large for the table to take.",
        wrong_host: "This page was not opened from the table's own address: open it again from the QR code.",
        bad_json: "The table could not read that: reload the page.", bad_submit: "The table could not read that: reload the page.",
        no_button: "The table could not read that: reload the page.", no_seat: "Pick a seat at the table.",
        timeout: "No card was tapped in time: try again.", refused: "The table refused that.",
        busy: "Another phone is pairing: try again in a moment.", not_saved: "The table could not save that: try again.",
        display_name: "Your name for the scores", your_name: "Your name", set_name: "Save name", name_empty: "Type a name first.",
        name_set: "Saved: the next game's scores call you {name}.", name_now: "Now: {name}",
        bad_name: "The table could not read that: reload the page.",
        leds: { ready: "ready", ok: "ok", error: "error" } },
  ja: { scores: "得点", seats: "席", tonight: "今夜の合計", history: "履歴", pair: "この端末を席とペアリング",
        your_seat: "あなたの席：", unseated: "今は席にいません。このカードをタップすると座り直せます：", next: "次へ", back: "戻る", repeat: "もう一度", round: "ラウンド", total: "合計",
        export: "全記録をエクスポート (JSON)", virtual: "仮想テーブル", bgstats: "BG Stats に送る",
        waiting: "今、リーダーに自分のプレイヤーカードをタッチしてください…", paired: "この端末は{seat}の画面です。",
        unpaired: "この端末はもう席の画面ではありません。もう一度ペアリングしてください。",
        no_game: "まだゲームはありません", list_sep: "、", idle: "ゲームの合間", gathering: "プレイヤーはカードをタッチ",
        pairing: "スマホのペアリング", board: "卓の上", playing: "プレイ中", winners: "勝者", turn: "手番: {who}", everyone: "全員",
        evening: "{n}回目の夜", export_evening: "エクスポート",
        unplug: "リーダーを外す", plug: "リーダーをつなぐ", hold_back: "長押し: この段階をやり直す(またはゲームをやめる)", min: "分", send: "送信",
        hold_key: "戻るを長押し: この段階をやり直す(またはゲームをやめる)", amount: "数", chart: "ラウンドごとの合計",
        chart_summary: "{n}ラウンド後: {totals}。", on: "点灯", off: "消灯",
        yes: "はい、送る", cancel: "やめる", range: "{low}から{high}までの数を入れてください。", offline: "再接続中…",
        unreachable: "卓につながりません。何も送られていません。", result: "結果", last_game: "前のゲーム: {game}",
        place: "順位", outcome: "勝敗", player: "プレイヤー", executed: "処刑", nobody: "なし", role: "最後の役職", team: "勝ったチーム",
        girl: "少女のカード", escaped: "脱出",
        too_late: "卓が忙しく、何もしませんでした。もう一度どうぞ。", no_answer: "卓は受け取りましたが、まだ答えがありません。卓を見てください。",
        log: "ゲームの記録", your_turn: "あなたの番です。", may_nothing: "今この画面ですることはありません。",
        may_press: "{buttons}を押せます。", or_press: "または{buttons}を押せます。", or: "か",
        reveal: "長押しで秘密を見る", revealed: "指を離すと隠れます", lost: "負け", won: "勝ち",
        new_secret: "卓からあなたへの知らせがあります。長押しで見られます。", sent_secret: "✓ 送りました。長押しで見られます。",
        choose: "選ぶ…", choose_first: "先に選んでから送ってください。",
        ends_in: "残り {time}", paused: "一時停止中 {time}", yes_next: "はい、進める",
        csrf: "このページは古くなっています。再読み込みしてください。", not_paired: "先にこの端末を席とペアリングしてください。",
        too_many: "この端末からの試行が多すぎます。1分待ってください。", too_big: "大きすぎて卓が受け取れません。",
        wrong_host: "卓のアドレスから開かれたページではありません。QRコードから開き直してください。",
        bad_json: "卓が読み取れませんでした。再読み込みしてください。", bad_submit: "卓が読み取れませんでした。再読み込みしてください。",
        no_button: "卓が読み取れませんでした。再読み込みしてください。", no_seat: "卓の席を選んでください。",
        timeout: "時間内にカードがタッチされませんでした。もう一度どうぞ。", refused: "卓が受け付けませんでした。",
        busy: "別の端末がペアリング中です。少し待ってもう一度どうぞ。", not_saved: "卓が保存できませんでした。もう一度どうぞ。",
        display_name: "記録に残す名前", your_name: "あなたの名前", set_name: "名前を保存", name_empty: "先に名前を入れてください。",
        name_set: "保存しました。次のゲームから記録の名前は{name}です。", name_now: "いま: {name}",
        bad_name: "卓が読み取れませんでした。再読み込みしてください。",
        leds: { ready: "準備", ok: "成功", error: "エラー" } },
};
// The games' names and their steps' labels, by language: the server's
// (/api/games, from each game's own folder); this page names no game itself.
let GAMES = {};
const gameInfo = (id) => ((GAMES[lang] || {})[id]) || ((GAMES.en || {})[id]) || {};
const gameName = (id) => gameInfo(id).name || id;
const totalWord = (id) => gameInfo(id).points || t("total");  // a game's own word for its totals ("VP")
const stepLabel = (id, step) => (gameInfo(id).steps || {})[step] || step;  // a step without a label: its id
let state = {}, me = null, lang = "en", drawnStep;
const t = (k) => (T[lang] || T.en)[k] ?? T.en[k] ?? k;
// A player as the table names them (the page came with the server's ``name.*`` lines: the
// words the speech and the TV use), and the display name its page chose (``called``: public,
// chosen to be shown) after it, wherever they appear.
const NAMES = JSON.parse(($("names") || {}).textContent || "{}");
const who = (name) => {
  const seat = (state.seats || []).find((s) => s.name === name);
  const base = (NAMES[lang] || {})[name] ?? (NAMES.en || {})[name] ?? name;
  return seat && seat.called ? `${base} · ${seat.called}` : base;
};
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) k === "text" ? (e.textContent = v) : e.setAttribute(k, v);
  for (const kid of kids) e.append(kid);
  return e;
};
const localDate = (utc) => new Date(utc.replace(" ", "T") + "Z").toLocaleString(lang === "ja" ? "ja-JP" : undefined,
  { dateStyle: "medium", timeStyle: "short" });

// A confirmation is short-lived: it fades out after a few seconds instead of
// staying beside the next one (a refusal, or what the phone waits for, stays until the next status).
// A refusal belongs to the step it answered: a new step, round or game clears it (``render``),
// a language card any status; a refusal that comes back after its step has gone is not shown.
// What the table tells this seat alone is never here (``tellMe``).
let statusTimer = null;
function status(text, ok, keep) {
  const s = $("status"); s.textContent = text || ""; s.className = ok ? "ok" : "err";
  clearTimeout(statusTimer);
  if (ok && text && !keep) statusTimer = setTimeout(() => { s.classList.add("fading");
    statusTimer = setTimeout(() => { if (s.classList.contains("fading")) { s.textContent = ""; s.className = ""; } }, 600); }, 4000);
}

async function post(path, body) {
  let r;
  try {
    r = await fetch(path, { method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": CSRF }, body: JSON.stringify(body) });
  } catch (e) { offline(true); return { ok: false, text: t("unreachable") }; }  // the daemon is down
  let data = {};
  try { data = await r.json(); } catch (e) { data = { ok: false, reason: r.statusText }; }
  // the door's refusals (httpkit.guard): 421 has no body, 413 its own code; each said in the page's words
  if (r.status === 421) data = { ok: false, error: "wrong_host" };
  else if (r.status === 413) data = { ...data, ok: false, error: "too_big" };
  else if (!r.ok && !data.error && !data.text) data = { ...data, ok: false, error: "refused" };
  return data;
}
// A refusal as the table says it (``text``, in its language), or the page's own word for
// the server's code; never the internal reason where a sentence exists.
const refusal = (r) => r.text || (r.error && (T[lang] || T.en)[r.error]) || t("refused");
// The feeds lost: a bar says so (the EventSources reconnect by themselves; their
// ``open`` takes it away), so the page never looks live while the table is away.
function offline(on) { $("offline").hidden = !on; }

const headline = () => state.headline || { waiting_for: [], anyone: true, night: false };
const night = () => !!headline().night;
// The step a refusal answers: the game, its phase, step and round, the language (last).
const stepNow = () => JSON.stringify([state.game, state.phase, state.play && state.play.step,
  state.play && state.play.round, headline().step, state.lang]);

// A snapshot comes whenever anything at the table changed: a part is drawn again only
// when what it is drawn from (its data, the language, the seats, the games' names) changed.
const drawnFrom = {};
function drawn(part, draw, ...from) {
  const key = JSON.stringify([lang, state.seats, !!GAMES.en, from]);
  if (drawnFrom[part] !== key) { drawnFrom[part] = key; draw(); }
}
// A list's children by their data: a child drawn from the same data stays (the same node);
// only the others are made (``make``), put in place, or taken out.
function fill(box, items, make) {
  const old = new Map([...box.children].map((e) => [e.from, e]));
  items.forEach((item, i) => {
    const from = JSON.stringify(item);
    let e = old.get(from);
    if (e) old.delete(from); else { e = make(item); e.from = from; }
    if (box.children[i] !== e) box.insertBefore(e, box.children[i] || null);
  });
  while (box.children.length > items.length) box.lastElementChild.remove();
}

function render() {
  lang = state.lang || "en";
  if (document.documentElement.lang !== lang) document.documentElement.lang = lang;  // set, even unchanged: all styled again
  drawn("words", () => {
    document.querySelectorAll("[data-t]").forEach((e) => { e.textContent = t(e.dataset.t); });
    document.querySelectorAll("[data-t-label]").forEach((e) => { e.setAttribute("aria-label", `${t("virtual")}: ${t(e.dataset.tLabel)}`); });
    document.querySelectorAll("[data-t-title]").forEach((e) => { e.title = t(e.dataset.tTitle); });
  });
  // By night every page is the same near-black screen with the step's name alone:
  // nothing else is drawn, so nothing can differ from one phone (or deal) to another.
  const dark = night();
  document.body.classList.toggle("night", dark);
  $("night").hidden = !dark;
  if (dark) {
    $("night-step").textContent = stepLabel(state.game, headline().step);
    // every control, a question's too (it is dropped): the day turns each back on (``renderControls``)
    document.querySelectorAll("#controls button").forEach((b) => { b.disabled = true; });
    pressConfirm = null;
    return;
  }
  // a game played tonight (its totals below), the next one left: between games, not "no game yet"
  $("game").textContent = state.game ? gameName(state.game) : t(Object.keys(state.tonight || {}).length ? "idle" : "no_game");
  if (stepNow() !== drawnStep) {  // a refusal of another step is not the present, nor a word in another language
    if (drawnStep !== undefined && ($("status").className === "err" || JSON.parse(drawnStep).pop() !== state.lang)) status("");
    drawnStep = stepNow();
  }
  const step = state.play && state.play.step;
  // Between games the headline says so ("Between games: tap a game card."): the phase's
  // name above it would say it twice.
  const between = state.phase === "idle" && !!state.headline_text;
  $("step").textContent = between ? "" : [t(state.phase) || "", step ? "· " + stepLabel(state.game, step) : ""].join(" ");
  $("step").hidden = between;
  $("headline").textContent = state.headline_text || "";
  $("turn").textContent = whoseTurn();
  renderLog();
  $("address").textContent = state.address || "";
  tickCountdown();
  if (ledsLang !== lang) leds(ledsNow);  // the virtual table's, drawn again in another language
  renderResult();
  drawn("board", renderBoard, state.board);
  drawn("scores", renderScores, state.play && [state.play.rounds, state.play.totals, state.play.whose_turn],
    !state.play && state.result, state.game);
  drawn("tonight", renderTonight, state.tonight); drawn("history", renderHistory, state.history);
  drawn("seats", renderSeats, !me);
  drawn("me", renderMe, me, state.headline, state.legal, state.phase);
  renderControls();
}

// The game log: what the table said to everyone in this game, newest first (the server's
// ``log``; a line said since comes on the feed).  Never a line told to one seat: those
// are that seat's (its status, its page).  A log, not "the line in force": the headline
// and the countdown are the present.
// Drawn whole only when the server sent it whole (a new game, another language); a line
// said since is one more item on top (a snapshot after every tap redraws nothing of it).
const LOG_KEEP = 200;  // the server's (web.game_log.KEEP)
let logDrawn = null;  // the log as last drawn
const logLine = (line) => el("li", { "data-key": line.key || "", text: line.text });
function renderLog() {
  const lines = state.log || [];
  if (lines !== logDrawn) $("log").replaceChildren(...lines.map(logLine));
  logDrawn = lines;
  $("log-section").hidden = !lines.length;
}
function logged(line) {
  if (state.phase === "idle" && !state.result) return;  // no game yet: no game's log (the server's too)
  const drawn = (state.log || null) === logDrawn;  // what is on the page is the log so far
  state.log = [line, ...(state.log || [])].slice(0, LOG_KEEP);
  if (night()) return;  // drawn with the day (``render``)
  if (!drawn) return renderLog();
  $("log").prepend(logLine(line));
  if ($("log").childElementCount > LOG_KEEP) $("log").lastElementChild.remove();
  logDrawn = state.log;
  $("log-section").hidden = false;
}

// The discussion's countdown: the table gives the wall-clock time it ends, and its
// clock with each snapshot (``clock``), so this phone counts on the table's time,
// as the TV does, whatever its own clock says (a second's drift at most).
let skew = 0;  // the table's clock − this phone's (s)
// Paused (no deadline), the time it goes on from stands still: "Paused 1:00" (the game's ``paused_s``).
function tickCountdown() {
  const end = headline().deadline, box = $("countdown");
  const stopped = end ? null : (state.play || {}).paused_s;
  box.hidden = (!end && typeof stopped !== "number") || night();
  if (box.hidden) return;
  const left = typeof stopped === "number" ? stopped : Math.max(0, Math.ceil(end - (Date.now() / 1000 + skew)));
  box.textContent = t(typeof stopped === "number" ? "paused" : "ends_in")
    .replace("{time}", `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`);
}
setInterval(tickCountdown, 1000);

// May this phone press next/back now?  Where the table waits for its seat or for
// anyone, never by night (the table refuses the others too; repeat is anyone's).
const mayPress = () => !!me && !night() && (headline().anyone || (headline().waiting_for || []).includes(me.seat));
// The buttons the table would take from this seat now: its legal ones and the table's
// (``legal``, the engines' ``legal()``), where it may press at all — what is offered and said.
const pressable = () => mayPress() ? new Set([...((me.legal && me.legal.buttons) || []),
  ...((state.legal && state.legal.buttons) || [])]) : new Set();
const myTurn = () => !!me && !night() && (headline().waiting_for || []).includes(me.seat);
let pressConfirm = null;  // a next that ends a step for everyone, waiting for "yes"
function renderControls() {
  $("controls").hidden = !me;
  if (!me) return;
  const may = pressable();
  for (const b of document.querySelectorAll("#controls button[data-press]")) {
    b.disabled = b.dataset.press === "repeat" ? night() : !may.has(b.dataset.press);
  }
  const ask = pressConfirm && confirmNext();
  if (!ask) pressConfirm = null;
  $("press-confirm").hidden = !pressConfirm;
  // the question's answers too: the night disabled them with the rest, and a question asked
  // after it must be answerable (only the presses were turned back on: dead until a reload)
  for (const b of document.querySelectorAll("#press-confirm button")) b.disabled = !pressConfirm;
  if (pressConfirm) $("press-confirm-text").textContent = ask + " ";
}
// The game's question before a next that ends its step for every player
// (``confirm.<game>.next.<step>``, from its folder through /api/games).
const confirmNext = () => (gameInfo(state.game).confirm || {})["next." + ((state.play && state.play.step) || "")] || null;

// A finished game's result, kept by the table until the next game starts: winners
// first, then by total; each player's final role where the game has roles; the
// verdict as the table said it (lines in its language).  While no game is being
// played, the scoreboard and the chart show the finished game's rounds.
function renderResult() {
  const res = state.result;
  $("result-section").hidden = !res;
  if (!res) return;
  $("result-title").textContent = `${t("result")} · ${gameName(res.game)}`;
  if (!state.game) $("game").textContent = t("last_game").replace("{game}", gameName(res.game));
  const roles = res.players.some((p) => p.role);
  const teams = !!gameInfo(res.game).no_points;  // a side wins, no totals: each player won or lost, no places
  const words = state.verdict || { lines: [], roles: {} };  // the server's: the verdict as said, the roles named
  const table = $("result"); table.replaceChildren();
  // a side's game: "won"/"lost" says what its totals (1 or 0) would — no column for them (a phone's width)
  table.append(el("tr", {}, el("th", { text: t(teams ? "outcome" : "place") }), el("th", { text: t("player") }),
    ...(teams ? [] : [el("th", { text: totalWord(res.game) })]), ...(roles ? [el("th", { text: t("role") })] : [])));
  for (const p of res.players) {
    table.append(el("tr", p.winner ? { class: "winner" } : {}, el("td", { text: teams ? t(p.winner ? "won" : "lost") : String(p.place) }),
      el("td", { text: who(p.name) + (p.winner ? " ★" : "") }), ...(teams ? [] : [el("td", { text: String(p.total) })]),
      ...(roles ? [el("td", { class: "role", text: words.roles[p.name] || p.role || "" })] : [])));
  }
  $("verdict").replaceChildren(...words.lines.map((l) => el("li", { "data-key": l.key, text: l.text })));
}

function whoseTurn() {
  // The game's public view says whom the table waits for: one player, some, or everyone.
  const turn = (state.play && state.play.whose_turn) || [];
  if (!turn.length) return "";
  const seated = (state.seats || []).length;
  const names = turn.length === seated && seated > 1 ? t("everyone") : turn.map(who).join(t("list_sep"));
  return t("turn").replace("{who}", names);
}

// The game's board: its public lines, already in the table's language (the
// game's ``board``, dt.board.*): what anyone at the table may see.
function renderBoard() {
  const lines = state.board || [];
  fill($("board"), lines, (line) => el("li", { "data-key": line.key, text: line.text }));
  $("board-section").hidden = !lines.length;
}

function renderScores() {
  // Round-by-round points and totals for a game that scores by round (its view
  // has rounds); for one that does not (a side wins) just the seats.
  // Whoever the table waits for is marked.
  // Between games, the finished game's (its result keeps its last view): not a blank board.
  const over = !state.play && state.result;
  const play = over ? state.result.play || {} : state.play;
  const scored = !!(play && play.rounds);
  const rounds = (scored && play.rounds) || [];  // the read side's: the same rows after a restart
  const names = over ? state.result.players.map((p) => p.name) : (state.seats || []).map((s) => s.name);
  const turn = new Set((state.play && state.play.whose_turn) || []);
  const table = $("scores"); table.replaceChildren();
  const head = el("tr", {}, el("th", { text: "" }));
  rounds.forEach((r) => head.append(el("th", { text: String(r.round) })));
  if (scored) head.append(el("th", { text: totalWord(over ? state.result.game : state.game) }));
  table.append(head);
  const last = (play && play.totals) || (rounds.length ? rounds[rounds.length - 1].totals : {});
  for (const name of names) {
    const row = el("tr", turn.has(name) ? { class: "turn", "aria-current": "true" } : {}, el("td", { text: who(name) }));
    rounds.forEach((r) => row.append(el("td", { text: String(r.points[name] ?? "") })));
    if (scored) row.append(el("td", { text: String(last[name] ?? 0) }));
    table.append(row);
  }
  $("chart").replaceChildren(chart(names, rounds), chartSummary(names, rounds, last));
  $("chart").hidden = !rounds.length;
  $("scores-title").textContent = t(scored ? "scores" : "seats");
}

const PALETTE = { red: "#e5533d", blue: "#4a90e2", green: "#4caf50", yellow: "#f2d64b", purple: "#a66bd8",
                  orange: "#f29a3b", white: "#eeeeee", black: "#777777" };
const OTHERS = ["#5fd3c6", "#d86ba6", "#b3c94a", "#c9a77a"];

// The chart in words, for whoever does not see it: each player's total after the last round.
function chartSummary(names, rounds, last) {
  if (!rounds.length) return "";
  const totals = names.map((name) => `${who(name)} ${last[name] ?? 0}`).join(t("list_sep"));
  return el("p", { id: "chart-summary", class: "summary",
    text: t("chart_summary").replace("{n}", rounds[rounds.length - 1].round).replace("{totals}", totals) });
}

function chart(names, rounds) {
  // Totals by round, one line a player: inline SVG, drawn here (no chart library).
  const NS = "http://www.w3.org/2000/svg", W = 600, H = 220, P = 28;
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`); svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", t("chart")); svg.setAttribute("aria-describedby", "chart-summary");
  if (!rounds.length) return svg;
  const max = Math.max(1, ...rounds.flatMap((r) => Object.values(r.totals)));
  const x = (i) => P + (i * (W - 2 * P)) / Math.max(1, rounds.length);
  const y = (v) => H - P - (v * (H - 2 * P)) / max;
  const line = (attrs) => { const e = document.createElementNS(NS, attrs.tag); delete attrs.tag;
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v); svg.append(e); return e; };
  line({ tag: "line", x1: P, y1: H - P, x2: W - P, y2: H - P, stroke: "#556" });
  line({ tag: "text", x: 2, y: y(max) + 4, fill: "#9aa7b4", "font-size": 12 }).textContent = String(max);
  rounds.forEach((r, i) => { line({ tag: "text", x: x(i + 1) - 4, y: H - 8, fill: "#9aa7b4", "font-size": 12 })
    .textContent = String(r.round); });
  const ends = new Map();  // final total → the names ending there: one label each, not one over another
  names.forEach((name, n) => {
    const dy = (n - (names.length - 1) / 2) * 2;  // equal totals: lines side by side, each still seen
    const pts = [[x(0), y(0) + dy], ...rounds.map((r, i) => [x(i + 1), y(r.totals[name] || 0) + dy])];
    line({ tag: "polyline", points: pts.map((p) => p.join(",")).join(" "), fill: "none",
           stroke: PALETTE[name] || OTHERS[n % OTHERS.length], "stroke-width": 3 });
    const total = rounds[rounds.length - 1].totals[name] || 0;
    if (!ends.has(total)) ends.set(total, []);
    ends.get(total).push(name);
  });
  for (const [total, group] of ends) {
    const label = line({ tag: "text", x: W - P, y: y(total) - 6, fill: "#9aa7b4", "font-size": 12, "text-anchor": "end" });
    label.textContent = group.map(who).join(t("list_sep"));
  }
  return svg;
}

function renderTonight() {
  const table = $("tonight"); table.replaceChildren();
  $("tonight-section").hidden = !Object.keys(state.tonight || {}).length;
  for (const [game, totals] of Object.entries(state.tonight || {})) {
    table.append(el("tr", {}, el("th", { text: gameName(game), colspan: 2 })));
    for (const [name, n] of Object.entries(totals)) table.append(el("tr", {}, el("td", { text: who(name) }), el("td", { text: String(n) })));
  }
}

function renderHistory() {
  // The evening's plays and every evening before, newest first, each evening
  // with its own export; dates in this phone's local time.
  const list = $("history"); list.replaceChildren();
  const evenings = new Map();
  for (const play of state.history || []) {
    if (!evenings.has(play.evening)) evenings.set(play.evening, []);
    evenings.get(play.evening).push(play);
  }
  for (const [evening, plays] of [...evenings.entries()].reverse()) {
    const first = new Date(plays[0].playDate.replace(" ", "T") + "Z");
    const day = first.toLocaleDateString(lang === "ja" ? "ja-JP" : undefined, { dateStyle: "full" });
    const games = el("ul");
    for (const play of [...plays].reverse()) {
      const winners = play.players.filter((p) => p.winner).map((p) => who(p.name)).join(t("list_sep"));
      const scores = play.players.map((p) => `${who(p.name)} ${p.score}`).join(" · ");
      const item = el("li", {}, el("strong", { text: `${localDate(play.playDate)} — ${gameName(play.game)}` }),
        el("br"), `${scores} (${t("winners")}: ${winners || "—"}; ${play.durationMin} ${t("min")}) `);
      if (play.bgstats) item.append(el("a", { href: play.bgstats, text: t("bgstats"), rel: "noreferrer" }));
      games.append(item);
    }
    const head = el("h3", { text: `${t("evening").replace("{n}", evening)} · ${day} ` },
      el("a", { href: `/api/export?evening=${evening}`, download: `plays-evening-${evening}.json`, text: t("export_evening") }));
    list.append(el("li", { class: "evening", "data-evening": String(evening) }, head, games));
  }
}

function renderSeats() {
  const box = $("seats"); box.replaceChildren();
  $("pair").hidden = !(state.seats || []).length;
  // your seat first: an unpaired phone has the pairing at the top; a paired one, at the end
  const main = document.querySelector("main"), section = $("pair");
  if (!me && main.firstElementChild !== section) main.prepend(section);
  else if (me && section.nextElementSibling !== document.querySelector("footer")) main.insertBefore(section, document.querySelector("footer"));
  for (const seat of state.seats || []) {
    // a seat whose phone is paired says so: the table waits for the others (a game that needs pages)
    const b = el("button", { "data-seat": seat.id, class: seat.paired ? "paired" : "",
                             text: who(seat.name) + (seat.paired ? " ✓" : "") });
    b.addEventListener("click", () => pair(seat.id, seat.name));
    box.append(b);
  }
}

// A seat as the pages name it: its colour (or configured name), and the display
// name its player chose, where there is one (public: chosen to be shown).

async function pair(seat, name) {
  status(t("waiting"), true, true);
  const r = await post("/api/pair", { seat });
  if (!r.ok) return status(refusal(r), false);  // the table's sentence, in its language
  status(t("paired").replace("{seat}", who(name)), true);
  await loadMe();
}

function renderMe() {
  $("me").hidden = !me;
  $("name-section").hidden = !me;
  if (!me) return;
  const seat = (state.seats || []).find((s) => s.id === me.seat);
  const name = seat ? seat.name : me.seat;
  // back took this seat off (the phone stays paired: its card's tap seats it again): not "Your seat"
  $("me-seat-label").textContent = t(seat ? "your_seat" : "unseated");
  $("me-seat").textContent = who(name);
  $("name-now").textContent = seat && seat.called ? t("name_now").replace("{name}", seat.called) : "";
  if (nameOpened === null) {  // open on a phone not yet named, between games; folded in a game (the controls first)
    nameOpened = !(seat && seat.called) && state.phase !== "playing"; $("name-section").open = nameOpened;
  }
  $("me-swatch").style.background = PALETTE[name] || OTHERS[0];  // the colour beside the name, never instead of it
  $("me").classList.toggle("my-turn", myTurn());
  $("me-turn").hidden = !myTurn();
  $("me-turn").textContent = t("your_turn");
  $("me-may").textContent = mayDo();
  $("me-may").hidden = !$("me-may").textContent;
  renderMeView(); renderSubmits();
}

let nameOpened = null;  // the name form, as first drawn on this page (then the player's to fold)
// What this phone may do now, in words: the forms are the list of what it may send (each
// labelled); after them, the buttons it may press ("Or press Next."), or that there is nothing.
function mayDo() {
  const fields = Object.keys((me.legal && me.legal.submits) || {}).length;
  const buttons = ["next", "back"].filter((b) => pressable().has(b)).map(t);
  if (!buttons.length) return fields ? "" : t("may_nothing");
  return t(fields ? "or_press" : "may_press").replace("{buttons}", buttons.join(t("or")));
}

// The seat's own page: the game's lines for what this player alone knows, already in
// the table's language (the game's ``page``, dt.page.* / mh.page.*), in the game's order.
// What the step asks (``.now.`` lines) is shown; the rest is the seat's secret (role, boxes,
// gems, bids), face down until the button above is held (a lit phone shows no one else).
function renderMeView() {
  const view = $("me-view");
  const lines = (me.page || []).map((line) => ({ "data-key": line.key, text: line.text,
    ...(line.key.includes(".now.") ? {} : { class: "secret" }) }));
  if (!lines.length) {  // a game that gives no lines (a test's engine): its view as it is, but nothing empty
    for (const [k, v] of Object.entries(me)) {
      const empty = v === null || v === "" || (typeof v === "object" && !Object.keys(v).length);
      if (["seat", "legal", "page", "night"].includes(k) || empty) continue;
      lines.push({ text: `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}` });
    }
  }
  fill(view, lines, (line) => el("p", line));
  $("reveal").hidden = !view.querySelector(".secret");
  reveal(revealing);
}
// What the table tells this seat alone (a ``tell``: a role, where the treasures lie, a sealed
// bid) is a secret, never shown unheld, not even for a moment: the status line says only that
// it came (``note``), and what it told is the seat's page now, its lines held with the others.
// (This file is public: the privacy walks read it, so it quotes no line a seat is told.)
function tellMe(note) { status(t(note), true); }
// Held (a pointer, or Space/Enter on the button) the secret shows; let go, it is hidden again.
let revealing = false;
function reveal(on) {
  revealing = on;
  $("me-view").classList.toggle("sealed", !on);
  $("reveal").setAttribute("aria-expanded", String(on));
  $("reveal").textContent = t(on ? "revealed" : "reveal");
}
{
  const b = $("reveal"), hide = () => reveal(false);
  b.addEventListener("pointerdown", (e) => { e.preventDefault(); b.setPointerCapture?.(e.pointerId); reveal(true); });
  for (const ev of ["pointerup", "pointercancel", "lostpointercapture", "blur"]) b.addEventListener(ev, hide);
  b.addEventListener("keydown", (e) => { if (e.key === " " || e.key === "Enter") { e.preventDefault(); reveal(true); } });
  b.addEventListener("keyup", (e) => { if (e.key === " " || e.key === "Enter") hide(); });
  b.addEventListener("contextmenu", (e) => e.preventDefault());  // a long press is the hold, not a menu
  document.addEventListener("visibilitychange", hide);
}

// One form a field this player may send now, each its own <form>: Enter submits
// only the field it was pressed in.  A field with choices and a range is a choice
// and an amount: it sends {to, gems} (Demagogos' gift).  A field whose game has a
// confirm line (``confirm.<game>.<field>``, from /api/games) is confirmed on the
// page first, in the table's language; an empty field is refused here.
let confirming = null;  // {field, value}: a send waiting for "yes"
function confirmText(field, value) {
  const c = gameInfo(state.game).confirm || {};
  const n = typeof value === "object" ? value.gems : value;
  const line = (n === 1 && c[field + ".one"]) || c[field];
  if (!line) return null;
  const args = typeof value === "object" ? { ...value, to: who(String(value.to)) } : { n: value };
  return line.replace(/\{(\w+)\}/g, (m, k) => String(args[k] ?? m));
}
// A control's answer is all it hears back (the server's ``_control``): the verdict, what the
// table told this seat for it ("Your bid: 2.": a secret, never shown here) and this seat's page after it,
// drawn at once — unless the feed brought a page meanwhile (as new, or newer).
// ``r.current``: whether the step the control answered is still the page's (a step, round or
// language since: its refusal is the past, and shown no more).
async function answered(path, body) {
  const seen = meSeen, at = stepNow();
  const r = await post(path, body);
  if (r.me && me && seen === meSeen) { me = { seat: me.seat, ...r.me }; render(); }
  r.current = stepNow() === at;
  return r;
}
// A control's verdict on the status line: a refusal, "✓", or (the table told this seat
// something for it) that it was sent and is held with the secrets.
function verdict(r, done) {
  if (!r.ok && !r.current) return;
  if (r.ok && r.told && r.told.length) return tellMe("sent_secret");
  status(r.ok ? done : refusal(r), r.ok);
}
async function send(field, value, button) {
  confirming = null;
  button.disabled = true;
  const r = await answered("/api/submit", { field, value });
  button.disabled = false;
  verdict(r, "✓");
  if (r.ok) {  // sent: the choice is the table's now, and not kept in sight (it is held, if told)
    const form = $("submits").querySelector(`form[data-field="${field}"]`);
    if (form) form.querySelectorAll("input, select").forEach((i) => { i.value = ""; });
  }
  renderSubmits();
}
// A field with one value (``kind: button``: +1 min, pause / go on): a button named by
// its label, one press sends the value — nothing to type.
function buttonForm(field, ask) {
  const button = el("button", { type: "submit", "data-field": field, text: ask.text || field });
  const form = el("form", { class: "submit button", "data-field": field }, button);
  form.addEventListener("submit", (ev) => { ev.preventDefault(); send(field, ask.low, button); });
  return form;
}

let submitsDrawn = null;  // what the forms were last drawn from
function renderSubmits() {
  const box = $("submits");
  const submits = (me.legal && me.legal.submits) || {};
  if (confirming && !submits[confirming.field]) confirming = null;
  // A snapshot arrives whenever anyone acts: the forms are drawn again only when
  // what they ask changed, never under the fingers of a player typing in them
  // (a key pressed as a field was replaced landed in the new one, before its text).
  const drawing = JSON.stringify([submits, confirming, lang, (state.seats || []).map((seat) => seat.called)]);
  if (drawing === submitsDrawn && box.childElementCount) return;
  submitsDrawn = drawing;
  // Drawn again: keep what this player was typing.
  const typed = new Map([...box.querySelectorAll("input, select")].map((i) => [i.name, i.value]));
  const focused = document.activeElement && box.contains(document.activeElement) ? document.activeElement.name : null;
  box.replaceChildren();
  for (const [field, ask] of Object.entries(submits)) {
    if (ask.kind === "button") { box.append(buttonForm(field, ask)); continue; }
    const inputs = [];
    const number = (name, label) => el("input", { name, id: `submit-${name}`, ...(label ? { "aria-label": label } : {}),
      type: "number", inputmode: "numeric",
      min: String(ask.low ?? ""), max: String(ask.high ?? ""), value: String(ask.low ?? 0) });
    if (ask.choices && ask.choices.length) {
      // no choice made for the player: a placeholder first, and Send refused until one is chosen
      const pick = el("select", { name: field, id: `submit-${field}` },
        el("option", { value: "", disabled: "", selected: "", text: t("choose") }));
      ask.choices.forEach((c) => pick.append(el("option", { value: String(c), text: who(String(c)) })));
      inputs.push(pick);
      if (ask.high) inputs.push(number(field + "-amount", `${ask.text || field}: ${t("amount")}`));
    } else {
      inputs.push(number(field));
    }
    const button = el("button", { type: "submit", "data-field": field, text: t("send"),
                                  "aria-label": `${t("send")}: ${ask.text || field}` });
    const form = el("form", { class: "submit", "data-field": field, novalidate: "" },
      el("label", { for: `submit-${field}`, text: (ask.text || field) + " " }), ...inputs, button);
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const [first, amount] = inputs;
      if (first.tagName === "SELECT" && !first.value) { first.focus(); return status(t("choose_first"), false); }
      const num = amount || (first.type === "number" ? first : null);
      if (num) {  // empty or not a whole number: refused here, never sent as 0 (the range: the table's refusal)
        const v = num.value.trim() === "" ? NaN : Number(num.value);
        if (!Number.isInteger(v)) {
          num.focus();
          return status(t("range").replace("{low}", ask.low).replace("{high}", ask.high), false);
        }
      }
      const value = amount ? { to: first.value, gems: Number(amount.value) } : num ? Number(first.value) : first.value;
      if (confirmText(field, value) === null) return send(field, value, button);
      confirming = { field, value };
      renderSubmits();
    });
    if (confirming && confirming.field === field) {
      const yes = el("button", { type: "button", class: "yes", "data-confirm": field, text: t("yes") });
      const no = el("button", { type: "button", class: "no", text: t("cancel") });
      yes.addEventListener("click", () => send(field, confirming.value, yes));
      no.addEventListener("click", () => { confirming = null; renderSubmits(); });
      form.append(el("p", { class: "confirm", role: "alertdialog" },
        el("span", { text: confirmText(field, confirming.value) + " " }), yes, no));
      button.disabled = true;
    }
    box.append(form);
    for (const input of inputs) {
      if (typed.has(input.name)) input.value = typed.get(input.name);
      if (input.name === focused) input.focus();
    }
    if (confirming && confirming.field === field) form.querySelector(".yes").focus();
  }
}

// The display name: its own form, so Enter in it sends the name and nothing else;
// an empty name is refused here, the rest (too long, another seat's) by the table.
$("name-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const input = $("name-input"), button = ev.target.querySelector("button");
  const name = input.value.trim();
  if (!name) { input.focus(); return status(t("name_empty"), false); }
  button.disabled = true;
  const r = await answered("/api/name", { name });
  button.disabled = false;
  if (!r.ok) { input.focus(); return status(refusal(r), false); }
  input.value = "";
  status(t("name_set").replace("{name}", name), true);
});

let meSource = null, meSeen = 0;  // meSeen: pages the feed brought (``answered`` keeps the newer)
async function loadMe() {
  let r;
  try { r = await fetch("/api/me", { credentials: "same-origin" }); }
  catch (e) { offline(true); setTimeout(loadMe, 1000); return; }  // the table is away: ask again soon
  if (!r.ok) {  // never paired, or no longer: another phone took the seat, or the evening ended
    if (me) status(t("unpaired"), false);
    me = null; render(); return;
  }
  me = await r.json(); render();
  if (meSource) meSource.close();
  meSource = new EventSource("/api/me/events");
  meSource.addEventListener("me", (e) => { meSeen++; me = { seat: me.seat, ...JSON.parse(e.data) }; render(); });
  meSource.addEventListener("event", (e) => {
    const ev = JSON.parse(e.data);
    // What the table tells this seat is the word of the moment, fading like any confirmation:
    // what stays is the seat's state now, its page's lines (your role, boxes, gems, bid),
    // so nothing of a closed auction or an earlier game lingers on a lit phone.
    // The seat's feed and the table's are two streams: a word told in the language the table
    // has just left can come after the snapshot that changed it, and stays unsaid here.
    // (A refusal of this page's own control is in its answer, not here.)
    if (ev.event === "tell" && !(state && state.lang && ev.lang && ev.lang !== state.lang)) tellMe("new_secret");
  });
  // the server ends a seat's feed when the seat is no longer this phone's (another phone
  // took it, the evening ended): asked again, the page drops its private text and says so
  meSource.onerror = () => { if (meSource.readyState === EventSource.CLOSED) loadMe(); };
}

async function press(button) {
  pressConfirm = null; renderControls();
  const r = await answered("/api/press", { button });
  verdict(r, "✓ " + t(button));
}
document.querySelectorAll("[data-press]").forEach((b) => b.addEventListener("click", () => {
  if (b.dataset.press === "next" && confirmNext()) {  // it ends the step for everyone: asked first
    pressConfirm = true; renderControls(); document.querySelector("#press-confirm .yes").focus(); return;
  }
  press(b.dataset.press);
}));
document.querySelector("#press-confirm .yes").addEventListener("click", () => press("next"));
document.querySelector("#press-confirm .no").addEventListener("click", () => { pressConfirm = null; renderControls(); });

// The virtual table (simulation only): every component a button, the panel's
// buttons (back: a click presses it, holding it restarts the step), the
// reader's cable, and the panel's LEDs.
async function loadVirtual() {
  const r = await fetch("/api/virtual");
  if (!r.ok) return;
  const v = await r.json();
  $("virtual").hidden = false;
  const panel = $("panel"); panel.replaceChildren();
  for (const name of v.buttons) {
    panel.append(panelButton(name, v.hold_back_s));
    if (name === "back") panel.append(holdButton());
  }
  const cable = el("button", { id: "cable" });
  const plugged = (on) => { cable.dataset.plugged = on ? "1" : ""; cable.dataset.t = on ? "unplug" : "plug";
    cable.textContent = t(cable.dataset.t); };
  plugged(v.plugged);
  cable.addEventListener("click", async () => {
    const a = await post("/api/virtual/reader", { plugged: !cable.dataset.plugged });
    if (a.ok) plugged(a.plugged); else status(a.reason, false);
  });
  panel.append(cable);
  const box = $("components"); box.replaceChildren();
  for (const identity of v.components) {
    const b = el("button", { "data-tap": identity, text: identity });
    b.addEventListener("click", async () => { const a = await post("/api/virtual/tap", { identity });
      if (!a.ok) status(a.reason, false); });
    box.append(b);
  }
  ledsNow = v.leds; leds(ledsNow);
}
function panelButton(name, holdS) {
  // its words by key (``data-t``, ``data-t-label``, ``data-t-title``): drawn again in the table's language
  const b = el("button", { "data-panel": name, "data-t": name, "data-t-label": name, text: t(name),
                           "aria-label": `${t("virtual")}: ${t(name)}` });
  if (name === "back") { b.dataset.tTitle = "hold_back"; b.title = t("hold_back"); }
  let down = null;
  b.addEventListener("pointerdown", () => { down = performance.now(); });
  b.addEventListener("click", async () => {
    const hold = name === "back" && down !== null && performance.now() - down >= holdS * 1000;
    down = null;
    const a = await post("/api/virtual/press", { button: name, hold });
    if (!a.ok) status(a.reason, false);
  });
  return b;
}
// Holding back is a press held past the panel's hold time: a keyboard (or a switch) cannot
// hold a button, so the hold is its own button, sent as the panel's hold.
function holdButton() {
  const b = el("button", { "data-panel-hold": "back", "data-t": "hold_key", text: t("hold_key") });
  b.addEventListener("click", async () => {
    const a = await post("/api/virtual/press", { button: "back", hold: true });
    if (!a.ok) status(a.reason, false);
  });
  return b;
}
let ledsNow = null, ledsLang = null;  // the panel's LEDs as last told (the virtual table's), and in which language
function leds(state) {
  const p = $("leds"); p.replaceChildren();
  ledsLang = lang;
  for (const [name, on] of Object.entries(state || {})) {  // on or off in words too, not by colour alone
    const word = t("leds")[name] || name;
    p.append(el("span", { class: `led ${name}${on ? " on" : ""}`, role: "img", "aria-label": `${word}: ${t(on ? "on" : "off")}` }), word);
  }
}

// A snapshot, and the table's clock when it was sent: the countdown counts on the table's time.
function took(s) {
  state = s;
  if (typeof s.clock === "number") skew = s.clock - Date.now() / 1000;
}

let source = null;
function listen() {
  source = new EventSource("/api/events");
  source.onopen = () => offline(false);
  // lost: the bar at once; the browser reconnects by itself (the server's retry: 1 s),
  // and a feed the browser gave up on (CLOSED) is opened again here
  source.onerror = () => { offline(true); if (source.readyState === EventSource.CLOSED) setTimeout(listen, 1000); };
  // a snapshot brings the game log only when the lines on the feed are not it (a new game, another language)
  source.addEventListener("table", (e) => { const { history, log } = state; took(JSON.parse(e.data));
    if (!state.history) state.history = history; if (!state.log) state.log = log; render(); });
  source.addEventListener("history", (e) => { state.history = JSON.parse(e.data); render(); });
  // Every line the table says is the page's line: a refusal or a repeat changes
  // no snapshot, but the room heard it.
  source.addEventListener("event", (e) => { const ev = JSON.parse(e.data);
    if (ev.event !== "say" || ev.aside) return;  // an aside (the address) is not the game's line
    state.now = { ...(state.now || {}), line: ev.text, key: ev.key };
    logged({ key: ev.key, text: ev.text }); });
  source.addEventListener("leds", (e) => { ledsNow = JSON.parse(e.data); leds(ledsNow); });
  source.addEventListener("feedback", (e) => { const ok = JSON.parse(e.data).ok; document.body.dataset.feedback = ok ? "ok" : "error"; });
}
listen();

Promise.all([fetch("/api/table").then((r) => r.json()), fetch("/api/games").then((r) => r.json()).catch(() => ({}))])
  // the feed may have brought a newer snapshot while these were on their way: keep the newer
  .then(([s, games]) => { if ((state.version ?? -1) > s.version) state = { ...state, history: s.history }; else took(s);
    GAMES = games; render(); loadMe(); loadVirtual(); });
