// mcp ui: the host side of MCP Apps (io.modelcontextprotocol/ui). A tool that links a `ui://`
// view has it rendered above its result, in an iframe sandboxed with `allow-scripts` only (an
// opaque origin: it cannot reach this page or its cookie), served by the `mcp` process at
// /view/N with the Content-Security-Policy its resource declared. The page and the view speak
// JSON-RPC over postMessage; the view's `tools/call` goes through the `mcp` process to the
// server like any call from the page. Uses app.js's helpers (el, fill, api, pre, tracked).
"use strict";

/** The Apps protocol version this host speaks. */
const APPS_PROTOCOL_VERSION = "2026-01-26";
/** The tallest a view may make itself, in pixels, so that it cannot push the page away. */
const MAX_VIEW_HEIGHT = 2000;

/** The view on the page now: `{ tool, frame, log, initializing, ready, waiting, loads, gone }`,
 * or null. */
let currentApp = null;

/** The `ui://` view the tool links (`_meta.ui.resourceUri`, or the older flat key), if any. */
function viewUri(tool) {
  const meta = (tool && tool._meta) || {};
  return (meta.ui && meta.ui.resourceUri) || meta["ui/resourceUri"] || null;
}

/** Whether a view may call `tool`: its `_meta.ui.visibility` is absent or names "app". */
function callableByView(tool) {
  const ui = tool && tool._meta && tool._meta.ui;
  return !!tool && !(ui && Array.isArray(ui.visibility) && !ui.visibility.includes("app"));
}

/** Whether the model may see `tool` (hosts keep app-only tools from the model). */
function modelSees(tool) {
  const ui = tool && tool._meta && tool._meta.ui;
  return !(ui && Array.isArray(ui.visibility) && !ui.visibility.includes("model"));
}

/** Shows `tool`'s view in `box` (reusing the one already there for the same tool), then
 * hands it the call's arguments and result. A failure to fetch the view is shown in `box`. */
async function showToolRun(tool, box, args, result) {
  try {
    const app = currentApp && currentApp.tool.name === tool.name && box.contains(currentApp.frame)
      ? currentApp : await openApp(tool, box);
    if (!app) return;
    notifyView(app, "ui/notifications/tool-input", { arguments: args });
    notifyView(app, "ui/notifications/tool-result", result);
  } catch (error) {
    fill(box, el("p", { class: "error-text" }, `The view could not be shown: ${error.message}`));
  }
}

/** Fetches the tool's view and frames it in `box`; null for a tool without one. */
async function openApp(tool, box) {
  const answer = await api("app", { tool: tool.name });
  if (!answer.view) return null;
  const frame = el("iframe", {
    id: "app-frame", sandbox: "allow-scripts", src: answer.view.url,
    title: `the view of ${tool.name}`, class: answer.view.prefersBorder ? "app-frame bordered" : "app-frame",
  });
  const log = el("ol", { id: "app-log", class: "log-list" });
  fill(box, el("h3", {}, "View ", el("code", {}, answer.view.uri)), frame,
    el("details", { class: "app-policy" }, el("summary", {}, "its Content-Security-Policy"), pre(answer.view.policy)),
    el("h4", {}, "Messages with the view"), log);
  const app = { tool, frame, log, initializing: false, ready: false, waiting: [], loads: 0 };
  frame.addEventListener("load", () => viewLoaded(app));
  currentApp = app;
  return app;
}

/** A view that never sends `ui/initialize` (it only listens) is ready once it has loaded;
 * one that does is ready at its `ui/notifications/initialized`. A second load means the frame
 * now holds another document (the view navigated it): from then on nothing is sent to it or
 * taken from it, since the view's data would reach whatever page that is. */
function viewLoaded(app) {
  app.loads += 1;
  if (app.loads > 1) {
    app.gone = true;
    app.log.append(el("li", { class: "error-text" }, "The view navigated away: no more messages to or from this frame."));
  } else if (!app.initializing) {
    viewReady(app);
  }
}

function viewReady(app) {
  app.ready = true;
  for (const message of app.waiting.splice(0)) postToView(app, message);
}

/** A notification for the view: sent now, or once it is ready. */
function notifyView(app, method, params) {
  const message = { jsonrpc: "2.0", method, params };
  if (app.ready) postToView(app, message); else app.waiting.push(message);
}

function postToView(app, message) {
  if (app.gone) return;
  logView(app, "→", message);
  // "*": the sandboxed view's origin is opaque, so no origin string can name it; the window
  // itself is the address.
  app.frame.contentWindow.postMessage(message, "*");
}

function logView(app, arrow, message) {
  const summary = message.method || (message.error ? `error #${message.id}: ${message.error.message}` : `result #${message.id}`);
  const row = el("li", { class: "view-message", onclick: (e) => { if (e.target.tagName !== "PRE") e.currentTarget.classList.toggle("open"); } },
    el("span", { class: arrow === "→" ? "sent" : "received" }, `${arrow} ${summary}`),
    message.result && message.result.content ? el("span", { class: "hint" }, " ", contentText(message.result.content)) : null,
    pre(message));
  app.log.append(row);
}

/** The text blocks of a result, joined: what the log line shows of a result. */
function contentText(blocks) {
  return (blocks || []).filter((b) => b && b.type === "text").map((b) => b.text).join(" ");
}

/** Messages from the view. Only the view's own window is listened to: any other frame or
 * window posting here is ignored. */
window.addEventListener("message", (event) => {
  const app = currentApp;
  if (!app || app.gone || event.source !== app.frame.contentWindow || event.origin !== "null") return;
  const message = event.data;
  if (!message || typeof message !== "object" || message.jsonrpc !== "2.0") return;
  logView(app, "←", message);
  if (typeof message.method !== "string") return;
  if (message.id !== undefined && message.id !== null) answerView(app, message);
  else onViewNotification(app, message);
});

/** What the view may ask of the host; anything else is "method not found". */
const VIEW_REQUESTS = {
  "ui/initialize": (app) => {
    app.initializing = true;
    return {
      protocolVersion: APPS_PROTOCOL_VERSION,
      hostInfo: state.info.host || { name: "mcp", version: "" },
      hostCapabilities: { serverTools: {}, logging: {} },
      hostContext: {
        toolInfo: { tool: app.tool }, theme: "light", displayMode: "inline",
        availableDisplayModes: ["inline"], platform: "web",
      },
    };
  },
  "tools/call": (app, params) => callFromView(params),
  ping: () => ({}),
};

async function answerView(app, request) {
  const handler = VIEW_REQUESTS[request.method];
  let reply;
  if (!handler) {
    reply = { error: { code: -32601, message: `mcp ui does not handle ${request.method}` } };
  } else {
    try {
      reply = { result: await handler(app, request.params || {}) };
    } catch (error) {
      reply = { error: { code: error.code || -32603, message: error.message, data: error.details && error.details.data } };
    }
  }
  postToView(app, { jsonrpc: "2.0", id: request.id, ...reply });
}

/** The view's `tools/call`, made on the server; only tools the view may call. */
async function callFromView(params) {
  const tool = state.tools.find((t) => t.name === params.name);
  if (!callableByView(tool)) {
    throw Object.assign(new Error(`the view may not call ${JSON.stringify(params.name)}`), { code: -32602 });
  }
  const request = newRequestName("view-call");
  const send = () => api("call", { request, tool: tool.name, arguments: params.arguments || {} });
  const answer = await tracked(request, `view calls ${tool.name}`, send);
  if (answer.cancelled) throw new Error("cancelled from the page");
  return answer.result;
}

function onViewNotification(app, message) {
  const params = message.params || {};
  if (message.method === "ui/notifications/initialized") viewReady(app);
  if (message.method === "ui/notifications/size-changed") resizeView(app, params);
}

function resizeView(app, { width, height }) {
  if (Number.isFinite(height) && height > 0) app.frame.style.height = `${Math.min(Math.ceil(height), MAX_VIEW_HEIGHT)}px`;
  if (Number.isFinite(width) && width > 0) app.frame.style.width = `${Math.ceil(width)}px`;
}
