// mcp ui: the host side of MCP Apps (io.modelcontextprotocol/ui). A tool that links a `ui://`
// view has it rendered above its result, in an iframe sandboxed with `allow-scripts` only (an
// opaque origin: it cannot reach this page or its cookie), served by the `mcp` process at
// /view/N with the Content-Security-Policy its resource declared. The page and the view speak
// JSON-RPC over postMessage; the view's `tools/call` goes through the `mcp` process to the
// server like any call from the page. What the view asks of the host (a link opened, a message
// for the conversation, the model's context) is shown in its message log; the page is never
// navigated for it. Uses app.js's helpers (el, fill, api, pre, tracked).
"use strict";

/** The Apps protocol version this host speaks. */
const APPS_PROTOCOL_VERSION = "2026-01-26";
/** The tallest a view may make itself, in pixels, so that it cannot push the page away. */
const MAX_VIEW_HEIGHT = 2000;
/** How long a view being removed has to answer `ui/resource-teardown`, in milliseconds. */
const TEARDOWN_WAIT = 1000;
/** The only display mode mcp ui offers: views are always inline, above the call's result. */
const DISPLAY_MODE = "inline";

/** The view on the page now: `{ tool, uri, frame, log, context, grant, initializing, ready, waiting,
 * loads, gone, pending }`, or null. */
let currentApp = null;
/** Every view whose frame is still in the page: the current one and those being torn down. */
const liveApps = new Set();
/** The number of the host's last request to a view. */
let hostRequests = 0;

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
 * hands it the call's arguments and its outcome: the result, or, for a call that was
 * cancelled (`result` null), `ui/notifications/tool-cancelled` with `reason`. A failure to
 * fetch the view is shown in `box`. */
async function showToolRun(tool, box, args, result, reason) {
  // A call that ends after its pane was replaced has no view to tell.
  if (!box.isConnected) return;
  try {
    const app = currentApp && currentApp.tool.name === tool.name && box.contains(currentApp.frame)
      ? currentApp : await openApp(tool, box);
    if (!app) return;
    notifyView(app, "ui/notifications/tool-input", { arguments: args });
    if (result) notifyView(app, "ui/notifications/tool-result", result);
    else notifyView(app, "ui/notifications/tool-cancelled", { reason });
  } catch (error) {
    fill(box, el("p", { class: "error-text" }, `The view could not be shown: ${error.message}`));
  }
}

/** Fetches the tool's view and frames it in `box`; null for a tool without one. */
async function openApp(tool, box) {
  const answer = await api("app", { tool: tool.name });
  if (!answer.view) return null;
  const view = answer.view;
  // `allow` only when something is granted: the attribute, even empty, is a policy of its own.
  const frame = el("iframe", {
    id: "app-frame", sandbox: "allow-scripts", allow: view.allow || null, src: view.url,
    title: `the view of ${tool.name}`, class: view.prefersBorder ? "app-frame bordered" : "app-frame",
  });
  const log = el("ol", { id: "app-log", class: "log-list" });
  const context = el("div", { id: "app-context" }, el("p", { class: "hint" }, "None yet."));
  fill(box, el("h3", {}, "View ", el("code", {}, view.uri)), frame,
    el("details", { class: "app-policy" }, el("summary", {}, "its Content-Security-Policy"), pre(view.policy)),
    view.allow ? el("p", { class: "hint" }, "Permissions granted: ", el("code", {}, view.allow)) : null,
    el("h4", {}, "Model context from the view"), context,
    el("h4", {}, "Messages with the view"), log);
  if (currentApp) liveApps.delete(currentApp);
  const app = {
    tool, uri: view.uri, frame, log, context, grant: view.permissions || {},
    initializing: false, ready: false, waiting: [], loads: 0, pending: new Map(),
  };
  frame.addEventListener("load", () => viewLoaded(app));
  currentApp = app;
  liveApps.add(app);
  return app;
}

/** The `#tool-detail` to render a tool into. When the one on the page holds the current
 * view, that view is torn down first (`ui/resource-teardown`): its pane stays, hidden and
 * stripped of its ids, until the view answers or `TEARDOWN_WAIT` has passed, and a fresh pane
 * takes its place. (A frame taken out of the page is gone at once, with no chance to answer.) */
function freshToolDetail(reason) {
  const old = $("#tool-detail");
  const app = currentApp;
  if (!app || !old.contains(app.frame)) return old;
  currentApp = null;
  const fresh = el("div", { id: "tool-detail", class: old.className });
  old.before(fresh);
  old.hidden = true;
  for (const node of [old, ...old.querySelectorAll("[id]")]) node.removeAttribute("id");
  tearDown(app, reason).then((outcome) => {
    liveApps.delete(app);
    old.remove();
    if (outcome && fresh.isConnected) fresh.prepend(el("p", { id: "teardown-note", class: "hint" }, `The view ${app.uri} ${outcome} ui/resource-teardown.`));
  });
  return fresh;
}

/** Sends `ui/resource-teardown` to a view that is talking to the host and waits for its
 * answer, at most `TEARDOWN_WAIT`: what became of it ("answered", "did not answer"), or null
 * for a view that was never talked to. From then on nothing else is taken from the view. */
async function tearDown(app, reason) {
  if (!app.ready || app.gone) return null;
  const answered = requestView(app, "ui/resource-teardown", { reason });
  app.closing = true;
  const late = new Promise((done) => setTimeout(() => done(null), TEARDOWN_WAIT));
  const answer = await Promise.race([answered, late]);
  if (!answer) return "did not answer";
  return answer.error ? "answered with an error to" : "answered";
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

/** A request to the view; resolves with its answer (result or error). */
function requestView(app, method, params) {
  const id = `host-${++hostRequests}`;
  const answered = new Promise((resolve) => app.pending.set(id, resolve));
  postToView(app, { jsonrpc: "2.0", id, method, params });
  return answered;
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

/** Messages from the views. Only the views' own windows are listened to: any other frame or
 * window posting here is ignored. A view being torn down is only heard answering. */
window.addEventListener("message", (event) => {
  const app = [...liveApps].find((a) => event.source === a.frame.contentWindow);
  if (!app || app.gone || event.origin !== "null") return;
  const message = event.data;
  if (!message || typeof message !== "object" || message.jsonrpc !== "2.0") return;
  logView(app, "←", message);
  if (typeof message.method !== "string") return onViewAnswer(app, message);
  if (app.closing) return;
  if (message.id !== undefined && message.id !== null) answerView(app, message);
  else onViewNotification(app, message);
});

/** The view's answer to one of the host's requests. */
function onViewAnswer(app, message) {
  const resolve = app.pending.get(message.id);
  if (!resolve) return;
  app.pending.delete(message.id);
  resolve(message);
}

/** What the view may ask of the host; anything else is "method not found". */
const VIEW_REQUESTS = {
  "ui/initialize": (app) => {
    app.initializing = true;
    return {
      protocolVersion: APPS_PROTOCOL_VERSION,
      hostInfo: state.info.host || { name: "mcp", version: "" },
      hostCapabilities: { openLinks: {}, serverTools: {}, logging: {}, sandbox: { permissions: app.grant } },
      hostContext: {
        toolInfo: { tool: app.tool }, theme: "light", displayMode: DISPLAY_MODE,
        availableDisplayModes: [DISPLAY_MODE], platform: "web",
      },
    };
  },
  "tools/call": (app, params) => callFromView(app, params),
  "ui/open-link": (app, params) => offerLink(app, params),
  "ui/message": (app, params) => showViewMessage(app, params),
  "ui/update-model-context": (app, params) => keepModelContext(app, params),
  // Only inline is offered: whatever the view asks for, the answer is the mode it has.
  "ui/request-display-mode": () => ({ mode: DISPLAY_MODE }),
  ping: () => ({}),
};

/** A refusal the extension describes as implementation-defined (-32000). */
function refusal(message) {
  return Object.assign(new Error(message), { code: -32000 });
}

/** `ui/open-link`: the link is put in the message log for the user to follow (in a new tab,
 * without a handle on this page); the page itself is never navigated. Only http(s) links. */
function offerLink(app, { url }) {
  let parsed;
  try { parsed = new URL(url); } catch { throw refusal("Invalid URL"); }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw refusal("Policy violation: only http and https links are offered");
  app.log.append(el("li", { class: "view-link" }, "The view offers a link: ",
    el("a", { href: parsed.href, target: "_blank", rel: "noopener noreferrer" }, parsed.href)));
  return {};
}

/** `ui/message`: what the view would add to the conversation. mcp ui has no conversation, so
 * it is shown in the message log, with its role. */
function showViewMessage(app, { role, content }) {
  const blocks = Array.isArray(content) ? content : [content];
  if (role !== "user" || !blocks.every((b) => b && typeof b === "object" && typeof b.type === "string")) {
    throw refusal("Invalid message format");
  }
  const text = blocks.map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join(" ");
  app.log.append(el("li", { class: "view-said" }, el("span", { class: "badge" }, role), " ", text));
  return {};
}

/** `ui/update-model-context`: each update replaces the one before; the latest is shown. */
function keepModelContext(app, params) {
  const { content, structuredContent } = params;
  if ((content !== undefined && !Array.isArray(content)) || (structuredContent !== undefined && (typeof structuredContent !== "object" || structuredContent === null))) {
    throw refusal("Invalid content format");
  }
  app.modelContext = params;
  fill(app.context, content ? el("p", {}, contentText(content)) : null,
    structuredContent ? pre(structuredContent) : null);
  return {};
}

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

/** The view's `tools/call`, made on the server; only tools the view may call. A call cancelled
 * from the page is an error for the request and a `ui/notifications/tool-cancelled`. */
async function callFromView(app, params) {
  const tool = state.tools.find((t) => t.name === params.name);
  if (!callableByView(tool)) {
    throw Object.assign(new Error(`the view may not call ${JSON.stringify(params.name)}`), { code: -32602 });
  }
  const request = newRequestName("view-call");
  const send = () => api("call", { request, tool: tool.name, arguments: params.arguments || {} });
  const answer = await tracked(request, `view calls ${tool.name}`, send);
  if (answer.cancelled) {
    notifyView(app, "ui/notifications/tool-cancelled", { reason: "cancelled from the page" });
    throw new Error("cancelled from the page");
  }
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
