// The page: a tab for the masking preview and one per served model; models still training show
// their progress (polled) until they are loaded, then their view.
import { el, errorBox, getJSON } from "./common.js";
import { modelCard, taskTitle, trainingCard } from "./model_card.js";
import { renderMasking } from "./views/masking.js";
import { renderCoreference } from "./views/coreference.js";
import { renderQA } from "./views/qa.js";
import { renderSpanNER } from "./views/span_ner.js";
import { renderRelation } from "./views/relation.js";
import { renderEntityTyping } from "./views/entity_typing.js";
import { renderGeneric } from "./views/generic.js";

const VIEWS = {
  coreference: renderCoreference,
  qa: renderQA,
  span_ner: renderSpanNER,
  relation: renderRelation,
  entity_typing: renderEntityTyping,
};
const POLL_MS = 3000;

const tabs = document.getElementById("tabs");
const views = document.getElementById("views");
const shownStatus = new Map(); // model name -> status its view was built for

function select(name) {
  for (const tab of tabs.children) {
    const active = tab.dataset.view === name;
    tab.classList.toggle("active", active);
    tab.setAttribute("aria-selected", String(active));
  }
  for (const view of views.children) view.hidden = view.dataset.view !== name;
  if (history.replaceState) history.replaceState(null, "", `#${encodeURIComponent(name)}`);
}

function addTab(name, label, kind) {
  const tab = el("button", {
    class: "tab", type: "button", role: "tab", "data-view": name, "data-kind": kind,
    onclick: () => select(name),
  }, [el("span", { class: "tab-name", text: label }), el("span", { class: "tab-kind", text: kind })]);
  const view = el("section", { class: "view", "data-view": name, role: "tabpanel", hidden: true });
  tabs.append(tab);
  views.append(view);
  return { tab, view };
}

function buildModelView(view, model) {
  view.dataset.task = model.task || "";
  view.dataset.status = model.status;
  if (model.status !== "ready") {
    view.replaceChildren(trainingCard(model));
    return;
  }
  const body = el("div", { class: "view-body" });
  view.replaceChildren(modelCard(model), body);
  (VIEWS[model.task] || renderGeneric)(body, model);
}

async function refreshModels(initial) {
  let models;
  try {
    models = await getJSON("/models");
  } catch (error) {
    if (initial) views.append(errorBox(`could not list the models: ${error.message}`));
    return true;
  }
  for (const model of models) {
    let view = views.querySelector(`section[data-view="${CSS.escape(model.name)}"]`);
    let tab = tabs.querySelector(`[data-view="${CSS.escape(model.name)}"]`);
    if (!view) ({ tab, view } = addTab(model.name, model.name, model.task ? taskTitle(model.task) : "model"));
    tab.dataset.status = model.status;
    if (model.status !== "ready" || shownStatus.get(model.name) !== "ready") {
      buildModelView(view, model);
      shownStatus.set(model.name, model.status);
    }
  }
  return models.some((model) => model.status === "training");
}

async function start() {
  const { view } = addTab("masking", "Span masking", "pre-training");
  try {
    renderMasking(view, await getJSON("/masking"));
  } catch (error) {
    view.append(errorBox(error.message));
  }
  let training = await refreshModels(true);
  const wanted = decodeURIComponent(location.hash.slice(1));
  select([...tabs.children].some((tab) => tab.dataset.view === wanted) ? wanted : "masking");
  document.body.dataset.ready = "true";
  while (training) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    training = await refreshModels(false);
  }
}

start();
