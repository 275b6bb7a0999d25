// mcp ui: the Tasks and Skills tabs, for servers that declare those extensions
// (io.modelcontextprotocol/tasks and io.modelcontextprotocol/skills). Uses app.js's helpers
// (el, fill, api, pre, renderToolResult, renderFailure).
"use strict";

const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
const SKILLS_EXTENSION = "io.modelcontextprotocol/skills";
const FINISHED = new Set(["completed", "failed", "cancelled"]);
/** How often the Tasks tab asks for the state of unfinished tasks, in milliseconds. */
const TASK_POLL = 500;

/** Whether the connected server declared the extension `name`. */
function declares(name) {
  const extensions = (state.info.capabilities || {}).extensions || {};
  return Object.prototype.hasOwnProperty.call(extensions, name);
}

// ---------------------------------------------------------------------------------------------
// Tasks: the ones started from the tool pane with "run as a task"

let taskTimer = null;

async function refreshTasks() {
  clearTimeout(taskTimer);
  taskTimer = null;
  if (!state.info.connected) { state.tasks = []; renderTasks(); return; }
  try {
    state.tasks = (await api("tasks", {})).tasks || [];
  } catch (error) {
    fill($("#task-list"), el("li", { class: "error-text" }, error.message));
    return;
  }
  renderTasks();
  if (state.tasks.some((entry) => entry.task && !FINISHED.has(entry.task.status))) {
    taskTimer = setTimeout(refreshTasks, TASK_POLL);
  }
}

function renderTasks() {
  fill($("#task-list"), ...state.tasks.map(taskRow));
  if (!state.tasks.length) $("#task-list").append(el("li", { class: "hint" }, "No tasks yet: call a tool with “run as a task”."));
  $("#task-count").textContent = state.tasks.length ? `(${state.tasks.length})` : "";
}

function taskRow(entry) {
  if (!entry.task) {
    return el("li", { class: "task", dataset: { task: entry.taskId } },
      el("span", { class: "name" }, entry.tool), " ", el("code", {}, entry.taskId), el("div", { class: "error-text" }, entry.error));
  }
  const task = entry.task;
  const result = el("div", { class: "result task-result" });
  if (task.status === "completed" && task.result) renderToolResult(result, task.result);
  if (task.status === "failed" && task.error) renderFailure(result, { message: task.error.message, details: { data: task.error.data } });
  const cancel = FINISHED.has(task.status) ? null
    : el("button", { type: "button", class: "secondary task-cancel", onclick: () => cancelTask(task.taskId) }, "Cancel");
  return el("li", { class: "task", dataset: { task: task.taskId, status: task.status } },
    el("div", { class: "row" }, el("span", { class: "name" }, entry.tool),
      el("span", { class: `badge task-status status-${task.status}` }, task.status), el("code", { class: "hint" }, task.taskId),
      task.statusMessage ? el("span", { class: "hint" }, task.statusMessage) : null, cancel),
    task.inputRequests ? el("details", {}, el("summary", {}, "the questions it waits on"), pre(task.inputRequests)) : null,
    result);
}

async function cancelTask(taskId) {
  try {
    await api("cancel-task", { taskId });
  } catch (error) {
    fill($("#task-error"), `Cancelling ${taskId}: ${error.message}`);
  }
  await refreshTasks();
}

// ---------------------------------------------------------------------------------------------
// Skills: the server's list; a skill's SKILL.md and files, each verified by the `mcp` process

async function refreshSkills() {
  const list = $("#skill-list");
  if (!state.info.connected || !declares(SKILLS_EXTENSION)) {
    state.skills = [];
    fill(list, el("li", { class: "hint" }, state.info.connected ? "The server declares no skills." : "Not connected."));
    return;
  }
  try {
    state.skills = (await api("skills", {})).skills || [];
  } catch (error) {
    fill(list, el("li", { class: "error-text" }, error.message));
    return;
  }
  fill(list, ...state.skills.map((entry) => el("li", { class: "skill-item", dataset: { uri: entry.uri }, onclick: () => selectSkill(entry) },
    el("span", { class: "name" }, skillName(entry)),
    entry.frontmatter && entry.frontmatter.description ? el("div", { class: "description" }, String(entry.frontmatter.description)) : null)));
  if (!state.skills.length) list.append(el("li", { class: "hint" }, "No skills listed."));
}

function skillName(entry) {
  const name = entry.frontmatter && entry.frontmatter.name;
  return typeof name === "string" ? name : entry.uri;
}

function selectSkill(entry) {
  document.querySelectorAll(".skill-item").forEach((item) => item.classList.toggle("selected", item.dataset.uri === entry.uri));
  const files = Array.isArray(entry.resources) ? entry.resources : [];
  const text = el("div", { id: "skill-text", class: "result" });
  fill($("#skill-detail"), el("h2", {}, skillName(entry)), el("div", { class: "hint" }, entry.uri),
    el("details", {}, el("summary", {}, "front matter"), pre(entry.frontmatter || {})),
    el("h3", {}, "Files"),
    files.length ? el("ul", { id: "skill-files" }, files.map((file) => el("li", {},
      el("a", { href: "#", class: "skill-file", dataset: { uri: file.uri }, onclick: (e) => { e.preventDefault(); showSkillFile(entry, file.uri, text); } }, file.uri),
      el("span", { class: "hint" }, ` ${file.size} bytes`))))
      : el("p", { class: "hint" }, "Generated by the server (dynamic): nothing to verify, so nothing is read."),
    text);
  if (files.length) showSkillFile(entry, entry.uri, text);
}

/** One of the skill's files (its SKILL.md when `uri` is the entry's), as text. */
async function showSkillFile(entry, uri, box) {
  box.classList.remove("error");
  fill(box, el("p", { class: "hint" }, `Reading ${uri}…`));
  try {
    const answer = await api("skill", uri === entry.uri ? { entry } : { entry, file: uri });
    fill(box, el("div", { class: "hint" }, answer.uri),
      answer.text !== undefined ? el("pre", {}, answer.text) : el("p", { class: "hint" }, `${answer.size} bytes, not text`));
  } catch (error) {
    renderFailure(box, error);
  }
}
