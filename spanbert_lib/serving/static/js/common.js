// Small DOM and API helpers shared by the views.

export function el(tag, attributes = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "style" && typeof value === "object") {
      // Custom properties (--cluster-colour) only take effect through setProperty.
      for (const [name, setting] of Object.entries(value)) {
        if (name.startsWith("--")) node.style.setProperty(name, setting);
        else node.style[name] = setting;
      }
    }
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of [].concat(children)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export async function postJSON(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  let data = null;
  try { data = await response.json(); } catch (_) { data = { error: `HTTP ${response.status}` }; }
  return { ok: response.ok, status: response.status, data };
}

export async function getJSON(url) {
  const response = await fetch(url, { cache: "no-store" });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

// Colours that stay distinguishable next to each other (cluster i gets PALETTE[i % n]).
export const PALETTE = [
  "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7",
  "#9c755f", "#1f77b4", "#bcbd22", "#17becf", "#d62728", "#8c564b", "#7f7f7f", "#2ca02c",
];

export function colourFor(index) {
  return PALETTE[index % PALETTE.length];
}

// A stable colour per label name (NER labels, relation classes).
export function colourForLabel(label) {
  let hash = 0;
  for (const character of String(label)) hash = (hash * 31 + character.charCodeAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}

export function percent(value, digits = 1) {
  return `${(100 * value).toFixed(digits)} %`;
}

export function errorBox(message) {
  return el("div", { class: "error-box", role: "alert" }, [el("strong", { text: "Error: " }), message]);
}

// A labelled horizontal probability bar.
export function probabilityBar(label, probability, { highlight = false, colour = null } = {}) {
  return el("div", { class: "prob-row" + (highlight ? " top" : ""), "data-label": label }, [
    el("span", { class: "prob-label", text: label, title: label }),
    el("span", { class: "prob-track" }, [
      el("span", {
        class: "prob-bar",
        style: { width: `${Math.max(0, Math.min(1, probability)) * 100}%`, background: colour || "" },
      }),
    ]),
    el("span", { class: "prob-value", text: percent(probability) }),
  ]);
}

// A form row: label + control.
export function field(labelText, control, hint = null) {
  return el("label", { class: "field" }, [
    el("span", { class: "field-label", text: labelText }),
    control,
    hint ? el("span", { class: "field-hint", text: hint }) : null,
  ]);
}

// Runs `action` on submit with a busy state and errors shown in `output`.
export function wireForm(form, button, output, action) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    const label = button.textContent;
    button.textContent = "Running…";
    form.classList.add("busy");
    try {
      await action();
    } catch (error) {
      output.replaceChildren(errorBox(error.message || String(error)));
    } finally {
      button.disabled = false;
      button.textContent = label;
      form.classList.remove("busy");
    }
  });
}

// Calls the model and throws its JSON error message on failure.
export async function predict(model, input) {
  const { ok, data } = await postJSON(`/predict/${encodeURIComponent(model.name)}`, input);
  if (!ok) throw new Error(data && data.error ? data.error : "request failed");
  return data;
}

// Text with highlighted [start, end) character ranges: ranges = [{start, end, node: (text) => Node}].
export function textWithRanges(text, ranges) {
  const parts = [];
  let position = 0;
  for (const range of [...ranges].sort((a, b) => a.start - b.start)) {
    if (range.start < position) continue;
    if (range.start > position) parts.push(text.slice(position, range.start));
    parts.push(range.node(text.slice(range.start, range.end)));
    position = range.end;
  }
  if (position < text.length) parts.push(text.slice(position));
  return parts;
}
