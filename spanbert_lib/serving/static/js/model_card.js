// The header of a model view: what is served (encoder, predictor) and how good it was in validation.
import { el } from "./common.js";

const TASK_TITLES = {
  coreference: "Coreference",
  qa: "Question answering",
  span_ner: "Span NER",
  relation: "Relation classification",
  entity_typing: "Entity typing",
  generic: "Model",
};

export function taskTitle(task) {
  return TASK_TITLES[task] || "Model";
}

// The metrics most worth showing first, per task (the rest follow).
const KEY_METRICS = ["conll_f1", "f1", "exact_match", "best_f1", "exact", "micro_f1", "macro_f1", "accuracy"];

// SQuAD metrics are already percentages; the other tasks report fractions (shown as percentages).
function formatMetric(name, value, task) {
  if (typeof value !== "number") return String(value);
  if (name.includes("loss")) return value.toFixed(3);
  return (task === "qa" ? value : 100 * value).toFixed(1);
}

export function modelCard(model) {
  const metrics = model.validation_metrics || {};
  const names = Object.keys(metrics).filter((name) => !name.includes("memory") && !name.endsWith("_duration"));
  names.sort((a, b) => {
    const ia = KEY_METRICS.indexOf(a), ib = KEY_METRICS.indexOf(b);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || a.localeCompare(b);
  });
  const shown = names.slice(0, 4);
  const metricNodes = shown.length
    ? shown.map((name) => el("span", { class: "metric", "data-metric": name }, [
      el("span", { class: "metric-name", text: name.replaceAll("_", " ") }),
      el("span", { class: "metric-value", text: formatMetric(name, metrics[name], model.task) }),
    ]))
    : [el("span", { class: "metric muted", text: "no validation metrics beside the archive" })];
  return el("div", { class: "model-card" }, [
    el("div", { class: "model-title" }, [
      el("span", { class: "task-badge", text: taskTitle(model.task) }),
      el("strong", { text: model.name }),
    ]),
    el("dl", { class: "model-facts" }, [
      el("dt", { text: "encoder" }), el("dd", { class: "encoder", text: model.encoder || "unknown" }),
      el("dt", { text: "predictor" }), el("dd", { text: model.predictor || "default" }),
      model.num_parameters ? el("dt", { text: "parameters" }) : null,
      model.num_parameters ? el("dd", { text: `${(model.num_parameters / 1e6).toFixed(1)} M` }) : null,
    ]),
    el("div", { class: "metrics" }, [
      el("span", { class: "metrics-title", text: model.best_epoch !== null && model.best_epoch !== undefined
        ? `validation (best epoch ${model.best_epoch})` : "validation" }),
      ...metricNodes,
    ]),
    el("p", { class: "card-note", text: "The score of this archive on its own validation data. "
      + "A small model trained on a CPU is not the paper's model." }),
  ]);
}

function duration(seconds) {
  if (seconds === null || seconds === undefined) return "?";
  const minutes = Math.floor(seconds / 60);
  return minutes ? `${minutes} min ${Math.round(seconds % 60)} s` : `${Math.round(seconds)} s`;
}

export function trainingCard(model) {
  const progress = model.progress || {};
  const fraction = progress.fraction || 0;
  const failed = model.status === "failed";
  return el("div", { class: "model-card training" + (failed ? " failed" : ""), "data-status": model.status }, [
    el("div", { class: "model-title" }, [
      el("span", { class: "task-badge", text: model.task ? taskTitle(model.task) : "Model" }),
      el("strong", { text: model.name }),
      el("span", { class: "status-pill", text: failed ? "failed" : "training" }),
    ]),
    el("div", { class: "progress-track" }, [el("div", { class: "progress-bar", style: { width: `${100 * fraction}%` } })]),
    el("dl", { class: "model-facts" }, [
      el("dt", { text: "epoch" }), el("dd", { text: `${progress.epoch ?? "?"} / ${progress.num_epochs ?? "?"}` }),
      el("dt", { text: "loss" }), el("dd", { text: progress.loss !== null && progress.loss !== undefined ? progress.loss.toFixed(4) : "–" }),
      el("dt", { text: "elapsed" }), el("dd", { text: duration(progress.elapsed_s) }),
      el("dt", { text: "time left" }), el("dd", { text: duration(progress.eta_s) }),
      el("dt", { text: "encoder" }), el("dd", { text: model.encoder || "?" }),
    ]),
    el("p", { class: "card-note", text: model.message || "" }),
  ]);
}
