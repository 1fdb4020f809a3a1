// A small force-directed layout drawn as SVG: nodes are focusable buttons
// (click, Enter or Space selects), edges carry their predicate as a title.

import {svg} from './util.js';

/** Lays out nodes [{id}] and edges [{source, target}] in a W×H box; deterministic. */
export function layout(nodes, edges, W, H) {
  const n = nodes.length;
  const idx = new Map(nodes.map((d, i) => [d.id, i]));
  const P = nodes.map((_, i) => {
    const a = i * 2.399963, r = Math.sqrt((i + 0.5) / n) * Math.min(W, H) * 0.45;   // sunflower start
    return {x: W / 2 + r * Math.cos(a), y: H / 2 + r * Math.sin(a), vx: 0, vy: 0};
  });
  const E = edges.map((e) => [idx.get(e.source), idx.get(e.target)]).filter(([a, b]) => a !== undefined && b !== undefined && a !== b);
  const L = 90;                       // spring rest length, px
  for (let it = 0, t = 40; it < 300; it++, t *= 0.99) {
    for (const p of P) { p.vx = 0; p.vy = 0; }
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        let dx = P[i].x - P[j].x, dy = P[i].y - P[j].y;
        const d2 = Math.max(dx * dx + dy * dy, 1);
        if (d2 > 9 * L * L) continue;                                   // short range: components stay near
        const f = (L * L) / d2;                                         // repulsion ~ L²/d
        dx *= f; dy *= f;
        P[i].vx += dx; P[i].vy += dy; P[j].vx -= dx; P[j].vy -= dy;
      }
    }
    for (const [a, b] of E) {
      const dx = P[a].x - P[b].x, dy = P[a].y - P[b].y, d = Math.max(Math.hypot(dx, dy), 0.01), f = d / L;                // attraction ~ d²/L
      P[a].vx -= dx * f; P[a].vy -= dy * f; P[b].vx += dx * f; P[b].vy += dy * f;
    }
    for (const p of P) {
      p.vx += (W / 2 - p.x) * 0.05; p.vy += (H / 2 - p.y) * 0.05;   // gravity keeps components together
      const v = Math.hypot(p.vx, p.vy);
      if (v > t) { p.vx *= t / v; p.vy *= t / v; }
      p.x += p.vx; p.y += p.vy;
    }
  }
  return P;
}

/** Draws the graph; onSelect(node) on click / Enter / Space. */
export function drawGraph(nodes, edges, {width = 720, height = 440, onSelect, selected} = {}) {
  const P = layout(nodes, edges, width, height);
  const pos = new Map(nodes.map((d, i) => [d.id, P[i]]));
  // The view box is the drawing's own box (room on the right for labels).
  const xs = P.map((p) => p.x), ys = P.map((p) => p.y);
  const x0 = Math.min(...xs) - 20, y0 = Math.min(...ys) - 24;
  const vw = Math.max(320, Math.max(...xs) - x0 + 150), vh = Math.max(120, Math.max(...ys) - y0 + 24);
  const root = svg('svg', {viewBox: `${x0.toFixed(0)} ${y0.toFixed(0)} ${vw.toFixed(0)} ${vh.toFixed(0)}`, width: vw.toFixed(0), height: vh.toFixed(0), class: 'graph', id: 'world-graph', role: 'group',
                           'aria-label': `graph of ${nodes.length} entities and ${edges.length} relations`});
  for (const e of edges) {
    const a = pos.get(e.source), b = pos.get(e.target);
    if (!a || !b) continue;
    root.append(svg('line', {x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: 'edge'},
      svg('title', {}, `${e.source} ${e.label} ${e.target}`)));
    root.append(svg('text', {x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 3, class: 'edge-label', 'text-anchor': 'middle'}, e.label));
  }
  nodes.forEach((d) => {
    const p = pos.get(d.id);
    const g = svg('g', {class: `gnode type-${d.type || 'unknown'}${d.id === selected ? ' selected' : ''}`, tabindex: 0, role: 'button',
                        'aria-label': `${d.id} (${d.type || 'entity'})`, testid: `graph-node-${d.id}`,
                        transform: `translate(${p.x.toFixed(1)},${p.y.toFixed(1)})`},
      svg('circle', {r: 9}), svg('text', {x: 12, y: 4}, d.id));
    const pick = () => onSelect && onSelect(d);
    g.addEventListener('click', pick);
    g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); pick(); } });
    root.append(g);
  });
  return root;
}
