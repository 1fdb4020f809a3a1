// Outbox: actions waiting for approval (approve / reject), dead ones
// (retry) and failed ones with their last error, what is pending or in
// flight, and the count by status. Every decision is an event with actor ui.

import {api, fetchMetrics, metricBy} from '../api.js';
import {h, put, errorBox, timeEl, idLink, throttle, fmtNum, changed} from '../util.js';

const SECTIONS = [
  ['pending_approval', 'Waiting for approval'],
  ['dead', 'Dead (gave up)'],
  ['failed', 'Failed, will retry'],
  ['pending', 'Pending'],
  ['inflight', 'In flight'],
];

export function mount(root, {app}) {
  const reason = h('input', {id: 'outbox-reason', placeholder: 'optional, kept in the event', autocomplete: 'off'});
  const msg = h('p', {id: 'outbox-message', role: 'status', 'aria-live': 'polite'});
  const counts = h('div', {id: 'outbox-counts'});
  const body = h('div', {id: 'outbox-body'});
  root.append(h('section', {class: 'card'}, h('h2', {}, 'Outbox'),
    h('p', {class: 'inline-form'}, h('label', {for: 'outbox-reason'}, 'Reason for a decision'), reason), msg, counts), body);

  let alive = true;
  const bodySig = {};

  async function act(id, verb, btn) {
    btn.disabled = true;
    msg.className = '';
    msg.textContent = `${verb} ${id}…`;
    try {
      const r = await api(`/v1/actions/${encodeURIComponent(id)}/${verb}`, {method: 'POST', body: reason.value.trim() ? {reason: reason.value.trim()} : {}});
      msg.textContent = `${id}: ${verb === 'retry' ? 'back to pending' : verb === 'approve' ? 'approved' : 'rejected'} (seq ${r.seq}).`;
      refresh();
    } catch (e) {
      msg.className = 'error';
      msg.textContent = `${id}: ${e.message}`;
      btn.disabled = false;
    }
  }

  function actionRow(a, status) {
    const buttons = [];
    if (status === 'pending_approval') {
      buttons.push(h('button', {type: 'button', testid: `approve-${a.id}`, class: 'primary', on: {click: (e) => act(a.id, 'approve', e.currentTarget)}}, 'Approve'),
                   h('button', {type: 'button', testid: `reject-${a.id}`, class: 'danger', on: {click: (e) => act(a.id, 'reject', e.currentTarget)}}, 'Reject'));
    }
    if (status === 'dead') {
      buttons.push(h('button', {type: 'button', testid: `retry-${a.id}`, on: {click: (e) => act(a.id, 'retry', e.currentTarget)}}, 'Retry'));
    }
    const payload = JSON.stringify(a.payload);
    return h('tr', {testid: `action-${a.id}`, data: {status: a.status}},
      h('td', {}, idLink(a.id)),
      h('td', {}, `${a.effector}/${a.type}`),
      h('td', {class: 'clip', title: payload}, payload),
      h('td', {}, String(a.attempts)),
      h('td', {class: 'err'}, a.last_error || ''),
      h('td', {}, timeEl(a.updated_at)),
      h('td', {}, a.next_attempt_at ? timeEl(a.next_attempt_at) : ''),
      h('td', {class: 'actions'}, buttons));
  }

  function section(status, title, actions) {
    return h('section', {class: 'card', id: `outbox-${status.replace('_', '-')}`},
      h('h3', {}, title, ' ', h('span', {class: 'muted'}, `(${actions.length})`)),
      actions.length
        ? h('div', {class: 'table-wrap'}, h('table', {},
            h('thead', {}, h('tr', {}, ['id', 'effector/type', 'payload', 'attempts', 'last error', 'updated', 'next attempt', ''].map((c) => h('th', {scope: 'col'}, c)))),
            h('tbody', {}, actions.map((a) => actionRow(a, status)))))
        : h('p', {class: 'muted'}, 'none'));
  }

  async function refresh() {
    try {
      const lists = await Promise.all(SECTIONS.map(([s]) => api('/v1/actions', {query: {status: s}})));
      if (!alive) return;
      if (changed(bodySig, lists)) put(body, SECTIONS.map(([s, title], i) => section(s, title, lists[i].actions)));
      root.dataset.ready = '1';
      const m = metricBy(await fetchMetrics(), 'limbic_outbox_actions', 'status');
      if (!alive) return;
      put(counts, h('ul', {class: 'chips', 'aria-label': 'actions by status'},
        Object.entries(m).map(([k, v]) => h('li', {class: 'chip', testid: `outbox-status-${k}`}, `${k}: ${fmtNum(v)}`))));
    } catch (e) {
      if (alive) put(body, errorBox(e));
    }
  }

  const soon = throttle(refresh, 300);
  refresh();
  return {
    onEvents(batch) { if (batch.some((e) => e.type.startsWith('action'))) soon(); },
    unmount() { alive = false; soon.cancel(); },
  };
}
