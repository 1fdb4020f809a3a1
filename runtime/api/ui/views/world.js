// World: the entities, the relation graph drawn (from each entity's
// neighbours), and an entity's page when one is clicked.

import {api} from '../api.js';
import {h, put, errorBox} from '../util.js';
import {drawGraph} from '../graph.js';

const MAX_GRAPH = 60;

/** Inline text: **bold** marks dropped, [[Entity]] as a link to its page. */
function inline(text) {
  return text.replace(/\*\*/g, '').split(/(\[\[[^\]]+\]\])/).map((part) => {
    const m = /^\[\[([^\]]+)\]\]$/.exec(part);
    return m ? h('a', {href: `#/world?entity=${encodeURIComponent(m[1])}`}, m[1]) : part;
  });
}

/** A few lines of Markdown as DOM (headings, list items, paragraphs); text only. */
export function markdown(md) {
  const out = [];
  let list = null;
  for (const line of md.split('\n')) {
    const hm = /^(#{1,4})\s+(.*)$/.exec(line);
    const li = /^\s*[-*]\s+(.*)$/.exec(line);
    if (li) { if (!list) { list = h('ul', {}); out.push(list); } list.append(h('li', {}, inline(li[1]))); continue; }
    list = null;
    if (hm) out.push(h(`h${Math.min(6, hm[1].length + 2)}`, {}, inline(hm[2])));
    else if (line.trim()) out.push(h('p', {}, inline(line)));
  }
  return h('div', {class: 'markdown', id: 'entity-page'}, out);
}

export function mount(root, {route, app}) {
  const typeSel = h('select', {id: 'world-type'}, ['', 'person', 'company', 'project', 'tool', 'concept'].map((t) => h('option', {value: t}, t || 'all types')));
  typeSel.value = route.params.get('type') || '';
  typeSel.addEventListener('change', () => app.navigate(`#/world${typeSel.value ? `?type=${typeSel.value}` : ''}`));
  const list = h('div', {id: 'world-entities'});
  const graph = h('div', {id: 'world-graph-box', class: 'graph-box'});
  const page = h('div', {id: 'world-page', 'aria-live': 'polite'}, h('p', {class: 'muted'}, 'Click an entity to see its page.'));
  root.append(h('div', {class: 'grid'},
    h('section', {class: 'card wide'}, h('h2', {}, 'Relation graph'), graph),
    h('section', {class: 'card'}, h('h2', {}, 'Entity'), page),
    h('section', {class: 'card'}, h('h2', {}, 'Entities ', h('label', {class: 'sr-only', for: 'world-type'}, 'type')), typeSel, list)));
  let alive = true, nodes = [], edges = [], selected = route.params.get('entity') || '';

  async function openEntity(name) {
    selected = name;
    put(page, h('p', {class: 'muted'}, `reading ${name}…`));
    redraw();
    try {
      const r = await api('/v1/world/entity', {query: {name}});
      if (alive) put(page, markdown(r.markdown));
    } catch (e) {
      if (alive) put(page, errorBox(e));
    }
  }

  function redraw() {
    if (!nodes.length) return;
    put(graph, drawGraph(nodes, edges, {onSelect: (d) => openEntity(d.id), selected}));
  }

  (async () => {
    try {
      const r = await api('/v1/world/entities', {query: {type: typeSel.value}});
      if (!alive) return;
      const ents = r.entities;
      put(list, ents.length
        ? h('ul', {class: 'entities'}, ents.map((e) => h('li', {},
            h('button', {type: 'button', class: 'link', testid: `entity-${e.name}`, on: {click: () => openEntity(e.name)}}, e.name), ' ',
            h('small', {class: 'muted'}, `${e.type}${e.stale ? ', stale' : ''}${e.archived ? ', archived' : ''} · ${e.facts} facts, ${e.relations} relations`))))
        : h('p', {class: 'muted'}, 'No entities yet (the world model extracts them daily; docs/world.md).'));
      const withRel = ents.filter((e) => e.relations > 0).slice(0, MAX_GRAPH);
      const types = new Map(ents.map((e) => [e.name, e.type]));
      const seen = new Set(), names = new Set();
      for (let i = 0; i < withRel.length; i += 4) {
        const part = await Promise.all(withRel.slice(i, i + 4).map((e) =>
          api('/v1/world/graph/neighbors', {query: {name: e.name, hops: 1}}).catch(() => null)));
        for (const nb of part) {
          if (!nb) continue;
          for (const x of nb.neighbors) {
            const ed = x.edge, key = `${ed.subject}\u0000${ed.predicate}\u0000${ed.object}`;
            if (seen.has(key)) continue;
            seen.add(key);
            edges.push({source: ed.subject, target: ed.object, label: ed.predicate});
            names.add(ed.subject); names.add(ed.object);
          }
        }
      }
      if (!alive) return;
      nodes = [...names].slice(0, MAX_GRAPH * 2).map((n) => ({id: n, type: types.get(n)}));
      if (nodes.length) redraw();
      else graph.append(h('p', {class: 'muted'}, 'No relations yet.'));
      root.dataset.ready = '1';
      if (selected) openEntity(selected);
    } catch (e) {
      if (alive) put(list, errorBox(e));
    }
  })();
  return {unmount() { alive = false; }};
}

