// mcp ui: the page. Plain JavaScript, no framework, no build step: it talks to the `mcp`
// process that served it (a JSON API under /api/, and a long poll of /api/events), which
// holds the MCP client. Everything a server sends is put on the page as text (textContent),
// never as HTML.
"use strict";

// ---------------------------------------------------------------------------------------------
// Small helpers

/** An element with attributes (`on*` functions become listeners) and children. */
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const $ = (selector) => document.querySelector(selector);

/** Replaces the children of `node`, skipping what `el` skips (null, false) and flattening lists. */
function fill(node, ...children) {
  node.replaceChildren(...children.flat(Infinity).filter((c) => c !== undefined && c !== null && c !== false));
}
const json = (value) => JSON.stringify(value, null, 2);
const pre = (value) => el("pre", { class: "json" }, typeof value === "string" ? value : json(value));

/** POST /api/PATH with a JSON body; the answer's JSON, or an Error with the server's message. */
async function api(path, body) {
  const response = await fetch("/api/" + path, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  let answer;
  try { answer = await response.json(); } catch { answer = {}; }
  if (!response.ok) {
    const message = (answer.error && answer.error.message) || `${response.status} ${response.statusText}`;
    const error = new Error(message);
    error.details = answer.error;
    throw error;
  }
  return answer;
}

let requestCounter = 0;
const newRequestName = (kind) => `${kind}-${++requestCounter}`;

/** Splits a command line like a shell would, without one: quotes group, backslash escapes. */
function splitCommand(line) {
  const words = [];
  let word = null, quote = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && (line[i + 1] === '"' || line[i + 1] === "\\")) word += line[++i];
      else word += c;
    } else if (/\s/.test(c)) {
      if (word !== null) { words.push(word); word = null; }
    } else if (c === "'" || c === '"') {
      quote = c; word = word || "";
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word || "") + line[++i];
    } else {
      word = (word || "") + c;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/** `KEY=value` (or `Name: value`) lines as pairs. */
function pairs(text, separator) {
  return text.split("\n").map((line) => line.trim()).filter(Boolean).map((line) => {
    const at = line.indexOf(separator);
    return at < 0 ? [line, ""] : [line.slice(0, at).trim(), line.slice(at + 1).trim()];
  });
}

// ---------------------------------------------------------------------------------------------
// State

const state = {
  info: { connected: false },
  tools: [],
  resources: [],
  templates: [],
  prompts: [],
  /** The tasks started from the page, as `/api/tasks` last told (extensions.js). */
  tasks: [],
  skills: [],
  messages: [],
  logs: [],
  questions: [],
  /** The request whose progress the tool pane shows. */
  currentCall: null,
  /** The requests running now, by name: their row in the run list (bar, text). */
  runs: new Map(),
  seq: 0,
};

// ---------------------------------------------------------------------------------------------
// JSON Schema forms

/**
 * A local `$ref` (`#/$defs/Book`) resolved against the root schema. Each reference followed
 * is added to `followed`, so that a form can stop where a schema holds itself.
 */
function resolve(schema, root, depth = 0, followed = []) {
  if (!schema || typeof schema !== "object") return {};
  if (schema.$ref && schema.$ref.startsWith("#/") && depth < 8) {
    followed.push(schema.$ref);
    let node = root;
    for (const part of schema.$ref.slice(2).split("/")) node = node && node[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    const { $ref, ...rest } = schema;
    return resolve({ ...(node || {}), ...rest }, root, depth + 1, followed);
  }
  // Optional values from most generators: anyOf/oneOf [T, null].
  for (const keyword of ["anyOf", "oneOf"]) {
    const branches = schema[keyword];
    if (Array.isArray(branches) && !branches.every((b) => b && "const" in b)) {
      const real = branches.filter((b) => !(b && b.type === "null"));
      if (real.length === 1) {
        const { [keyword]: _, ...rest } = schema;
        return { ...resolve(real[0], root, depth + 1, followed), ...rest, nullable: real.length < branches.length };
      }
    }
  }
  if (Array.isArray(schema.type)) {
    const real = schema.type.filter((t) => t !== "null");
    if (real.length === 1) return { ...schema, type: real[0], nullable: true };
  }
  return schema;
}

/** The allowed values of an enum field: `enum`, or `oneOf`/`anyOf` of `const`s (with titles). */
function choicesOf(schema) {
  if (Array.isArray(schema.enum)) {
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
    return schema.enum.map((value, i) => ({ value, title: names[i] || String(value) }));
  }
  const branches = schema.oneOf || schema.anyOf;
  if (Array.isArray(branches) && branches.length && branches.every((b) => b && "const" in b)) {
    return branches.map((b) => ({ value: b.const, title: b.title || String(b.const) }));
  }
  return null;
}

/**
 * A form field for `schema` at `path`: `{ node, read }`, where `read(errors)` returns the
 * value typed (undefined when left empty) and pushes the problems it finds into `errors`.
 * `trail` holds the `$ref`s expanded above this field: one that comes round again (a tree of
 * categories) is typed as JSON there instead of nesting forms without end.
 */
function field(schema, root, path, required, options = {}, trail = []) {
  const followed = [];
  schema = resolve(schema, root, 0, followed);
  if (followed.some((ref) => trail.includes(ref))) schema = { description: schema.description, title: schema.title };
  trail = [...trail, ...followed];
  const name = path.length ? path[path.length - 1] : "";
  const label = el("span", { class: "field-label" }, schema.title || name, required ? el("span", { class: "required" }, " *") : "");
  const description = schema.description ? el("div", { class: "description" }, schema.description) : null;
  const errorLine = el("div", { class: "field-error" });
  const dataPath = path.join(".");
  const wrap = (control, inline) => el("div", { class: "field", dataset: { field: dataPath } },
    inline ? el("label", {}, control, " ", label) : [label, control], description, errorLine);
  const complain = (errors, message) => { errorLine.textContent = message; errors.push(`${dataPath || "value"}: ${message}`); };
  const choices = choicesOf(schema);
  const type = schema.type || (schema.properties ? "object" : choices ? "string" : undefined);

  if (choices) {
    const select = el("select", { "data-path": dataPath },
      required && schema.default === undefined ? null : el("option", { value: "" }, "(none)"),
      choices.map((c, i) => el("option", { value: String(i) }, c.title)));
    const defaultIndex = choices.findIndex((c) => JSON.stringify(c.value) === JSON.stringify(schema.default));
    if (defaultIndex >= 0) select.value = String(defaultIndex);
    return { node: wrap(select), read: (errors) => {
      errorLine.textContent = "";
      if (select.value === "") { if (required) complain(errors, "required"); return undefined; }
      return choices[Number(select.value)].value;
    } };
  }
  if (type === "boolean") {
    if (!required && schema.default === undefined) {
      const select = el("select", { "data-path": dataPath },
        el("option", { value: "" }, "(none)"), el("option", { value: "true" }, "true"), el("option", { value: "false" }, "false"));
      return { node: wrap(select), read: () => (select.value === "" ? undefined : select.value === "true") };
    }
    const box = el("input", { type: "checkbox", "data-path": dataPath });
    box.checked = schema.default === true;
    return { node: wrap(box, true), read: () => box.checked };
  }
  if (type === "integer" || type === "number") {
    const input = el("input", { type: "number", "data-path": dataPath, step: type === "integer" ? 1 : "any",
      min: schema.minimum, max: schema.maximum });
    if (schema.default !== undefined) input.value = schema.default;
    return { node: wrap(input), read: (errors) => {
      errorLine.textContent = "";
      const text = input.value.trim();
      if (text === "") { if (required) complain(errors, "required"); return undefined; }
      const number = Number(text);
      if (!Number.isFinite(number)) return complain(errors, "not a number");
      if (type === "integer" && !Number.isInteger(number)) return complain(errors, "must be a whole number");
      if (schema.minimum !== undefined && number < schema.minimum) return complain(errors, `at least ${schema.minimum}`);
      if (schema.maximum !== undefined && number > schema.maximum) return complain(errors, `at most ${schema.maximum}`);
      if (schema.exclusiveMinimum !== undefined && number <= schema.exclusiveMinimum) return complain(errors, `more than ${schema.exclusiveMinimum}`);
      if (schema.exclusiveMaximum !== undefined && number >= schema.exclusiveMaximum) return complain(errors, `less than ${schema.exclusiveMaximum}`);
      if (schema.multipleOf && Math.abs(number / schema.multipleOf - Math.round(number / schema.multipleOf)) > 1e-9) return complain(errors, `a multiple of ${schema.multipleOf}`);
      return number;
    } };
  }
  if (type === "object") {
    const properties = schema.properties || {};
    const requiredKeys = new Set(schema.required || []);
    const children = Object.entries(properties).map(([key, child]) =>
      [key, field(child, root, [...path, key], requiredKeys.has(key), options, trail)]);
    const extra = schema.properties ? null : el("textarea", { rows: 3, "data-path": dataPath, placeholder: "{ } as JSON" });
    const body = [children.map(([, f]) => f.node), extra];
    const node = path.length
      ? el("fieldset", { dataset: { field: dataPath } }, el("legend", {}, schema.title || name, required ? " *" : ""), description, body, errorLine)
      : el("div", {}, body, errorLine);
    return { node, read: (errors) => {
      errorLine.textContent = "";
      const value = {};
      if (extra && extra.value.trim()) {
        try { Object.assign(value, JSON.parse(extra.value)); } catch (e) { complain(errors, `not JSON: ${e.message}`); }
      }
      // An optional object left empty is absent: its own required fields are then no fault.
      const inner = [];
      for (const [key, f] of children) {
        const v = f.read(inner);
        if (v !== undefined) value[key] = v;
      }
      const given = !path.length || required || Object.keys(value).length;
      if (given) errors.push(...inner);
      else for (const [, f] of children) f.node.querySelectorAll(".field-error").forEach((line) => { line.textContent = ""; });
      return given ? value : undefined;
    } };
  }
  if (type === "array") {
    const items = resolve(schema.items || {}, root);
    const itemChoices = choicesOf(items);
    const countCheck = (errors, count) => {
      if (schema.minItems !== undefined && count < schema.minItems) return complain(errors, `at least ${schema.minItems} items`);
      if (schema.maxItems !== undefined && count > schema.maxItems) return complain(errors, `at most ${schema.maxItems} items`);
      if (schema.uniqueItems) return null;
      return null;
    };
    if (itemChoices) {
      const boxes = itemChoices.map((c, i) => el("input", { type: "checkbox", value: String(i), "data-path": `${dataPath}.${i}` }));
      const defaults = Array.isArray(schema.default) ? schema.default.map((d) => JSON.stringify(d)) : [];
      boxes.forEach((box, i) => { box.checked = defaults.includes(JSON.stringify(itemChoices[i].value)); });
      const node = wrap(el("div", {}, boxes.map((box, i) => el("label", {}, box, " ", itemChoices[i].title))));
      return { node, read: (errors) => {
        errorLine.textContent = "";
        const picked = boxes.filter((b) => b.checked).map((b) => itemChoices[Number(b.value)].value);
        countCheck(errors, picked.length);
        return picked.length || required ? picked : undefined;
      } };
    }
    const list = el("div", { class: "array-items" });
    const rows = [];
    const addRow = (initial) => {
      const f = field(initial === undefined ? items : { ...items, default: initial }, root, [...path, String(rows.length)], true, options, trail);
      const row = el("div", { class: "array-item" }, f.node);
      const entry = { f, row };
      row.append(el("button", { type: "button", class: "secondary", onclick: () => { rows.splice(rows.indexOf(entry), 1); row.remove(); } }, "Remove"));
      rows.push(entry);
      list.append(row);
    };
    if (Array.isArray(schema.default)) schema.default.forEach(addRow);
    const node = wrap(el("div", {}, list, el("button", { type: "button", class: "secondary", "data-add": dataPath, onclick: () => addRow() }, "Add an item")));
    return { node, read: (errors) => {
      errorLine.textContent = "";
      const values = rows.map((r) => r.f.read(errors)).filter((v) => v !== undefined);
      countCheck(errors, values.length);
      return values.length || required ? values : undefined;
    } };
  }
  if (type === "string" || (options.stringsOnly && !type)) {
    const inputType = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" }[schema.format] || "text";
    const input = el("input", { type: inputType, "data-path": dataPath, minlength: schema.minLength, maxlength: schema.maxLength, spellcheck: "false" });
    if (schema.default !== undefined) input.value = schema.default;
    if (options.complete) options.complete(name, input);
    return { node: wrap(input), read: (errors) => {
      errorLine.textContent = "";
      const text = input.value;
      if (text === "") { if (required) complain(errors, "required"); return undefined; }
      if (schema.minLength !== undefined && [...text].length < schema.minLength) return complain(errors, `at least ${schema.minLength} characters`);
      if (schema.maxLength !== undefined && [...text].length > schema.maxLength) return complain(errors, `at most ${schema.maxLength} characters`);
      if (schema.pattern) {
        try { if (!new RegExp(schema.pattern, "u").test(text)) return complain(errors, `must match ${schema.pattern}`); } catch { /* a pattern JS cannot read: the server checks it */ }
      }
      if (schema.format === "email" && !text.includes("@")) return complain(errors, "not an email address");
      return text;
    } };
  }
  // Any other schema (no type, unions): the value as JSON.
  const area = el("textarea", { rows: 2, "data-path": dataPath, placeholder: "a JSON value", spellcheck: "false" });
  if (schema.default !== undefined) area.value = JSON.stringify(schema.default);
  return { node: wrap(area), read: (errors) => {
    errorLine.textContent = "";
    if (!area.value.trim()) { if (required) complain(errors, "required"); return undefined; }
    try { return JSON.parse(area.value); } catch (e) { return complain(errors, `not JSON: ${e.message}`); }
  } };
}

/** A whole form for an object schema: `{ node, read }`, `read()` giving `{ value, errors }`. */
function schemaForm(schema, options) {
  const root = schema || { type: "object" };
  const f = field({ type: "object", ...root }, root, [], true, options);
  return { node: f.node, read: () => { const errors = []; const value = f.read(errors); return { value, errors }; } };
}

// ---------------------------------------------------------------------------------------------
// Rendering results

/** Content blocks: text (JSON pretty-printed), images, audio, resource links, embedded resources. */
function renderContent(blocks) {
  return (blocks || []).map((block) => {
    switch (block.type) {
      case "text": {
        let text = block.text;
        try { const parsed = JSON.parse(text); if (typeof parsed === "object" && parsed) text = json(parsed); } catch { /* plain text */ }
        return el("div", { class: "block text" }, el("pre", {}, text));
      }
      case "image":
        return el("div", { class: "block image" }, el("img", { src: `data:${block.mimeType};base64,${block.data}`, alt: "image from the server" }));
      case "audio":
        return el("div", { class: "block audio" }, el("audio", { controls: true, src: `data:${block.mimeType};base64,${block.data}` }));
      case "resource_link":
        return el("div", { class: "block link" }, "resource: ",
          el("a", { href: "#", onclick: (e) => { e.preventDefault(); showTab("resources"); readResource(block.uri); } }, block.uri),
          block.name ? ` (${block.title || block.name})` : "", block.description ? el("div", { class: "hint" }, block.description) : null);
      case "resource":
        return el("div", { class: "block resource" }, renderResourceContents([block.resource]));
      default:
        return el("div", { class: "block" }, pre(block));
    }
  });
}

/** What `resources/read` returns: text as text, a blob by type. */
function renderResourceContents(contents) {
  return (contents || []).map((item) => {
    const head = el("div", { class: "hint" }, item.uri, item.mimeType ? ` · ${item.mimeType}` : "");
    if (item.text !== undefined) return el("div", { class: "block" }, head, el("pre", {}, item.text));
    const mime = item.mimeType || "application/octet-stream";
    if (mime.startsWith("image/")) return el("div", { class: "block" }, head, el("img", { src: `data:${mime};base64,${item.blob}`, alt: item.uri }));
    if (mime.startsWith("audio/")) return el("div", { class: "block" }, head, el("audio", { controls: true, src: `data:${mime};base64,${item.blob}` }));
    return el("div", { class: "block" }, head, el("pre", {}, `(${Math.floor(((item.blob || "").length * 3) / 4)} bytes of ${mime})`));
  });
}

function renderToolResult(container, result, tool) {
  fill(container);
  container.classList.toggle("error", !!result.isError);
  if (result.isError) container.append(el("div", { class: "error-label" }, "The tool reported an error (isError)"));
  container.append(...renderContent(result.content));
  if (result.structuredContent !== undefined) {
    container.append(el("div", { class: "structured" },
      el("div", {}, el("h4", {}, "structuredContent"), pre(result.structuredContent)),
      el("div", {}, el("h4", {}, "outputSchema"), tool && tool.outputSchema ? pre(tool.outputSchema) : el("p", { class: "hint" }, "(none declared)"))));
  }
}

function renderFailure(container, error) {
  fill(container, el("div", { class: "error-label" }, "The request failed"), el("pre", {}, error.message),
    error.details && error.details.data ? pre(error.details.data) : null);
  container.classList.add("error");
}

// ---------------------------------------------------------------------------------------------
// Server info and connection

function setStatus(text, kind) {
  const status = $("#status");
  status.textContent = text;
  status.className = `status ${kind}`;
}

function renderInfo() {
  const info = state.info;
  const box = $("#server-info");
  fill(box);
  if (!info.connected) {
    setStatus("not connected", "off");
    $("#server-name").textContent = "";
    return;
  }
  const server = info.serverInfo || {};
  setStatus("connected", "on");
  $("#server-name").textContent = `${server.title || server.name || "?"} ${server.version || ""}`;
  const target = info.target || {};
  box.append(el("h2", {}, "Connected"), el("dl", {},
    el("dt", {}, "server"), el("dd", { id: "info-server" }, `${server.name || "?"} ${server.version || ""}`),
    el("dt", {}, "protocol"), el("dd", { id: "info-protocol" }, `${info.protocolVersion} (${info.era} era)`),
    el("dt", {}, "over"), el("dd", {}, target.transport === "stdio" ? (target.command || []).join(" ") : target.url || ""),
    el("dt", {}, "capabilities"), el("dd", {}, Object.keys(info.capabilities || {}).map((c) => el("span", { class: "badge" }, c))),
    info.instructions ? [el("dt", {}, "instructions"), el("dd", {}, info.instructions)] : null),
    el("details", {}, el("summary", {}, "capabilities as JSON"), pre(info.capabilities || {})));
}

function fillConnectForm(info) {
  const target = info.target;
  if (!target) return;
  $("#connect-transport").value = target.transport;
  if (target.transport === "stdio") $("#connect-command").value = (target.command || []).map((w) => (/[\s'"\\]/.test(w) ? `'${w.replace(/'/g, "'\\''")}'` : w)).join(" ");
  else $("#connect-url").value = target.url || "";
  if (info.era) $("#connect-era").value = "auto";
  updateTransport();
}

function updateTransport() {
  document.body.classList.toggle("stdio", $("#connect-transport").value === "stdio");
  document.body.classList.toggle("http", $("#connect-transport").value === "http");
}

async function connect(event) {
  event.preventDefault();
  const transport = $("#connect-transport").value;
  const request = { transport, era: $("#connect-era").value, logLevel: $("#connect-level").value };
  if (transport === "stdio") {
    request.command = splitCommand($("#connect-command").value);
    request.env = pairs($("#connect-env").value, "=");
    request.cwd = $("#connect-cwd").value.trim() || null;
  } else {
    request.url = $("#connect-url").value.trim();
    request.headers = pairs($("#connect-headers").value, ":");
  }
  $("#connect-error").textContent = "";
  setStatus("connecting…", "busy");
  $("#connect-button").disabled = true;
  try {
    state.info = await api("connect", request);
    renderInfo();
    await refreshAll();
  } catch (error) {
    $("#connect-error").textContent = error.message;
    state.info = { connected: false };
    renderInfo();
  } finally {
    $("#connect-button").disabled = false;
  }
}

/** Logs in to the URL of the connect form (OAuth, through the `mcp` process), then connects.
 * The authorization page's URL arrives as a `login` event: a link to open it. */
async function login() {
  const url = $("#connect-url").value.trim();
  if (!url) { $("#connect-error").textContent = "Give the server's URL first."; return; }
  $("#connect-error").textContent = "";
  $("#login-button").disabled = true;
  fill($("#login-status"), "Starting the login…");
  try {
    await api("login", { url, headers: pairs($("#connect-headers").value, ":") });
    fill($("#login-status"), "Logged in.");
    $("#connect-button").click();
  } catch (error) {
    fill($("#login-status"));
    $("#connect-error").textContent = error.message;
  } finally {
    $("#login-button").disabled = false;
  }
}

/** The `login` event: the authorization page to open (a link: a page may not open windows on
 * its own, and the person should see where they are sent). */
function showLoginLink(url) {
  if (!/^https?:\/\//i.test(url)) { $("#connect-error").textContent = `not an http(s) authorization URL: ${url}`; return; }
  fill($("#login-status"), el("a", { id: "login-open", href: url, target: "_blank", rel: "noopener noreferrer" }, "Open the authorization page"),
    " and come back here.");
}

async function disconnect() {
  state.info = await api("disconnect", {});
  renderInfo();
  state.tools = []; state.resources = []; state.templates = []; state.prompts = [];
  renderTools(); renderResources(); renderPrompts(); refreshSkills(); refreshTasks();
}

async function refreshAll() {
  const capabilities = (state.info && state.info.capabilities) || {};
  await Promise.all([
    capabilities.tools ? refreshList("tools") : null,
    capabilities.resources ? refreshList("resources") : null,
    capabilities.resources ? refreshList("templates") : null,
    capabilities.prompts ? refreshList("prompts") : null,
  ]);
  renderTools(); renderResources(); renderPrompts(); renderRoots();
  await Promise.all([refreshSkills(), refreshTasks()]);
}

async function refreshList(what) {
  try {
    const answer = await api("list", { what });
    if (what === "tools") state.tools = answer.tools || [];
    if (what === "resources") state.resources = answer.resources || [];
    if (what === "templates") state.templates = answer.resourceTemplates || [];
    if (what === "prompts") state.prompts = answer.prompts || [];
  } catch (error) {
    console.warn(`listing ${what} failed:`, error.message);
  }
}

// ---------------------------------------------------------------------------------------------
// Tools

function icon(item) {
  const first = (item.icons || []).find((i) => i && typeof i.src === "string" && /^(data:image\/|https:)/.test(i.src));
  return first ? el("img", { class: "icon", src: first.src, alt: "" }) : null;
}

/** The hints a tool's annotations give, as badges: each hint the server set to true, and
 * `destructiveHint`/`openWorldHint` set to false too (their default is true, so an explicit
 * false says something). The badge's tooltip names the annotation. */
function annotationBadges(annotations) {
  if (!annotations) return [];
  const badge = (hint, text, warn) => el("span", { class: warn ? "badge warn" : "badge", title: `${hint}: ${annotations[hint]}`, dataset: { hint } }, text);
  const badges = [];
  if (annotations.readOnlyHint === true) badges.push(badge("readOnlyHint", "read-only"));
  if (annotations.destructiveHint === true) badges.push(badge("destructiveHint", "destructive", true));
  if (annotations.destructiveHint === false) badges.push(badge("destructiveHint", "not destructive"));
  if (annotations.idempotentHint === true) badges.push(badge("idempotentHint", "idempotent"));
  if (annotations.openWorldHint === true) badges.push(badge("openWorldHint", "open world"));
  if (annotations.openWorldHint === false) badges.push(badge("openWorldHint", "closed world"));
  return badges;
}

/** Badges for what MCP Apps says of a tool: it has a view; only a view may call it. */
function appBadges(tool) {
  return [viewUri(tool) ? el("span", { class: "badge", dataset: { hint: "view" }, title: viewUri(tool) }, "has a view") : null,
    modelSees(tool) ? null : el("span", { class: "badge", dataset: { hint: "app-only" }, title: "_meta.ui.visibility" }, "app only")];
}

/** A tool's display title: its own, else the one its annotations carry. */
function toolTitle(tool) {
  return tool.title || (tool.annotations && tool.annotations.title) || "";
}

function renderTools() {
  const list = $("#tool-list");
  fill(list, ...state.tools.map((tool) => el("li", {
    class: "tool-item", dataset: { name: tool.name }, onclick: () => selectTool(tool.name),
  }, icon(tool), el("span", { class: "name" }, tool.name),
  toolTitle(tool) ? el("div", { class: "title" }, toolTitle(tool)) : null,
  tool.description ? el("div", { class: "description" }, tool.description) : null,
  el("div", { class: "badges" }, annotationBadges(tool.annotations), appBadges(tool)))));
  if (!state.tools.length) list.append(el("li", { class: "hint" }, state.info.connected ? "No tools." : "Not connected."));
}

function selectTool(name) {
  const tool = state.tools.find((t) => t.name === name);
  if (!tool) return;
  document.querySelectorAll(".tool-item").forEach((item) => item.classList.toggle("selected", item.dataset.name === name));
  const form = schemaForm(tool.inputSchema);
  const result = el("div", { id: "call-result", class: "result" });
  const progress = el("div", { id: "call-progress-box" });
  const callButton = el("button", { id: "call-button", type: "submit" }, "Call");
  const cancelButton = el("button", { id: "cancel-button", type: "button", class: "secondary", disabled: true }, "Cancel");
  const errors = el("p", { class: "error-text", id: "call-errors" });
  const asTask = el("input", { type: "checkbox", id: "call-as-task" });
  const taskOption = declares(TASKS_EXTENSION) ? el("label", { class: "inline" }, asTask, " run as a task") : null;
  const viewBox = el("div", { id: "app-view" });
  const submit = async (event) => {
    event.preventDefault();
    const { value, errors: problems } = form.read();
    errors.textContent = problems.length ? `Fix before sending: ${problems.join("; ")}` : "";
    if (problems.length) return;
    const request = newRequestName("call");
    state.currentCall = request;
    callButton.disabled = true;
    cancelButton.disabled = false;
    cancelButton.onclick = () => api("cancel", { request });
    fill(progress);
    fill(result, el("p", { class: "hint" }, "Calling…"));
    result.classList.remove("error");
    const started = performance.now();
    try {
      const path = asTask.checked ? "call-task" : "call";
      const answer = await tracked(request, `call ${tool.name}`, () => api(path, { request, tool: tool.name, arguments: value }));
      if (answer.task) {
        fill(result, el("p", {}, "The server made it task ", el("code", {}, answer.task.taskId), ": ",
          el("a", { href: "#", id: "show-tasks", onclick: (e) => { e.preventDefault(); showTab("tasks"); } }, "see Tasks"), "."));
        refreshTasks();
      } else if (answer.cancelled) {
        fill(result, el("p", { class: "hint" }, "Cancelled (the server was sent notifications/cancelled)."));
        if (viewUri(tool)) showToolRun(tool, viewBox, value, null, "cancelled from the page");
      } else {
        renderToolResult(result, answer.result, tool);
        result.append(el("p", { class: "hint" }, `${Math.round(performance.now() - started)} ms`));
        if (viewUri(tool)) showToolRun(tool, viewBox, value, answer.result);
      }
    } catch (error) {
      renderFailure(result, error);
    } finally {
      callButton.disabled = false;
      cancelButton.disabled = true;
    }
  };
  fill(freshToolDetail("the tool pane was replaced"),
    el("h2", {}, icon(tool), tool.name),
    tool.title ? el("div", { class: "hint" }, tool.title) : null,
    el("div", { class: "badges" }, annotationBadges(tool.annotations), appBadges(tool)),
    tool.description ? el("p", {}, tool.description) : null,
    el("form", { id: "tool-form", onsubmit: submit, novalidate: true }, form.node, errors, el("div", { class: "row" }, callButton, cancelButton, taskOption)),
    progress, viewBox, result,
    el("details", {}, el("summary", {}, "schemas"), el("h4", {}, "inputSchema"), pre(tool.inputSchema || {}),
      tool.outputSchema ? [el("h4", {}, "outputSchema"), pre(tool.outputSchema)] : null));
}

/** A `notifications/progress` for the request `name`: its bar in the run list, and the tool
 * pane's bar when it is the pane's call. */
function showProgress(name, update) {
  const run = state.runs.get(name);
  if (run) drawProgress(run.bar, run.text, update);
  if (name !== state.currentCall) return;
  const box = $("#call-progress-box");
  if (!box) return;
  let bar = $("#call-progress");
  if (!bar) {
    bar = el("progress", { id: "call-progress" });
    fill(box, bar, el("div", { class: "progress-line", id: "call-progress-text" }));
  }
  drawProgress(bar, $("#call-progress-text"), update);
}

function drawProgress(bar, text, update) {
  const total = update.total;
  if (total) { bar.max = total; bar.value = Math.min(update.progress, total); } else { bar.removeAttribute("value"); }
  const percent = total ? ` (${Math.round((100 * update.progress) / total)}%)` : "";
  text.textContent = `${update.progress}${total ? "/" + total : ""}${percent} ${update.message || ""}`;
}

/** Runs `send` (the API request named `request`) with a row of its own in the run list: a
 * progress bar and a Cancel button, so calls running at once each show theirs. */
async function tracked(request, label, send) {
  const bar = el("progress", {});
  const text = el("span", { class: "progress-line" }, "running…");
  const cancel = el("button", { type: "button", class: "secondary run-cancel", onclick: () => api("cancel", { request }) }, "Cancel");
  const row = el("li", { class: "run", dataset: { request, label } }, el("span", { class: "name" }, label), bar, text, cancel);
  state.runs.set(request, { bar, text });
  $("#run-list").append(row);
  $("#runs").hidden = false;
  try {
    return await send();
  } finally {
    row.remove();
    state.runs.delete(request);
    $("#runs").hidden = state.runs.size === 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Resources and templates

function renderResources() {
  fill($("#resource-list"), ...state.resources.map((r) => el("li", {
    class: "resource-item", dataset: { uri: r.uri }, onclick: () => readResource(r.uri),
  }, icon(r), el("span", { class: "name" }, r.name), el("div", { class: "title" }, r.uri), r.description ? el("div", { class: "title" }, r.description) : null)));
  fill($("#template-list"), ...state.templates.map((t) => el("li", {
    class: "template-item", dataset: { template: t.uriTemplate }, onclick: () => selectTemplate(t),
  }, icon(t), el("span", { class: "name" }, t.name), el("div", { class: "title" }, t.uriTemplate))));
}

async function readResource(uri) {
  $("#read-uri").value = uri;
  const result = $("#resource-result");
  result.classList.remove("error");
  fill(result, el("p", { class: "hint" }, `Reading ${uri}…`));
  try {
    const request = newRequestName("read");
    const answer = await tracked(request, `read ${uri}`, () => api("read", { request, uri }));
    if (answer.cancelled) return fill(result, "Cancelled.");
    fill(result, ...renderResourceContents(answer.result.contents));
  } catch (error) {
    renderFailure(result, error);
  }
}

/** The variables of an RFC 6570 template: `{title}`, `{+path}`, `{?a,b}`. */
function templateVariables(template) {
  const names = [];
  for (const match of template.matchAll(/\{([^}]+)\}/g)) {
    for (const part of match[1].replace(/^[+#./;?&]/, "").split(",")) names.push(part.replace(/\*$|:\d+$/, ""));
  }
  return names;
}

/** Fills a template with values (simple expansion; reserved `+`/`#` keep their characters). */
function expandTemplate(template, values) {
  return template.replace(/\{([^}]+)\}/g, (_, expression) => {
    const operator = /^[+#./;?&]/.test(expression) ? expression[0] : "";
    const names = expression.slice(operator.length).split(",").map((n) => n.replace(/\*$|:\d+$/, ""));
    const encode = (v) => (operator === "+" || operator === "#" ? encodeURI(v) : encodeURIComponent(v));
    const present = names.filter((n) => values[n] !== undefined && values[n] !== "");
    if (operator === "?" || operator === "&") return present.length ? operator + present.map((n) => `${n}=${encode(values[n])}`).join("&") : "";
    const joined = present.map((n) => encode(values[n])).join(",");
    return present.length && operator && operator !== "+" ? operator + joined : joined;
  });
}

/** Completions for `input`, asked of the server as the person types. */
function completer(kind, name) {
  return (argument, input) => {
    const list = el("datalist", { id: `complete-${kind}-${argument}-${requestCounter++}` });
    input.setAttribute("list", list.id);
    input.after(list);
    let timer = null;
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        try {
          const answer = await api("complete", { kind, name, argument, value: input.value });
          fill(list, ...((answer.completion && answer.completion.values) || []).map((v) => el("option", { value: v })));
        } catch { /* completions are a convenience */ }
      }, 150);
    });
  };
}

function selectTemplate(template) {
  const variables = templateVariables(template.uriTemplate);
  const schema = { type: "object", properties: Object.fromEntries(variables.map((v) => [v, { type: "string" }])), required: variables };
  const form = schemaForm(schema, { complete: completer("resource", template.uriTemplate) });
  const errors = el("p", { class: "error-text" });
  fill($("#template-form"), el("form", { id: "template-values", onsubmit: (event) => {
    event.preventDefault();
    const { value, errors: problems } = form.read();
    errors.textContent = problems.join("; ");
    if (!problems.length) readResource(expandTemplate(template.uriTemplate, value));
  } }, el("h3", {}, template.uriTemplate), template.description ? el("p", { class: "hint" }, template.description) : null,
  form.node, errors, el("button", { type: "submit" }, "Read")));
}

// ---------------------------------------------------------------------------------------------
// Prompts

function renderPrompts() {
  fill($("#prompt-list"), ...state.prompts.map((p) => el("li", {
    class: "prompt-item", dataset: { name: p.name }, onclick: () => selectPrompt(p),
  }, icon(p), el("span", { class: "name" }, p.name), p.title ? el("div", { class: "title" }, p.title) : null)));
}

function selectPrompt(prompt) {
  document.querySelectorAll(".prompt-item").forEach((item) => item.classList.toggle("selected", item.dataset.name === prompt.name));
  const args = prompt.arguments || [];
  const schema = {
    type: "object",
    properties: Object.fromEntries(args.map((a) => [a.name, { type: "string", title: a.title || a.name, description: a.description }])),
    required: args.filter((a) => a.required).map((a) => a.name),
  };
  const form = schemaForm(schema, { complete: completer("prompt", prompt.name) });
  const result = el("div", { id: "prompt-result", class: "result" });
  const errors = el("p", { class: "error-text" });
  fill($("#prompt-detail"), el("h2", {}, prompt.name), prompt.description ? el("p", {}, prompt.description) : null,
    el("form", { id: "prompt-form", novalidate: true, onsubmit: async (event) => {
      event.preventDefault();
      const { value, errors: problems } = form.read();
      errors.textContent = problems.join("; ");
      if (problems.length) return;
      result.classList.remove("error");
      try {
        const request = newRequestName("prompt");
        const answer = await tracked(request, `get ${prompt.name}`, () => api("prompt", { request, prompt: prompt.name, arguments: value }));
        const rendered = answer.result || {};
        fill(result, rendered.description ? el("p", { class: "hint" }, rendered.description) : "",
          ...(rendered.messages || []).map((m) => el("div", { class: "message-turn" }, el("div", { class: "role" }, m.role), renderContent([m.content]))));
      } catch (error) {
        renderFailure(result, error);
      }
    } }, form.node, errors, el("button", { type: "submit" }, "Get")), result);
}

// ---------------------------------------------------------------------------------------------
// Roots

function renderRoots() {
  const rows = $("#root-rows");
  fill(rows, ...(state.info.roots || []).map((r) => rootRow(r.uri, r.name)));
}

function rootRow(uri = "file:///", name = "") {
  const row = el("div", { class: "root-row" },
    el("input", { class: "root-uri", value: uri, placeholder: "file:///home/me/project", spellcheck: "false" }),
    el("input", { class: "root-name", value: name || "", placeholder: "name (optional)" }));
  row.append(el("button", { type: "button", class: "secondary", onclick: () => row.remove() }, "Remove"));
  return row;
}

async function saveRoots() {
  const roots = [...document.querySelectorAll(".root-row")].map((row) => {
    const name = row.querySelector(".root-name").value.trim();
    return name ? { uri: row.querySelector(".root-uri").value.trim(), name } : { uri: row.querySelector(".root-uri").value.trim() };
  });
  $("#root-error").textContent = "";
  try {
    state.info = await api("roots", { roots });
    renderRoots();
  } catch (error) {
    $("#root-error").textContent = error.message;
  }
}

// ---------------------------------------------------------------------------------------------
// Messages and logs

const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
const time = (millis) => new Date(millis).toLocaleTimeString();

function messageSummary(message) {
  if (typeof message !== "object" || !message) return String(message);
  if (Array.isArray(message)) return `batch of ${message.length}`;
  if (message.method) return `${message.method}${message.id !== undefined ? ` #${message.id}` : ""}`;
  if (message.error) return `error #${message.id}: ${message.error.message}`;
  return `result #${message.id}`;
}

function messageMatches(entry) {
  const direction = $("#message-direction").value;
  const filter = $("#message-filter").value.trim().toLowerCase();
  return (!direction || entry.direction === direction) && (!filter || JSON.stringify(entry.message).toLowerCase().includes(filter));
}

function messageRow(entry) {
  const arrow = entry.direction === "sent" ? "→" : "←";
  return el("li", { class: "message", onclick: (e) => { if (e.target.tagName !== "PRE") e.currentTarget.classList.toggle("open"); } },
    el("span", { class: "time" }, time(entry.time)), el("span", { class: entry.direction }, `${arrow} ${messageSummary(entry.message)}`), pre(entry.message));
}

function renderMessages() {
  fill($("#message-list"), ...state.messages.filter(messageMatches).map(messageRow));
  $("#message-count").textContent = state.messages.length ? `(${state.messages.length})` : "";
}

function addMessage(entry) {
  state.messages.push(entry);
  if (state.messages.length > 3000) state.messages.shift();
  if (messageMatches(entry)) $("#message-list").append(messageRow(entry));
  $("#message-count").textContent = `(${state.messages.length})`;
}

async function copyMessages() {
  const text = json(state.messages.filter(messageMatches).map((m) => ({ direction: m.direction, time: new Date(m.time).toISOString(), message: m.message })));
  try { await navigator.clipboard.writeText(text); $("#message-copy").textContent = "Copied"; } catch { window.prompt("Copy the messages:", text); }
  setTimeout(() => { $("#message-copy").textContent = "Copy as JSON"; }, 1500);
}

function logRow(entry) {
  const data = typeof entry.data === "string" ? entry.data : JSON.stringify(entry.data);
  return el("li", { class: `log level-${entry.level}` }, el("span", { class: "time" }, time(entry.time)),
    `[${entry.level}] ${entry.logger ? entry.logger + ": " : ""}${data}`);
}

function renderLogs() {
  const minimum = LEVELS.indexOf($("#log-level-filter").value);
  fill($("#log-list"), ...state.logs.filter((l) => LEVELS.indexOf(l.level) >= minimum).map(logRow));
  $("#log-count").textContent = state.logs.length ? `(${state.logs.length})` : "";
}

// ---------------------------------------------------------------------------------------------
// Questions from the server: elicitation and sampling

function nextQuestion() {
  const dialog = $("#question-dialog");
  const question = state.questions[0];
  if (!question) { if (dialog.open) dialog.close(); return; }
  if (dialog.open && dialog.dataset.id === String(question.id)) return;
  dialog.dataset.id = String(question.id);
  $("#question-error").textContent = "";
  if (question.kind === "elicit") showElicitation(question); else showSampling(question);
  if (!dialog.open) dialog.showModal();
}

async function answer(question, body) {
  try {
    await api("answer", { id: question.id, ...body });
    state.questions = state.questions.filter((q) => q.id !== question.id);
    nextQuestion();
  } catch (error) {
    $("#question-error").textContent = error.message;
  }
}

function showElicitation(question) {
  const params = question.params || {};
  $("#question-title").textContent = "The server asks";
  $("#question-message").textContent = params.message || "";
  const body = $("#question-body");
  const isUrl = params.mode === "url";
  const form = isUrl ? null : schemaForm(params.requestedSchema || { type: "object" });
  fill(body, isUrl ? el("p", {}, "It asks you to open: ", el("a", { href: params.url, target: "_blank", rel: "noopener noreferrer" }, params.url)) : form.node);
  $("#question-accept").textContent = isUrl ? "Open and accept" : "Accept";
  $("#question-accept").onclick = () => {
    if (isUrl) return answer(question, { result: { action: "accept" } });
    const { value, errors } = form.read();
    if (errors.length) { $("#question-error").textContent = errors.join("; "); return; }
    answer(question, { result: { action: "accept", content: value } });
  };
  $("#question-decline").onclick = () => answer(question, { result: { action: "decline" } });
  $("#question-cancel").onclick = () => answer(question, { result: { action: "cancel" } });
  $("#question-cancel").hidden = false;
}

function showSampling(question) {
  const params = question.params || {};
  $("#question-title").textContent = "The server asks for a model's answer";
  $("#question-message").textContent = params.systemPrompt ? `system: ${params.systemPrompt}` : "";
  const reply = el("textarea", { id: "sampling-answer", rows: 5, placeholder: "Type the answer the model would give" });
  fill($("#question-body"),
    ...(params.messages || []).map((m) => el("div", { class: "message-turn" }, el("div", { class: "role" }, m.role),
      renderContent(Array.isArray(m.content) ? m.content : [m.content]))),
    params.maxTokens ? el("p", { class: "hint" }, `maxTokens: ${params.maxTokens}`) : null,
    el("label", {}, "Answer", reply));
  $("#question-accept").textContent = "Send";
  $("#question-accept").onclick = () => answer(question, { result: {
    role: "assistant", content: { type: "text", text: reply.value }, model: "mcp-ui-person", stopReason: "endTurn" } });
  $("#question-decline").onclick = () => answer(question, { refused: "the user declined the sampling request" });
  $("#question-cancel").hidden = true;
}

// ---------------------------------------------------------------------------------------------
// The event stream

const LIST_CHANGED = {
  "notifications/tools/list_changed": ["tools"],
  "notifications/resources/list_changed": ["resources", "templates"],
  "notifications/prompts/list_changed": ["prompts"],
};

async function handleEvent(event) {
  switch (event.type) {
    case "message": addMessage(event); break;
    case "log":
      state.logs.push(event);
      if (LEVELS.indexOf(event.level) >= LEVELS.indexOf($("#log-level-filter").value)) $("#log-list").append(logRow(event));
      $("#log-count").textContent = `(${state.logs.length})`;
      break;
    case "progress": showProgress(event.request, event.update); break;
    case "notification":
    case "listened": {
      const lists = LIST_CHANGED[event.method];
      if (lists) { await Promise.all(lists.map(refreshList)); renderTools(); renderResources(); renderPrompts(); }
      if (event.method === "notifications/resources/updated" && event.params && event.params.uri === $("#read-uri").value) readResource(event.params.uri);
      break;
    }
    case "question": state.questions.push(event); nextQuestion(); break;
    case "login": showLoginLink(event.url); break;
    case "task": refreshTasks(); break;
    case "answered": state.questions = state.questions.filter((q) => q.id !== event.id); nextQuestion(); break;
    case "connecting": setStatus("connecting…", "busy"); break;
    case "connected":
    case "disconnected":
      state.info = await api("info");
      renderInfo();
      if (event.error) $("#connect-error").textContent = event.error;
      break;
  }
}

async function pollEvents() {
  for (;;) {
    try {
      const answer = await api(`events?after=${state.seq}`);
      for (const event of answer.events) {
        state.seq = Math.max(state.seq, event.seq);
        try { await handleEvent(event); } catch (error) { console.warn("event", event, error); }
      }
    } catch (error) {
      setStatus("UI server gone?", "off");
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Start

function showTab(name) {
  if (name === "tasks") refreshTasks();
  document.querySelectorAll("#tabs button").forEach((b) => b.classList.toggle("active", b.dataset.tab === name));
  document.querySelectorAll(".tab").forEach((t) => t.classList.toggle("active", t.id === `tab-${name}`));
}

async function start() {
  // The token has done its work (the cookie carries it now): keep it out of the history.
  if (location.search.includes("token=")) history.replaceState(null, "", "/");
  document.querySelectorAll("#tabs button").forEach((b) => b.addEventListener("click", () => showTab(b.dataset.tab)));
  $("#connect-transport").addEventListener("change", updateTransport);
  $("#connect-form").addEventListener("submit", connect);
  $("#disconnect-button").addEventListener("click", disconnect);
  $("#login-button").addEventListener("click", login);
  $("#read-form").addEventListener("submit", (event) => { event.preventDefault(); readResource($("#read-uri").value.trim()); });
  $("#subscribe-button").addEventListener("click", async () => {
    const uri = $("#read-uri").value.trim();
    try { await api("listen", { resources: uri ? [uri] : [] }); $("#subscribe-button").textContent = "Listening"; } catch (error) { fill($("#resource-result"), error.message); }
  });
  $("#root-add").addEventListener("click", () => $("#root-rows").append(rootRow()));
  $("#root-save").addEventListener("click", saveRoots);
  $("#message-filter").addEventListener("input", renderMessages);
  $("#message-direction").addEventListener("change", renderMessages);
  $("#message-copy").addEventListener("click", copyMessages);
  $("#message-clear").addEventListener("click", () => { state.messages = []; renderMessages(); });
  $("#log-level-filter").addEventListener("change", renderLogs);
  $("#log-clear").addEventListener("click", () => { state.logs = []; renderLogs(); });
  $("#question-dialog").addEventListener("cancel", (event) => event.preventDefault());
  updateTransport();
  state.info = await api("info");
  renderInfo();
  fillConnectForm(state.info);
  if (state.info.connected) await refreshAll(); else renderTools();
  renderRoots();
  document.body.dataset.ready = "true";
  pollEvents();
}

start();
