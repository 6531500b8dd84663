// The crib serve page: plain JS, no build step. The server holds the game; this only draws the
// view it sends and posts the person's clicks. Every refusal comes back as {detail: reason}.
// Every text from the server (names, talk, errors) goes into the page as text (textContent,
// append), never as HTML: a checkpoint folder may be called anything. The server's
// Content-Security-Policy allows no inline script, so every handler is set here.
"use strict";

const $ = (id) => document.getElementById(id);
const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
let gameId = null;
let view = null;
let selected = [];
let replay = null;   // {players, frames, index}
let records = [];    // the opened replay file's games

async function api(method, path, body) {
  const options = { method, headers: { "Content-Type": "application/json" } };
  if (body !== undefined) options.body = JSON.stringify(body);
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    let detail = data.detail;
    if (Array.isArray(detail)) detail = detail.map((d) => d.msg).join("; ");
    throw new Error(detail || `HTTP ${response.status}`);
  }
  return data;
}

// An element with properties and children (strings become text nodes, never markup).
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  node.append(...children.map((c) => (c instanceof Node ? c : String(c))));
  return node;
}

function cardEl(text, tag = "span", extra = "") {
  const el = document.createElement(tag);
  el.className = `card ${extra}`;
  if (text) {
    const suit = text.slice(-1);
    el.textContent = text.slice(0, -1).replace("T", "10") + SUITS[suit];
    if (suit === "D" || suit === "H") el.classList.add("red");
    el.dataset.card = text;
  }
  return el;
}

function cards(container, list, extra = "") {
  container.replaceChildren(...list.map((c) => cardEl(c, "span", extra)));
}

function say(text) { $("message").textContent = text || ""; }

// Counts finished redraws after a request (the browser test waits on it instead of sleeping).
let renders = 0;
function rendered() { document.body.dataset.renders = String(++renders); }

// -- the peg board: GET /api/board gives every hole (streets of 30 in groups of 5, the skunk
// lines); the page draws it once per target and moves the four pegs.
const SVG = "http://www.w3.org/2000/svg";
let board = null;

function svgEl(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

async function loadBoard(target) {
  if (board && board.target === target) return;
  board = await api("GET", `/api/board?target=${target}`);
  const svg = $("board");
  svg.setAttribute("viewBox", `0 0 ${board.width} ${board.height}`);
  svg.dataset.target = String(target);
  const parts = [svgEl("rect", { x: 0, y: 0, width: board.width, height: board.height, rx: 10,
                                 class: "wood" })];
  for (const s of board.streets) {
    parts.push(svgEl("rect", { x: s.x, y: s.y, width: s.width, height: s.height, rx: 4,
                               class: "street" }));
  }
  board.holes.forEach((track, t) => track.forEach(([x, y], score) => {
    const end = score === 0 || score === board.target;   // a start hole, the game hole
    const hole = svgEl("circle", { cx: x, cy: y, r: end ? 1.6 * board.hole_r : board.hole_r,
                                   class: `hole track-${t}` });
    hole.dataset.score = String(score);
    parts.push(hole);
  }));
  for (const line of board.lines) {
    const mark = svgEl("line", { x1: line.x1, y1: line.y1, x2: line.x2, y2: line.y2,
                                 class: `line ${line.name.replace(" ", "-")}` });
    mark.dataset.score = String(line.score);
    const left = line.x1 < board.width / 2;   // the label reads inwards from the line
    const label = svgEl("text", { x: line.x1 + (left ? 3 : -3), y: line.y1 - 2,
                                  class: "line-label", "text-anchor": left ? "start" : "end" });
    label.textContent = `${line.name} ${line.score}`;
    parts.push(mark, label);
  }
  for (const who of ["you", "opponent"]) {
    for (const which of ["back", "front"]) {
      parts.push(svgEl("circle", { id: `peg-${who}-${which}`, r: board.hole_r + 2.5,
                                   class: `peg ${who} ${which}` }));
    }
  }
  svg.replaceChildren(...parts);
}

function placePeg(who, which, score) {
  const track = who === "you" ? 0 : 1;
  const [x, y] = board.holes[track][Math.max(0, Math.min(score, board.target))];
  const peg = $(`peg-${who}-${which}`);
  peg.setAttribute("cx", x);
  peg.setAttribute("cy", y);
  peg.dataset.score = String(score);
}

function setPegs(lane, score, target, label) {
  const lanes = $(lane);
  const who = lane === "lane-you" ? "you" : "opponent";
  if (board && board.target === target) {
    placePeg(who, "back", score.back);
    placePeg(who, "front", score.front);
  }
  lanes.querySelector(".score").textContent = `${score.front} (back peg ${score.back})`;
  if (label) lanes.querySelector(".who").textContent = label;
}

// The opponent moves straight after the person: what it did stays on the page until the next
// answer, and its last card is marked on the table.
function drawLastMove(previous) {
  const before = previous && previous.id === view.id ? previous.talk.length : view.talk.length;
  const theirs = view.talk.slice(before).filter((a) => a.player === 1 &&
                                                 (a.kind === "play" || a.kind === "go"));
  $("last-move").textContent = theirs.length
    ? `Last move: ${theirs.map((a) => a.text).join("; ")}` : "";
  const laid = view.sequence.filter((s) => s.by === "opponent");
  if (theirs.length && laid.length) {
    const last = laid[laid.length - 1].card;
    const node = $("sequence").querySelector(`[data-card="${last}"]`);
    if (node) node.classList.add("last");
  }
}

// -- the game ---------------------------------------------------------------------------------

// Shipped checkpoints always, first; the others a page at a time, found by search.
async function loadOpponents(search = "") {
  const data = await api("GET", `/api/opponents?search=${encodeURIComponent(search)}`);
  const select = $("opponent");
  const chosen = select.value;
  select.replaceChildren(...[...data.names, ...data.checkpoints].map((name) =>
    el("option", { value: name, textContent: name })));
  const others = data.checkpoints.length - data.shipped.length;
  const o = data.others;
  $("checkpoint-more").textContent = o.total > others
    ? `${others} of ${o.total} other checkpoints listed${o.search ? " matching" : ""}; ` +
      "type part of a path to find the rest"
    : (o.search ? `${o.total} other checkpoints match` : "");
  if ([...select.options].some((opt) => opt.value === chosen)) select.value = chosen;
  else select.value = data.names.includes("standard") ? "standard" : data.names[0];
}

let searchTimer = null;
function searchCheckpoints() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    loadOpponents($("checkpoint-search").value).then(rendered).catch((err) => say(err.message));
  }, 200);
}

async function newGame() {
  const body = { opponent: $("opponent").value, practice: $("practice").checked };
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  try {
    await show(await api("POST", "/api/games", body));
    say("");
  } catch (err) { say(err.message); }
  rendered();
}

async function send(path, body) {
  try {
    await show(await api("POST", `/api/games/${gameId}/${path}`, body));
    say("");
  } catch (err) { say(err.message); }
  rendered();
}

async function show(next) {
  const previous = view;
  if (!previous || previous.id !== next.id) $("review").hidden = true;
  gameId = next.id;
  view = next;
  selected = [];
  $("game").hidden = false;
  $("replay").hidden = true;
  $("analysis").hidden = true;
  const t = view.target;
  try { await loadBoard(t); } catch (err) { say(err.message); }
  setPegs("lane-you", view.scores.you, t, "You" + (view.dealer === "you" ? " (crib)" : ""));
  setPegs("lane-opponent", view.scores.opponent, t,
          view.opponent + (view.dealer === "opponent" ? " (crib)" : ""));
  let status = `Deal ${view.deal}: ${view.dealer === "you" ? "your" : view.opponent + "'s"} crib. `;
  if (view.result) status = view.result;
  else if (view.phase === "show") status += "The show.";
  else if (view.phase === "discard") status += "Throw two cards to the crib.";
  else if (view.your_turn) status += "Your play.";
  $("status").textContent = status;
  cards($("opponent-cards"), Array(view.opponent_cards).fill(""), "back small");
  $("opponent-go").textContent = view.opponent_said_go ? `${view.opponent} said go` : "";
  $("starter").replaceChildren(view.starter ? cardEl(view.starter) : cardEl("", "span", "back"));
  $("count").textContent = view.count;
  $("sequence").replaceChildren(...view.sequence.map((s) => cardEl(s.card, "span", `by-${s.by}`)));
  $("crib").textContent = `${view.crib_cards} cards` +
    (view.your_discards.length ? ` (you threw ${view.your_discards.join(" ")})` : "");
  drawHand();
  drawShow();
  drawTalk();
  drawResult();
  drawLastMove(previous);
}

function drawHand() {
  const hand = $("hand");
  hand.replaceChildren(...view.hand.map((c) => {
    const el = cardEl(c, "button", view.legal.includes(c) ? "legal" : "");
    if (selected.includes(c)) el.classList.add("selected");
    el.type = "button";
    el.addEventListener("click", () => clickCard(c));
    return el;
  }));
  $("throw").hidden = !(view.your_turn && view.phase === "discard");
  $("ask-analysis").hidden = !view.your_turn;
  $("hand-area").hidden = view.phase === "show" || (view.over && !view.hand.length);
}

function clickCard(card) {
  if (view.phase === "discard") {   // choose two, then throw
    selected = selected.includes(card) ? selected.filter((c) => c !== card) : [...selected, card];
    drawHand();
    return;
  }
  send("move", { cards: [card] });   // the server says why if the card cannot be played
}

function drawShow() {
  const area = $("show-area");
  area.hidden = !view.show;
  if (!view.show) return;
  const s = view.show;
  $("show-title").textContent = `The show, deal ${s.deal} (starter ${view.starter})`;
  $("show-counts").replaceChildren(...s.counts.map((c) => {
    const row = document.createElement("div");
    row.className = "count-row";
    const who = c.owner === "you" ? "Your" : `${view.opponent}'s`;
    row.append(`${who} ${c.what}: `);
    c.cards.forEach((card) => row.append(cardEl(card, "span", "small")));
    row.append(" ", c.talk === null ? "(count it yourself)" : `${c.talk} = ${c.points}`);
    row.dataset.points = c.points === null ? "" : c.points;
    return row;
  }));
  const needed = s.claims_needed;
  $("claim-form").hidden = needed.length === 0;
  $("claim-hand-label").hidden = !needed.includes("hand");
  $("claim-crib-label").hidden = !needed.includes("crib");
  $("continue").hidden = needed.length > 0 || view.over;
}

function drawTalk() {
  const list = $("talk");
  list.replaceChildren(...view.talk.slice().reverse().map((a) => {
    const li = document.createElement("li");
    li.textContent = a.text;
    if (a.points) li.className = "scored";
    return li;
  }));
  const claims = view.claims;
  $("practice-record").textContent = claims.length
    ? `Count practice: ${claims.filter((c) => c.right).length} of ${claims.length} right (` +
      claims.map((c) => `${c.what} ${c.claimed}/${c.actual}`).join(", ") + ")"
    : "";
}

function drawResult() {
  const box = $("result");
  box.hidden = !view.result;   // withheld while a practice count is still to be claimed
  if (!view.result) return;
  const cells = (tag, values) => values.map((v) => el(tag, {}, v));
  const header = el("tr", {}, ...cells("th", ["deal", "dealer", "you: peg", "hand", "crib", "total",
    `${view.opponent}: peg`, "hand", "crib", "total"]));
  const rows = view.deals.map((d) => el("tr", {}, ...cells("td", [
    d.deal, d.dealer === "you" ? "you" : view.opponent,
    ...["you", "opponent"].flatMap((s) =>
      [d[s].pegging, d[s].hand, d[s].crib + d[s].heels, d[s].total])])));
  const review = el("button", { id: "review-game", type: "button", textContent: "Review this game" });
  review.addEventListener("click", () => openReview(() => fetch(`/api/games/${gameId}/review`),
                                                    `/api/games/${gameId}/review`));
  box.replaceChildren(el("h2", { id: "result-title", textContent: view.result }),
                      el("table", {}, header, ...rows), review);
}

// -- reviews ----------------------------------------------------------------------------------

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

// ``start`` makes the first request; while the answer is 202 (computing), ``poll`` is asked again.
async function openReview(start, poll) {
  const box = $("review");
  box.hidden = false;
  $("review-summary").textContent = "Computing the review: every throw simulated, every play searched...";
  $("review-biggest").replaceChildren();
  $("review-moves").replaceChildren();
  $("review-detail").replaceChildren();
  delete box.dataset.loaded;
  try {
    let response = await start();
    let data = await response.json().catch(() => ({}));
    const where = typeof poll === "function" ? poll(data) : poll;
    while (response.status === 202) {
      await sleep(1000);
      response = await fetch(where);
      data = await response.json().catch(() => ({}));
    }
    if (!response.ok) {
      let detail = data.detail;
      if (Array.isArray(detail)) detail = detail.map((d) => d.msg).join("; ");
      throw new Error(detail || `HTTP ${response.status}`);
    }
    drawReview(data.review);
  } catch (err) { $("review-summary").textContent = `No review: ${err.message}`; }
  box.scrollIntoView({ block: "start" });
}

const pct = (x) => `${(100 * x).toFixed(1)}%`;

function drawReview(review) {
  const names = review.players;
  const s = review.settings;
  $("review-title").textContent = `Review of ${names[0]} ${review.scores[0]} - ` +
    `${review.scores[1]} ${names[1]}: the decisions of ${names[review.seat]}`;
  $("review-summary").textContent = `${review.decisions.length} decisions. Throws: the rest of ` +
    `the deal simulated ${s.sims} times from each, then the win-odds table; plays valued by ${s.agent}.`;
  const marked = new Set(review.biggest);
  $("review-biggest").replaceChildren(...review.biggest.map((n) => {
    const d = review.decisions[n];
    const li = el("li", { className: "loss" }, d.text);
    li.dataset.n = String(n);
    li.dataset.loss = d.loss.toFixed(4);
    li.addEventListener("click", () => drawDecision(d));
    return li;
  }));
  if (!review.biggest.length) $("review-biggest").append(el("li", {}, "none: every choice was the best"));
  $("review-moves").replaceChildren(...review.decisions.map((d) => {
    const li = el("li", { className: marked.has(d.n) ? "marked" : "" },
                  marked.has(d.n) ? "! " : "", d.text);
    li.dataset.n = String(d.n);
    li.addEventListener("click", () => drawDecision(d));
    return li;
  }));
  if (review.biggest.length) drawDecision(review.decisions[review.biggest[0]]);
  $("review").dataset.loaded = "1";
}

function drawDecision(d) {
  const row = (tag, values, props = {}) => el("tr", props, ...values.map((v) => el(tag, {}, v)));
  const chosen = (o) => (d.kind === "discard" ? o.throw.join(" ") === d.chosen.join(" ")
                                               : o.card === d.chosen);
  const table = d.kind === "discard"
    ? el("table", {}, row("th", ["throw", "keep", "hand", "crib", "net", "win (stderr)"]),
         ...d.options.map((o) => row("td", [o.throw.join(" "), o.keep.join(" "), o.hand.toFixed(2),
           o.crib.toFixed(2), o.net.toFixed(2), `${pct(o.win_chance)} (${pct(o.win_stderr)})`],
           { className: chosen(o) ? "chosen" : "" })))
    : el("table", {}, row("th", ["card", "win"]),
         ...d.options.map((o) => row("td", [o.card, pct(o.win_chance)],
                                      { className: chosen(o) ? "chosen" : "" })));
  $("review-detail").replaceChildren(el("p", {}, d.text), table);
}

async function reviewReplay() {
  const record = replay && replay.record;
  if (!record) return;
  await openReview(() => fetch("/api/review", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ record }),
  }), (data) => `/api/reviews/${data.id}`);
}

async function askAnalysis() {
  try {
    const a = await api("GET", `/api/games/${gameId}/analysis`);
    const row = (tag, values, props = {}) => el("tr", props, ...values.map((v) => el(tag, {}, v)));
    const signed = (x) => `${x >= 0 ? "+" : ""}${x.toFixed(2)}`;
    const table = a.kind === "discard"
      ? el("table", {}, row("th", ["#", "throw", "keep", "hand", "crib", "net", "win (stderr)"]),
           ...a.options.map((o, i) => row("td", [i + 1, o.throw.join(" "), o.keep.join(" "),
             o.hand.toFixed(2), o.crib.toFixed(2), signed(o.net),
             o.win_chance === undefined ? "-" : `${pct(o.win_chance)} (${pct(o.win_stderr)})`],
             { className: i ? "" : "best" })))
      : el("table", {}, row("th", ["card", "count", "pegs now"]),
           ...a.options.map((o) => row("td", [o.card, o.count, o.points])));
    const chance = a.win_chance === null ? a.win_chance_note : `${(100 * a.win_chance).toFixed(1)}%`;
    const box = $("analysis");
    const how = a.kind === "discard"
      ? el("p", { className: "note" }, `Win: the rest of this deal simulated ${a.sims} times from ` +
           "each throw (the same deals for every throw), then the win-odds table at the scores it ends on.")
      : "";
    box.replaceChildren(table, how,
                        el("p", {}, "Chance to win: ", el("span", { id: "win-chance" }, chance)));
    box.hidden = false;
  } catch (err) { say(err.message); }
}

// -- replays ----------------------------------------------------------------------------------

async function readReplayFile() {
  const file = $("replay-file").files[0];
  if (!file) return;
  records = [];
  for (const line of (await file.text()).split("\n")) {
    if (!line.trim()) continue;
    try { records.push(JSON.parse(line)); } catch (err) { say(`not a game record line: ${err.message}`); return; }
  }
  const select = $("replay-game");
  select.replaceChildren(...records.map((r, i) => {
    const option = document.createElement("option");
    option.value = i;
    option.textContent = `game ${i}: ${r.players[0]} ${r.scores[0]} - ${r.scores[1]} ${r.players[1]}`;
    return option;
  }));
  select.hidden = $("open-replay").hidden = records.length === 0;
}

async function openReplay() {
  const record = records[Number($("replay-game").value)];
  try {
    const data = await api("POST", "/api/replay", { record });
    replay = { ...data, index: 0, record };
    $("review").hidden = true;
    $("game").hidden = true;
    $("replay").hidden = false;
    drawReplay();
    say("");
  } catch (err) { say(err.message); }
  rendered();
}

function drawReplay() {
  const f = replay.frames[replay.index];
  const names = replay.players;
  const box = $("replay-board");
  box.replaceChildren();
  $("replay-title").textContent = `Replay: ${names[0]} vs ${names[1]}, deal ${f.deal}`;
  for (const p of [0, 1]) {
    const row = document.createElement("div");
    row.className = "replay-hand";
    row.id = `replay-seat-${p}`;
    const crib = f.dealer === p ? " (crib)" : "";
    const turn = f.to_move === p ? " \u25c0 to move" : "";
    row.append(`${names[p]}${crib}: ${f.scores[p].front} (back ${f.scores[p].back})  hand `);
    f.hands[p].forEach((c) => row.append(cardEl(c, "span", "small")));
    if (f.played[p].length) row.append("  laid ", ...f.played[p].map((c) => cardEl(c, "span", "small")));
    if (f.discards[p].length) row.append("  threw ", ...f.discards[p].map((c) => cardEl(c, "span", "small")));
    row.append(turn);
    box.append(row);
  }
  const table = document.createElement("div");
  table.append(`Starter ${f.starter || "--"}, count ${f.count}, on the table: `);
  f.sequence.forEach((c) => table.append(cardEl(c, "span", "small")));
  box.append(table);
  $("replay-step").textContent = `move ${f.step} of ${replay.frames.length - 1}` +
    (f.action ? ` (${f.action})` : "");
  const talk = replay.frames.slice(0, replay.index + 1).flatMap((x) => x.talk).reverse();
  $("replay-talk").replaceChildren(...talk.map((t) => {
    const li = document.createElement("li");
    li.textContent = t;
    return li;
  }));
}

function stepReplay(to) {
  replay.index = Math.max(0, Math.min(replay.frames.length - 1, to));
  drawReplay();
}

// -- wiring -----------------------------------------------------------------------------------

for (const form of ["setup", "replay-form"]) $(form).addEventListener("submit", (e) => e.preventDefault());
$("checkpoint-search").addEventListener("input", searchCheckpoints);
$("new-game").addEventListener("click", newGame);
$("throw").addEventListener("click", () => send("move", { cards: selected }));
$("ask-analysis").addEventListener("click", askAnalysis);
$("continue").addEventListener("click", () => send("continue"));
$("claim").addEventListener("click", () => {
  const body = {};
  for (const what of view.show.claims_needed) {
    const text = $(`claim-${what}`).value;
    body[what] = text === "" ? null : Number(text);
  }
  send("claim", body);
});
$("replay-file").addEventListener("change", readReplayFile);
$("open-replay").addEventListener("click", openReplay);
$("replay-start").addEventListener("click", () => stepReplay(0));
$("replay-prev").addEventListener("click", () => stepReplay(replay.index - 1));
$("replay-next").addEventListener("click", () => stepReplay(replay.index + 1));
$("replay-end").addEventListener("click", () => stepReplay(replay.frames.length - 1));
$("replay-close").addEventListener("click", () => {
  $("replay").hidden = true;
  $("review").hidden = true;
  if (view) $("game").hidden = false;
});
$("replay-review").addEventListener("click", reviewReplay);
loadOpponents().catch((err) => say(err.message));

// A game in progress (kept by the server, even across its restarts) is offered, never forced.
async function offerResume() {
  const { in_progress: ids } = await api("GET", "/api/player/games");
  $("resume").hidden = ids.length === 0;
  $("resume").dataset.game = ids[0] || "";
}
$("resume").addEventListener("click", async () => {
  try {
    await show(await api("GET", `/api/games/${$("resume").dataset.game}`));
    $("resume").hidden = true;
    say("");
  } catch (err) { say(err.message); }
  rendered();
});
offerResume().catch(() => {});

// /#game=ID opens one of the player's games (the statistics page links each finished one here,
// with its review).
async function openLinkedGame() {
  const match = /^#(game|review)=([\w-]+)$/.exec(location.hash);
  if (!match) return;
  try {
    await show(await api("GET", `/api/games/${match[2]}`));
    if (match[1] === "review") {
      await openReview(() => fetch(`/api/games/${gameId}/review`), `/api/games/${gameId}/review`);
    }
  } catch (err) { say(err.message); }
  rendered();
}
openLinkedGame();
window.addEventListener("hashchange", openLinkedGame);
