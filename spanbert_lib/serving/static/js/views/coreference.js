// Coreference: every cluster in its own colour over the text (nested mentions nest), hovering a
// mention or a cluster of the list lights the whole cluster.
import { colourFor, el, field, predict, wireForm } from "../common.js";

// Mentions as a forest of non-crossing character spans: [{start, end, cluster, children}].
function mentionForest(charClusters) {
  const mentions = [];
  charClusters.forEach((cluster, index) => {
    for (const [start, end] of cluster) mentions.push({ start, end, cluster: index, children: [] });
  });
  mentions.sort((a, b) => a.start - b.start || b.end - a.end);
  const roots = [];
  const stack = [];
  for (const mention of mentions) {
    while (stack.length && stack[stack.length - 1].end <= mention.start) stack.pop();
    const parent = stack[stack.length - 1];
    if (parent && mention.end > parent.end) continue; // crosses its parent: listed, not drawn
    (parent ? parent.children : roots).push(mention);
    stack.push(mention);
  }
  return roots;
}

function renderMentions(text, mentions, start, end) {
  const parts = [];
  let position = start;
  for (const mention of mentions) {
    if (mention.start > position) parts.push(text.slice(position, mention.start));
    parts.push(el("span", {
      class: "mention",
      "data-cluster": mention.cluster,
      style: { "--cluster-colour": colourFor(mention.cluster) },
      title: `cluster ${mention.cluster + 1}`,
    }, [
      ...renderMentions(text, mention.children, mention.start, mention.end),
      el("sub", { class: "cluster-tag", text: mention.cluster + 1 }),
    ]));
    position = mention.end;
  }
  if (end > position) parts.push(text.slice(position, end));
  return parts;
}

function lightCluster(container, cluster) {
  container.classList.toggle("lighting", cluster !== null);
  for (const node of container.querySelectorAll("[data-cluster]")) {
    node.classList.toggle("lit", cluster !== null && node.dataset.cluster === String(cluster));
  }
}

function renderResult(output, result) {
  const text = result.text;
  const clusters = result.char_clusters;
  const document = el("div", { class: "coref-text" }, renderMentions(text, mentionForest(clusters), 0, text.length));
  const list = el("ol", { class: "cluster-list" }, clusters.map((cluster, index) => el("li", {
    class: "cluster-item",
    "data-cluster": index,
    style: { "--cluster-colour": colourFor(index) },
  }, [
    el("span", { class: "swatch" }),
    el("span", { class: "cluster-mentions", text: result.cluster_texts[index].join(" · ") }),
  ])));
  const layout = el("div", { class: "coref-layout" }, [
    document,
    el("aside", { class: "cluster-panel" }, [
      el("h3", { text: clusters.length ? `${clusters.length} cluster${clusters.length > 1 ? "s" : ""}` : "No clusters found" }),
      list,
    ]),
  ]);
  layout.addEventListener("mouseover", (event) => {
    const target = event.target.closest("[data-cluster]");
    lightCluster(layout, target ? target.dataset.cluster : null);
  });
  layout.addEventListener("mouseleave", () => lightCluster(layout, null));
  output.replaceChildren(layout, el("details", { class: "resolved" }, [
    el("summary", { text: "Resolved text (each mention replaced by its cluster's first mention)" }),
    el("p", { text: result.resolved }),
  ]));
}

export function renderCoreference(body, model) {
  const documentInput = el("textarea", { name: "document", rows: 6 });
  documentInput.value = model.example.document || "";
  const button = el("button", { type: "submit", class: "primary", text: "Find clusters" });
  const output = el("div", { class: "output" });
  const form = el("form", { class: "demo-form" }, [field("Document", documentInput), el("div", { class: "form-row" }, [button])]);
  body.append(form, output);
  wireForm(form, button, output, async () => renderResult(output, await predict(model, { document: documentInput.value })));
  form.requestSubmit();
}
