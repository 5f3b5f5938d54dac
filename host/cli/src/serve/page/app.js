// The page of `serve`: draws the frames the server sends (one palette level per cell, the
// palette applied here), sends the controls' changes, shows the server's state and refusals.
// The models, their controls and presets come from the server (`hello`), which has them from
// its registry. No build step and nothing fetched from elsewhere: this file is embedded in
// the binary.
"use strict";

const $ = (id) => document.getElementById(id);
const field = $("field");
const context = field.getContext("2d");
const state = {
  connected: false, hello: null, settings: null, version: 0, paused: false, command: "", toml: "",
  frames: 0, frameVersion: -1, frameSteps: 0, lastError: "", luts: {}, image: null, map: null,
};
window.simState = state; // for the browser test and the curious

const token = new URLSearchParams(location.search).get("token");
const socketUrl = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws"
  + (token ? "?token=" + encodeURIComponent(token) : "");
const socket = new WebSocket(socketUrl);
socket.binaryType = "arraybuffer";

function send(request) {
  if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(request));
}

function showError(message) {
  state.lastError = message;
  $("error").textContent = message;
}

// Frames delivered per second, counted where they arrive.
let delivered = [];
let serverStats = null;

socket.onopen = () => { state.connected = true; };
socket.onclose = () => {
  state.connected = false;
  $("stats").textContent = "disconnected: reload the page to start a new session";
};
socket.onmessage = (event) => {
  if (typeof event.data === "string") return onText(JSON.parse(event.data));
  const bytes = new Uint8Array(event.data);
  const tag = String.fromCharCode(...bytes.subarray(0, 4));
  const view = new DataView(event.data);
  if (tag === "FRM1") onFrame(view, bytes);
  else if (tag === "PNG1") download(bytes.subarray(4), "image/png", snapshotName());
  else if (tag === "MAP1") onMap(view, bytes);
};

function onText(message) {
  switch (message.type) {
    case "hello": return onHello(message);
    case "state": return onState(message);
    case "stats": serverStats = message; return;
    case "error": return showError(message.message);
    case "map": state.map = message; return;
  }
}

function onHello(hello) {
  state.hello = hello;
  for (const palette of hello.palettes) {
    const lut = new Uint8Array(256 * 4);
    palette.colors.forEach((hex, i) => {
      lut[4 * i] = parseInt(hex.slice(1, 3), 16);
      lut[4 * i + 1] = parseInt(hex.slice(3, 5), 16);
      lut[4 * i + 2] = parseInt(hex.slice(5, 7), 16);
      lut[4 * i + 3] = 255;
    });
    state.luts[palette.name] = lut;
    $("palette").add(new Option(palette.name, palette.name));
  }
  $("steps_per_frame").max = Math.min(hello.max_steps_per_frame, 1000);
  for (const model of hello.models) $("simulation").add(new Option(model.label, model.name));
}

// The model of the settings `s`, as `hello` describes it.
function modelOf(s) {
  return state.hello.models.find((m) => m.name === s.simulation);
}

// The controls of `model`, built when the session's model changes.
function buildControls(model) {
  const box = $("controls");
  box.innerHTML = "";
  for (const control of model.controls) {
    const label = document.createElement("label");
    label.append(control.label + " ");
    const input = document.createElement("input");
    input.id = control.name;
    input.type = control.kind === "slider" ? "range" : "number";
    input.min = control.min;
    input.max = control.max;
    input.step = control.step;
    label.append(input);
    box.append(label);
    if (control.kind === "slider") {
      const output = document.createElement("output");
      output.id = control.name + "-out";
      label.append(output);
      watchSlider(input, output);
    } else {
      input.addEventListener("change", () => send({ type: "set", settings: { [control.name]: Number(input.value) } }));
    }
  }
  box.dataset.simulation = model.name;
}

function onState(message) {
  state.settings = message.settings;
  state.version = message.version;
  state.paused = message.paused;
  state.command = message.command;
  state.toml = message.toml;
  $("backend").textContent = message.backend + ", step " + message.steps;
  $("pause").textContent = message.paused ? "run" : "pause";
  $("command").value = message.command;
  const s = message.settings;
  const model = modelOf(s);
  $("simulation").value = s.simulation;
  if ($("controls").dataset.simulation !== s.simulation) buildControls(model);
  $("preset-row").classList.toggle("hidden", model.presets.length === 0);
  $("brush-row").classList.toggle("hidden", !model.brush);
  $("map-box").classList.toggle("hidden", !model.map);
  $("size-row").classList.toggle("hidden", model.grid.length === 0);
  $("seed").classList.toggle("hidden", s.seed === undefined);
  $("copy-command").classList.toggle("hidden", message.command === "");
  fillPresets(s, model);
  $("palette").value = s.palette;
  if (model.grid.length > 0) $("size").value = s[model.grid[0]];
  for (const control of model.controls) {
    const input = $(control.name);
    if (s[control.name] === undefined || document.activeElement === input && (dragging || control.kind !== "slider")) continue;
    input.value = s[control.name];
    if (control.kind === "slider") $(control.name + "-out").textContent = format(s[control.name]);
  }
  if (!(document.activeElement === $("steps_per_frame") && dragging)) {
    $("steps_per_frame").value = s.steps_per_frame;
    $("steps_per_frame-out").textContent = format(s.steps_per_frame);
  }
}

function fillPresets(s, model) {
  const select = $("preset");
  const presets = model.presets;
  if (select.dataset.simulation !== s.simulation) {
    select.innerHTML = "";
    for (const p of presets) select.add(new Option(p.name, p.name));
    select.dataset.simulation = s.simulation;
  }
  if (s.preset !== undefined) select.value = s.preset;
}

function format(value) {
  return Math.abs(value) >= 100 || Number.isInteger(value) ? String(value) : Number(value).toPrecision(4);
}

function onFrame(view, bytes) {
  const width = view.getUint32(4, true), height = view.getUint32(8, true);
  state.frameSteps = Number(view.getBigUint64(12, true));
  state.frameVersion = view.getUint32(20, true);
  const levels = bytes.subarray(24);
  if (field.width !== width || field.height !== height || !state.image) {
    field.width = width;
    field.height = height;
    field.style.aspectRatio = width + " / " + height;
    state.image = context.createImageData(width, height);
  }
  const lut = state.luts[state.settings ? state.settings.palette : ""] || state.luts[Object.keys(state.luts)[0]];
  const rgba = new Uint32Array(state.image.data.buffer);
  const lut32 = new Uint32Array(lut.buffer);
  for (let i = 0; i < levels.length; i++) rgba[i] = lut32[levels[i]];
  state.levels = levels;
  state.frames++;
  delivered.push(performance.now());
  requestAnimationFrame(draw);
}

let drawn = 0;
function draw() {
  if (drawn === state.frames || !state.image) return;
  drawn = state.frames;
  context.putImageData(state.image, 0, 0);
}

setInterval(() => {
  const now = performance.now();
  delivered = delivered.filter((t) => now - t < 1000);
  const sps = serverStats ? Math.round(serverStats.steps_per_second) : 0;
  $("stats").textContent = state.connected
    ? `${delivered.length} frames/s delivered · ${sps} steps/s · step ${state.frameSteps}`
    : $("stats").textContent;
}, 500);

// Controls.
let dragging = false;
let pending = null;
function set(settings) {
  // At most one change every 30 ms while a slider moves; the last one always goes.
  if (pending) { Object.assign(pending, settings); return; }
  pending = settings;
  setTimeout(() => { send({ type: "set", settings: pending }); pending = null; }, 30);
}
// Each move of a slider is sent (at most one change every 30 ms, the last one always).
function watchSlider(input, output) {
  input.addEventListener("input", () => {
    dragging = true;
    output.textContent = format(Number(input.value));
    set({ [input.id]: Number(input.value) });
  });
  input.addEventListener("change", () => { dragging = false; });
}
watchSlider($("steps_per_frame"), $("steps_per_frame-out"));
$("simulation").addEventListener("change", () => {
  $("map").classList.add("hidden");
  $("map-axes").classList.add("hidden");
  send({ type: "start", simulation: $("simulation").value });
});
$("preset").addEventListener("change", () => send({ type: "set", settings: { preset: $("preset").value } }));
$("palette").addEventListener("change", () => send({ type: "set", settings: { palette: $("palette").value } }));
$("size").addEventListener("change", () => {
  const side = Number($("size").value);
  const settings = {};
  for (const name of modelOf(state.settings).grid) settings[name] = side;
  send({ type: "set", settings });
});
$("pause").addEventListener("click", () => send({ type: state.paused ? "run" : "pause" }));
$("step").addEventListener("click", () => send({ type: "step" }));
$("reset").addEventListener("click", () => send({ type: "reset" }));
$("seed").addEventListener("click", () => send({ type: "seed" }));
$("brush").addEventListener("input", () => { $("brush-out").textContent = $("brush").value; });
$("snapshot").addEventListener("click", () => send({ type: "snapshot" }));
$("copy-command").addEventListener("click", () => copy(state.command));
$("copy-toml").addEventListener("click", () => copy(state.toml));
$("map-button").addEventListener("click", () => {
  $("map-button").textContent = "computing…";
  send({ type: "map" });
});

// The brush: paint while the mouse is down, in cells.
let painting = false;
function paint(event) {
  const box = field.getBoundingClientRect();
  // The canvas keeps its aspect ratio inside its box (object-fit: contain).
  const scale = Math.min(box.width / field.width, box.height / field.height);
  const x = (event.clientX - box.left - (box.width - field.width * scale) / 2) / scale;
  const y = (event.clientY - box.top - (box.height - field.height * scale) / 2) / scale;
  if (x < 0 || y < 0 || x > field.width || y > field.height) return;
  send({ type: "brush", x, y, radius: Number($("brush").value) });
}
field.addEventListener("pointerdown", (e) => { painting = true; field.setPointerCapture(e.pointerId); paint(e); });
field.addEventListener("pointermove", (e) => { if (painting) paint(e); });
field.addEventListener("pointerup", () => { painting = false; });

// The parameter map: F up, k across; a click sets both.
function onMap(view, bytes) {
  const width = view.getUint32(4, true), height = view.getUint32(8, true);
  const levels = bytes.subarray(12);
  const canvas = $("map");
  canvas.width = width;
  canvas.height = height;
  const image = canvas.getContext("2d").createImageData(width, height);
  const lut32 = new Uint32Array(state.luts[state.settings.palette].buffer);
  const rgba = new Uint32Array(image.data.buffer);
  for (let i = 0; i < levels.length; i++) rgba[i] = lut32[levels[i]];
  canvas.getContext("2d").putImageData(image, 0, 0);
  canvas.classList.remove("hidden");
  $("map-axes").classList.remove("hidden");
  $("map-button").classList.add("hidden");
  $("map-k").textContent = state.map.kill.join("–");
  $("map-f").textContent = state.map.feed.join("–");
}
$("map").addEventListener("click", (event) => {
  const box = $("map").getBoundingClientRect();
  const m = state.map;
  const u = (event.clientX - box.left) / box.width, v = 1 - (event.clientY - box.top) / box.height;
  const kill = m.kill[0] + u * (m.kill[1] - m.kill[0]);
  const feed = m.feed[0] + v * (m.feed[1] - m.feed[0]);
  send({ type: "set", settings: { feed: Number(feed.toPrecision(4)), kill: Number(kill.toPrecision(4)) } });
});

function copy(text) {
  $("command").value = text;
  $("command").select();
  if (navigator.clipboard) navigator.clipboard.writeText(text).catch(() => document.execCommand("copy"));
  else document.execCommand("copy");
}

function snapshotName() {
  const s = state.settings;
  return `${s.simulation}-step${state.frameSteps}.png`;
}

function download(bytes, type, name) {
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
