// The statistics page: draws GET /api/stats as text (never HTML) and names the player.
"use strict";

const $ = (id) => document.getElementById(id);
const num = (x, digits = 2) => (x === null || x === undefined ? "-" : x.toFixed(digits));
const pct = (x) => `${(100 * x).toFixed(1)}%`;

async function load() {
  const response = await fetch("/api/stats");
  const data = await response.json();
  $("player-name").value = data.player || "";
  $("summary").textContent = data.player
    ? `${data.player}: ${data.games} finished games, ${data.wins} won`
    : "No games yet: play one, then come back.";
  const body = $("by-opponent").querySelector("tbody");
  body.replaceChildren();
  for (const [name, o] of Object.entries(data.opponents)) {
    const d = o.points_per_deal.dealer, p = o.points_per_deal.pone;
    const cells = [name, o.games, o.wins,
      `${pct(o.win_rate)} (${pct(o.win_rate_ci95[0])}-${pct(o.win_rate_ci95[1])})`,
      `${o.skunks_given} / ${o.skunks_taken}`,
      `${o.double_skunks_given} / ${o.double_skunks_taken}`,
      `${num(d.pegging)} / ${num(d.hand)} / ${num(d.crib)}`,
      `${num(p.pegging)} / ${num(p.hand)}`,
      num(o.discard_regret),
      o.count_practice.claims ? `${o.count_practice.right} of ${o.count_practice.claims}` : "-"];
    const row = document.createElement("tr");
    row.dataset.opponent = name;
    for (const c of cells) {
      const td = document.createElement("td");
      td.textContent = String(c);
      row.append(td);
    }
    body.append(row);
  }
  $("plot").src = `/api/stats/plot.svg?t=${Date.now()}`;
  const games = await (await fetch("/api/player/games")).json();
  $("games-list").replaceChildren(...(games.finished || []).map((g) => {
    const li = document.createElement("li");
    const result = g.winner === 0 ? "won" : "lost";
    li.append(`${result} ${g.scores[0]}-${g.scores[1]} against ${g.opponent} `);
    const link = document.createElement("a");
    link.href = `/#review=${encodeURIComponent(g.id)}`;
    link.textContent = "review";
    li.append(link);
    return li;
  }));
  document.body.dataset.loaded = "1";
}

$("save-name").addEventListener("click", async () => {
  const response = await fetch("/api/player", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name: $("player-name").value }),
  });
  const data = await response.json().catch(() => ({}));
  $("name-note").textContent = response.ok ? "saved" : String(
    Array.isArray(data.detail) ? data.detail.map((d) => d.msg).join("; ") : data.detail);
  if (response.ok) load();
});

load();
