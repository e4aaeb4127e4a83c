// srfabric's web view: the fabric, its chains and its switches, from the JSON under /v2.0/srfabric/.
// Plain JavaScript and SVG; live through Server-Sent Events (/v2.0/srfabric/events).
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 1000, HEIGHT = 640;  // the SVG's viewBox
const LAYERS = { core: 90, aggregation: 280, edge: 470 };
const state = { fabric: null, chains: [], schedule: null, positions: new Map(), selected: null };

async function getJson(path) {
  const answer = await fetch(path, { credentials: "same-origin", cache: "no-store" });
  if (!answer.ok) throw new Error(`${path}: HTTP ${answer.status}`);
  return answer.json();
}

function el(name, attributes, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

function html(tag, text, parent) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

// Switches: by role in layers when the controller was told roles; a line or ring along its order; any other
// graph in layers by distance from the switches with hosts (a fat-tree: edges, aggregation, core), each layer
// ordered by where its neighbours below sit. Hosts below their switch, functions beside it.
function layout(fabric) {
  const positions = new Map();
  const switches = fabric.switches;
  const next = neighbours(fabric);
  const withHosts = new Set(fabric.hosts.map((h) => h.dpid));
  const place = (dpid, x, y) => positions.set(`s${dpid}`, { x, y });
  if (switches.some((s) => s.role === "core" || s.role === "aggregation")) {
    for (const role of Object.keys(LAYERS)) {  // any other role shares the edge row
      const row = switches.filter((s) => (s.role in LAYERS ? s.role : "edge") === role);
      row.forEach((s, i) => place(s.dpid, (WIDTH * (i + 1)) / (row.length + 1), LAYERS[role]));
    }
  } else if (switches.every((s) => next.get(s.dpid).size <= 2) || withHosts.size === 0) {
    const order = chainOrder(fabric);
    const ring = hasCycle(fabric) || order.length !== switches.length;
    order.forEach((dpid, i) => {
      const angle = (2 * Math.PI * i) / order.length - Math.PI / 2;
      if (ring) place(dpid, WIDTH / 2 + 300 * Math.cos(angle), HEIGHT / 2 + 200 * Math.sin(angle));
      else place(dpid, (WIDTH * (i + 1)) / (order.length + 1), HEIGHT / 2);
    });
  } else {
    const depth = new Map([...withHosts].map((d) => [d, 0]));
    const queue = [...withHosts];
    while (queue.length) {
      const at = queue.shift();
      for (const peer of next.get(at) || []) {
        if (!depth.has(peer)) { depth.set(peer, depth.get(at) + 1); queue.push(peer); }
      }
    }
    for (const s of switches) if (!depth.has(s.dpid)) depth.set(s.dpid, 0);
    const deepest = Math.max(1, ...depth.values());
    for (let level = 0; level <= deepest; level++) {
      const row = switches.filter((s) => depth.get(s.dpid) === level).map((s) => s.dpid);
      const below = (dpid) => {
        const xs = [...next.get(dpid)].map((p) => positions.get(`s${p}`)).filter(Boolean).map((p) => p.x);
        return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : dpid;
      };
      if (level > 0) row.sort((a, b) => below(a) - below(b));
      else row.sort((a, b) => a - b);
      row.forEach((dpid, i) => place(dpid, (WIDTH * (i + 1)) / (row.length + 1), 470 - (level * 380) / deepest));
    }
  }
  const attached = new Map();
  for (const host of fabric.hosts) {
    const at = positions.get(`s${host.dpid}`) || { x: WIDTH / 2, y: HEIGHT / 2 };
    const n = attached.get(host.dpid) || 0;
    attached.set(host.dpid, n + 1);
    positions.set(`h${host.name}`, { x: at.x + (n % 2 ? 1 : -1) * (14 + 14 * Math.floor(n / 2)), y: at.y + 80 + (n % 2) * 34 });
  }
  const beside = new Map();
  for (const fn of fabric.functions) {
    const at = positions.get(`s${fn.ingress.dpid}`) || { x: WIDTH / 2, y: HEIGHT / 2 };
    const n = beside.get(fn.ingress.dpid) || 0;
    beside.set(fn.ingress.dpid, n + 1);
    positions.set(`f${fn.name}`, { x: at.x + 45 + 36 * n, y: at.y - 55 });
  }
  return positions;
}

function neighbours(fabric) {
  const next = new Map(fabric.switches.map((s) => [s.dpid, new Set()]));
  for (const link of fabric.links) {
    if (next.has(link.from.dpid)) next.get(link.from.dpid).add(link.to.dpid);
  }
  return next;
}

function hasCycle(fabric) {
  const edges = new Set(fabric.links.map((l) => [l.from.dpid, l.to.dpid].sort().join("-")));
  return edges.size >= fabric.switches.length && fabric.switches.length > 2;
}

// Switches in breadth-first order from one end of the fabric (a line comes out in order).
function chainOrder(fabric) {
  const next = neighbours(fabric);
  const start = fabric.switches.find((s) => next.get(s.dpid).size <= 1) || fabric.switches[0];
  if (!start) return [];
  const seen = [start.dpid];
  for (let i = 0; i < seen.length; i++) {
    for (const peer of [...next.get(seen[i])].sort((a, b) => a - b)) if (!seen.includes(peer)) seen.push(peer);
  }
  for (const s of fabric.switches) if (!seen.includes(s.dpid)) seen.push(s.dpid);
  return seen;
}

function draw() {
  const fabric = state.fabric;
  const svg = document.getElementById("topology");
  svg.replaceChildren();
  state.positions = layout(fabric);
  const pos = state.positions;
  const links = new Map();  // one line per link, down if either direction is
  for (const link of fabric.links) {
    const ends = [`${link.from.dpid}:${link.from.port}`, `${link.to.dpid}:${link.to.port}`].sort();
    const key = ends.join("-");
    const known = links.get(key);
    links.set(key, { link, state: known && known.state === "down" ? "down" : link.state });
  }
  for (const [key, { link, state: linkState }] of links) {
    const a = pos.get(`s${link.from.dpid}`), b = pos.get(`s${link.to.dpid}`);
    if (!a || !b) continue;
    el("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: `link ${linkState}`, "data-link": key,
                 "data-state": linkState }, svg);
  }
  for (const host of fabric.hosts) {
    const a = pos.get(`h${host.name}`), b = pos.get(`s${host.dpid}`);
    if (a && b) el("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: "attach" }, svg);
  }
  for (const fn of fabric.functions) {
    const a = pos.get(`f${fn.name}`), b = pos.get(`s${fn.ingress.dpid}`);
    if (a && b) el("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: "attach" }, svg);
  }
  el("g", { id: "paths" }, svg);
  for (const sw of fabric.switches) {
    const at = pos.get(`s${sw.dpid}`);
    const group = el("g", { class: `switch ${sw.role}${sw.connected ? "" : " disconnected"}`,
                            "data-dpid": sw.dpid, transform: `translate(${at.x},${at.y})` }, svg);
    el("rect", { x: -28, y: -14, width: 56, height: 28, rx: 5 }, group);
    el("text", { class: "node-label", y: 4 }, group).textContent = sw.name;
    const clock = (fabric.clocks || {})[sw.name];  // its gPTP state, when srfabric watches it
    if (clock) {
      const label = el("text", { class: `clock${clock.synced ? "" : " unsynced"}`, y: 26 }, group);
      label.textContent = clock.offset_ns === null ? "gPTP: ?" : `gPTP ${clock.offset_ns} ns`;
      el("title", {}, label).textContent = clock.synced ? `follows ${clock.grandmaster} within ${clock.bound_ns} ns`
        : `not synchronised: ${clock.reason}`;
    }
    const bridge = (fabric.bridges || {})[sw.name];  // its scheduler's capabilities, when read over NETCONF
    if (bridge && bridge.capabilities) {
      const caps = bridge.capabilities, cycle = caps["supported-cycle-max"];
      el("title", {}, group).textContent = `gate lists up to ${caps["supported-list-max"]} entries, cycles up to ` +
        `${cycle.numerator}/${cycle.denominator} s, intervals up to ${caps["supported-interval-max"]} ns` +
        (bridge.management ? `; NETCONF ${bridge.management.host}:${bridge.management.port}` : "") +
        (bridge.lost_schedule ? "; lost its schedule: sent again when it answers" : "");
    }
    group.addEventListener("click", () => selectSwitch(sw.dpid));
  }
  for (const host of fabric.hosts) {
    const at = pos.get(`h${host.name}`);
    const group = el("g", { class: "host", "data-host": host.name, transform: `translate(${at.x},${at.y})` }, svg);
    el("circle", { r: 14 }, group);
    el("text", { class: "node-label", y: 28 }, group).textContent = host.name.startsWith("host-") ? host.ip : host.name;
  }
  for (const fn of fabric.functions) {
    const at = pos.get(`f${fn.name}`);
    const group = el("g", { class: `function${fn.up ? "" : " down"}`, "data-function": fn.name,
                            transform: `translate(${at.x},${at.y})` }, svg);
    el("polygon", { points: "0,-15 15,0 0,15 -15,0" }, group);
    el("text", { class: "node-label", y: -20 }, group).textContent = fn.label;
  }
  const down = fabric.links.filter((l) => l.state === "down").length / 2;
  const lead = fabric.leadership;
  const role = lead && !lead.leading ? ` \u2014 this instance follows ${lead.leader || "(no leader yet)"}` : "";
  document.getElementById("summary").textContent =
    `${fabric.switches.length} switches, ${links.size} links${down ? ` (${down} down)` : ""}, ` +
    `${fabric.hosts.length} hosts, ${fabric.functions.length} functions, ${state.chains.length} chains${role}`;
  listChains();
  if (state.selected && state.selected.chain) showChain(state.selected.chain);
  const stream = state.selected && state.selected.stream &&
    ((state.schedule && state.schedule.streams) || []).find((s) => s.id === state.selected.stream);
  if (stream) showStream(stream);
}

function listChains() {
  const list = document.getElementById("chains");
  list.replaceChildren();
  for (const chain of state.chains) {
    const item = html("li", `${chain.label}: ${chain.source} \u2192 ${(chain.paths[0] || { functions: [] }).functions.join(" \u2192 ")}` +
                      ` \u2192 ${chain.destination}`, list);
    item.dataset.chain = chain.name;
    if (chain.unrouted) item.classList.add("unrouted");
    if (state.selected && state.selected.chain === chain.name) item.classList.add("selected");
    item.addEventListener("click", () => { state.selected = { chain: chain.name }; draw(); });
  }
}

function pathPoints(chain, path) {
  const pos = state.positions;
  const points = [pos.get(`h${chain.source}`)];
  for (const hop of path.hops) {
    points.push(pos.get(`s${hop.dpid}`));
    if (hop.function) points.push(pos.get(`f${hop.function}`));
  }
  points.push(pos.get(`s${path.delivery.dpid}`));
  points.push(pos.get(`h${chain.destination}`));
  return points.filter(Boolean).map((p) => `${p.x},${p.y}`).join(" ");
}

function showChain(name) {
  const chain = state.chains.find((c) => c.name === name);
  const body = document.getElementById("detail-body");
  document.getElementById("detail-title").textContent = `Chain ${chain ? chain.label : name}`;
  body.replaceChildren();
  const paths = document.getElementById("paths");
  if (paths) paths.replaceChildren();
  if (!chain) { body.textContent = "This chain is gone."; return; }
  html("p", `${chain.source} \u2192 ${chain.destination}; classifier ${JSON.stringify(chain.classifier)}`, body);
  if (chain.unrouted) html("p", `Not routed: ${chain.unrouted}`, body).className = "unrouted";
  chain.paths.forEach((path, index) => {
    if (paths) el("polyline", { class: "chain-path", points: pathPoints(chain, path) }, paths);
    html("h3", chain.paths.length > 1 ? `Path ${index + 1} (weight ${path.weight})` : "Functions in order", body);
    const order = html("ol", undefined, body);
    order.className = "functions";
    for (const fn of path.functions) html("li", fn, order);
    const table = html("table", undefined, body);
    const head = html("tr", undefined, table);
    for (const title of ["pathlet at", "ports", "header written"]) html("th", title, head);
    for (const pathlet of path.pathlets) {
      const row = html("tr", undefined, table);
      html("td", `${pathlet.switch} (in ${pathlet.in_port})`, row);
      html("td", pathlet.ports.join(" "), row);
      html("code", pathlet.header.join(", "), html("td", undefined, row));
    }
  });
  html("h3", "Entries it costs", body);
  const costs = html("table", undefined, body);
  for (const [sw, count] of Object.entries(chain.entries_per_switch)) {
    const row = html("tr", undefined, costs);
    html("td", sw, row);
    html("td", String(count), row);
  }
}

// A stream's path (talker, switches by name, listener) through the drawn nodes.
function streamPoints(path) {
  const pos = state.positions;
  const dpids = new Map(state.fabric.switches.map((sw) => [sw.name, sw.dpid]));
  return path.map((name) => pos.get(dpids.has(name) ? `s${dpids.get(name)}` : `h${name}`))
    .filter(Boolean).map((p) => `${p.x},${p.y}`).join(" ");
}

function showStream(stream) {
  state.selected = { stream: stream.id };
  const body = document.getElementById("detail-body");
  document.getElementById("detail-title").textContent = `Stream ${stream.id.slice(0, 8)}`;
  body.replaceChildren();
  const paths = document.getElementById("paths");
  paths.replaceChildren();
  el("polyline", { class: "stream-path", points: streamPoints(stream.path) }, paths);
  if (stream.second_path) {  // a redundant stream (802.1CB): every frame along both trees
    el("polyline", { class: "stream-path second-tree", points: streamPoints(stream.second_path) }, paths);
    html("p", `second tree: ${stream.second_path.join(" \u2192 ")}`, body);
  }
  html("p", `${stream.path.join(" \u2192 ")}; slot ${stream.slot}, offset ${(stream.offset_ns / 1000).toFixed(1)} ` +
       `\u00b5s, every ${(stream.period_ns / 1000).toFixed(0)} \u00b5s; latency bound ` +
       `${(stream.latency_bound_ns / 1000).toFixed(1)} \u00b5s`, body);
}

async function selectSwitch(dpid) {
  state.selected = { switch: dpid };
  document.querySelectorAll(".switch").forEach((g) => g.classList.toggle("selected", Number(g.dataset.dpid) === dpid));
  document.getElementById("paths").replaceChildren();
  await showSwitch(dpid);
}

async function showSwitch(dpid) {
  let sw;
  try {
    ({ switch: sw } = await getJson(`/v2.0/srfabric/switches/${dpid}`));
  } catch (error) {  // gone meanwhile: nothing is selected any more
    if (state.selected && state.selected.switch === dpid) state.selected = null;
    throw error;
  }
  if (!state.selected || state.selected.switch !== dpid) return;  // another choice was made meanwhile
  const body = document.getElementById("detail-body");
  document.getElementById("detail-title").textContent = `Switch ${sw.name}`;
  body.replaceChildren();
  html("p", `role ${sw.role}, ${sw.connected ? "connected" : "not connected"}, ` +
       `forged headers dropped: ${sw.forged_dropped}`, body);
  for (const [table, entries] of Object.entries(sw.tables)) {
    html("h3", `${table} (${entries.length} entries)`, body);
    const grid = html("table", undefined, body);
    const head = html("tr", undefined, grid);
    for (const title of ["priority", "kind", "packets"]) html("th", title, head);
    for (const entry of entries) {
      const row = html("tr", undefined, grid);
      for (const value of [entry.priority, entry.kind, entry.packets]) html("td", String(value), row);
    }
  }
}

async function reload() {
  const [{ fabric }, { chains }, { schedule }] = await Promise.all([
    getJson("/v2.0/srfabric/fabric"), getJson("/v2.0/srfabric/chains"), getJson("/v2.0/srfabric/schedule")]);
  state.fabric = fabric;
  state.chains = chains;
  state.schedule = schedule;
  draw();
  drawSchedule();
}

// Each stream's path, slot and offset, and each gated port's gate control list over one cycle: the
// time-triggered class's windows, best effort's, and the guard bands (closed).
function drawSchedule() {
  const schedule = state.schedule;
  drawClasses((schedule && schedule.classes) || { streams: [], ports: [] });
  const list = document.getElementById("streams");
  const svg = document.getElementById("gates");
  svg.replaceChildren();
  if (!schedule || !schedule.streams || !schedule.streams.length) {
    list.textContent = schedule && schedule.error ? schedule.error : "No streams.";
    svg.setAttribute("viewBox", "0 0 600 20");
    return;
  }
  list.replaceChildren();
  const table = html("table", undefined, list);
  const head = html("tr", undefined, table);
  for (const title of ["stream", "path", "slot", "offset (\u00b5s)", "period (\u00b5s)"]) html("th", title, head);
  for (const stream of schedule.streams) {
    const row = html("tr", undefined, table);
    row.dataset.stream = stream.id;
    row.addEventListener("click", () => showStream(stream));
    const trees = [stream.path, stream.second_path].filter(Boolean).map((p) => p.join(" \u2192 "));
    for (const value of [stream.id.slice(0, 8), trees.join(" + "), stream.slot,
                         (stream.offset_ns / 1000).toFixed(1), (stream.period_ns / 1000).toFixed(0)]) {
      html("td", String(value), row);
    }
  }
  const rowHeight = 18, left = 110, width = 480;
  svg.setAttribute("viewBox", `0 0 600 ${rowHeight * schedule.gates.length + 16}`);
  schedule.gates.forEach((gate, index) => {
    const y = index * rowHeight;
    const label = el("text", { x: 0, y: y + 12 }, svg);
    label.textContent = gate.port;
    const total = gate.entries.reduce((sum, [, duration]) => sum + duration, 0) || 1;
    let at = 0;
    for (const [mask, duration] of gate.entries) {
      const kind = mask & gate.tt_mask ? "tt" : mask === 0 ? "closed" : "be";
      const bar = el("rect", { x: left + (width * at) / total, y: y + 2, width: Math.max(0.5, (width * duration) / total),
                               height: rowHeight - 5, class: kind, "data-port": gate.port }, svg);
      el("title", {}, bar).textContent = `${kind}: ${duration} ns (gate mask 0x${mask.toString(16)})`;
      at += duration;
    }
  });
  const axis = el("text", { x: left, y: rowHeight * schedule.gates.length + 12 }, svg);
  axis.textContent = `one cycle of ${(schedule.cycle_ns / 1000).toFixed(0)} \u00b5s: time-triggered (amber), ` +
                     "best effort (blue), guard (grey)";
}

// Streams of SR classes A and B (credit-based shaper): each one's path and latency bound, and what each port
// reserves for the classes (idle slopes, as the analysis computes them).
function drawClasses(classes) {
  const box = document.getElementById("classes");
  box.replaceChildren();
  if (!classes.streams.length) return;
  const streams = html("table", undefined, box);
  const head = html("tr", undefined, streams);
  for (const title of ["class stream", "class", "path", "bound (\u00b5s)", "asked (\u00b5s)"]) html("th", title, head);
  for (const stream of classes.streams) {
    const row = html("tr", undefined, streams);
    const asked = stream.max_latency_ns === null ? "-" : (stream.max_latency_ns / 1000).toFixed(0);
    for (const value of [stream.id.slice(0, 8), stream.class, stream.path.join(" \u2192 "),
                         (stream.latency_bound_ns / 1000).toFixed(1), asked]) {
      html("td", String(value), row);
    }
  }
  const ports = html("table", undefined, box);
  const top = html("tr", undefined, ports);
  for (const title of ["port", "class A idle slope (Mbit/s)", "class B idle slope (Mbit/s)"]) html("th", title, top);
  for (const port of classes.ports) {
    const row = html("tr", undefined, ports);
    row.dataset.port = port.port;
    const slope = (share) => (share ? (share.idle_slope_bps / 1e6).toFixed(3) : "-");
    for (const value of [port.port, slope(port.class_a), slope(port.class_b)]) html("td", value, row);
  }
}

function listen() {
  const status = document.getElementById("status");
  const events = new EventSource("/v2.0/srfabric/events");
  events.addEventListener("open", () => { status.textContent = "live"; status.className = "live"; });
  events.addEventListener("error", () => { status.textContent = "reconnecting"; status.className = ""; });
  events.addEventListener("change", () => reload().catch(report));
  let reading = false;  // one counter read at a time
  events.addEventListener("tick", () => {
    if (reading || !state.selected || state.selected.switch === undefined) return;
    reading = true;
    showSwitch(state.selected.switch).catch(report).finally(() => { reading = false; });
  });
}

function report(error) {
  document.getElementById("status").textContent = String(error);
}

reload().catch(report).finally(listen);  // a first load that fails is retried on the next change
