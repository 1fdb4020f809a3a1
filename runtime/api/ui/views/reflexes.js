// Reflexes: the rules with their fire counts, enable/disable, delete, and an
// editor that validates as you type through PUT /v1/reflexes/{id}?dry_run=true
// (the same validation as a real PUT; errors inline, naming the field).

import {api} from '../api.js';
import {h, put, clear, errorBox, timeEl, debounce, throttle, fmtNum, changed} from '../util.js';

const TEMPLATE = {
  when: {source: 'chat', pattern: '(?i)\\bhelp\\b'},
  then: [{create_thread: {goal: 'help: {{percept.text}}', salience: 0.6}}],
};

/** 'rule "x": when.sorce: unknown key' -> ['when.sorce', 'unknown key'] */
export function splitError(message) {
  const m = /^(?:rule "[^"]*": )?([A-Za-z_][\w.[\]]*): (.*)$/s.exec(message || '');
  return m ? [m[1], m[2]] : ['', message || ''];
}

export function mount(root, {route}) {
  const list = h('div', {id: 'reflex-list'});
  const msg = h('p', {id: 'reflex-message', role: 'status', 'aria-live': 'polite'});
  const idIn = h('input', {id: 'reflex-id', placeholder: 'my-rule', autocomplete: 'off', spellcheck: 'false'});
  const editor = h('textarea', {id: 'reflex-editor', rows: 16, spellcheck: 'false', 'aria-describedby': 'reflex-error reflex-help'});
  const err = h('div', {id: 'reflex-error', role: 'alert', 'aria-live': 'assertive', class: 'field-error'});
  const valid = h('span', {id: 'reflex-valid', class: 'muted', 'aria-live': 'polite'});
  const save = h('button', {type: 'submit', id: 'reflex-save', class: 'primary'}, 'Save rule');
  const form = h('form', {class: 'editor', id: 'reflex-form'},
    h('label', {for: 'reflex-id'}, 'Rule id'), idIn,
    h('label', {for: 'reflex-editor'}, 'Rule (JSON, docs/reflexes.md)'), editor, err,
    h('p', {id: 'reflex-help', class: 'muted'}, 'Checked by the runtime as you type; nothing is stored until you save.'),
    h('p', {class: 'buttons'}, save, ' ',
      h('button', {type: 'button', id: 'reflex-new', on: {click: () => edit('', TEMPLATE)}}, 'New rule'), ' ', valid));
  root.append(h('section', {class: 'card', id: 'reflex-list-card'}, h('h2', {}, 'Reflex rules'), msg, list),
              h('section', {class: 'card', id: 'reflex-editor-card'}, h('h2', {}, 'Editor'), form));

  let alive = true, seq = 0;
  const listSig = {};

  function showError(message) {
    const [field, rest] = splitError(message);
    put(err, field ? [h('code', {class: 'field', id: 'reflex-error-field'}, field), ' ', rest] : rest);
    err.dataset.field = field;
    editor.setAttribute('aria-invalid', 'true');
    valid.textContent = '';
  }

  function clearError() {
    clear(err);
    delete err.dataset.field;
    editor.removeAttribute('aria-invalid');
  }

  function parse() {
    const id = idIn.value.trim();
    if (!id) { showError('id: required (1-128 characters of A-Z a-z 0-9 . _ : -)'); return null; }
    let rule;
    try { rule = JSON.parse(editor.value); } catch (e) { showError(`JSON: ${e.message}`); return null; }
    if (!rule || typeof rule !== 'object' || Array.isArray(rule)) { showError('rule: must be a JSON object'); return null; }
    return {id, rule};
  }

  const validate = debounce(async () => {
    const p = parse();
    if (!p) return;
    const mine = ++seq;
    valid.textContent = 'checking…';
    try {
      const r = await api(`/v1/reflexes/${encodeURIComponent(p.id)}`, {method: 'PUT', body: p.rule, query: {dry_run: 'true'}});
      if (mine !== seq || !alive) return;
      clearError();
      valid.textContent = r.valid ? '✓ valid' : `saved (seq ${r.seq}): this runtime has no dry run`;
      if (!r.valid) refresh();
    } catch (e) {
      if (mine === seq && alive) showError(e.message);
    }
  }, 450);

  editor.addEventListener('input', validate);
  idIn.addEventListener('input', validate);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    validate.cancel();
    const p = parse();
    if (!p) return;
    save.disabled = true;
    try {
      const r = await api(`/v1/reflexes/${encodeURIComponent(p.id)}`, {method: 'PUT', body: p.rule});
      clearError();
      valid.textContent = '';
      msg.className = '';
      msg.textContent = `Saved ${p.id} (seq ${r.seq}).`;
      refresh();
    } catch (x) {
      showError(x.message);
    } finally {
      save.disabled = false;
    }
  });

  function edit(id, rule) {
    idIn.value = id;
    const copy = {...rule};
    delete copy.id;
    editor.value = JSON.stringify(copy, null, 2);
    clearError();
    valid.textContent = '';
    (id ? editor : idIn).focus();
  }

  async function post(id, verb, btn) {
    btn.disabled = true;
    try {
      const r = await api(`/v1/reflexes/${encodeURIComponent(id)}${verb === 'delete' ? '' : `/${verb}`}`,
                          {method: verb === 'delete' ? 'DELETE' : 'POST', body: {}});
      msg.className = '';
      msg.textContent = `${id}: ${verb}d (seq ${r.seq}).`;
    } catch (e) {
      msg.className = 'error';
      msg.textContent = `${id}: ${e.message}`;
      btn.disabled = false;
    }
    refresh();
  }

  function row(r) {
    const toggle = h('button', {type: 'button', testid: `reflex-toggle-${r.id}`, 'aria-pressed': r.enabled ? 'true' : 'false',
                                class: r.enabled ? 'toggle on' : 'toggle',
                                'aria-label': `${r.enabled ? 'Disable' : 'Enable'} ${r.id}`},
                       r.enabled ? 'Enabled' : 'Disabled');
    toggle.addEventListener('click', () => post(r.id, r.enabled ? 'disable' : 'enable', toggle));
    const del = h('button', {type: 'button', testid: `reflex-delete-${r.id}`, class: 'danger'}, 'Delete');
    del.addEventListener('click', () => {
      if (del.dataset.armed) post(r.id, 'delete', del);
      else { del.dataset.armed = '1'; del.textContent = 'Really delete?'; setTimeout(() => { delete del.dataset.armed; del.textContent = 'Delete'; }, 4000); }
    });
    const when = JSON.stringify(r.rule.when || {});
    return h('tr', {testid: `reflex-${r.id}`, data: {enabled: String(r.enabled)}},
      h('th', {scope: 'row'}, r.id, r.origin ? h('small', {class: 'muted'}, ` ${r.origin}`) : null),
      h('td', {}, toggle),
      h('td', {class: 'num', testid: `reflex-fired-${r.id}`}, fmtNum(r.fired_count)),
      h('td', {}, r.last_fired_at ? timeEl(r.last_fired_at) : '—'),
      h('td', {class: 'clip', title: when}, when),
      h('td', {class: 'actions'},
        h('button', {type: 'button', testid: `reflex-edit-${r.id}`, on: {click: () => edit(r.id, r.rule)}}, 'Edit'), del));
  }

  async function refresh() {
    try {
      const r = await api('/v1/reflexes');
      if (!alive) return;
      if (changed(listSig, r.reflexes)) put(list, r.reflexes.length
        ? h('div', {class: 'table-wrap'}, h('table', {id: 'reflex-table'},
            h('thead', {}, h('tr', {}, ['rule', 'state', 'fired', 'last fired', 'when', ''].map((c) => h('th', {scope: 'col'}, c)))),
            h('tbody', {}, r.reflexes.map(row))))
        : h('p', {class: 'muted'}, 'No rules.'));
      root.dataset.ready = '1';
      const wanted = route.params.get('edit');
      if (wanted && !idIn.value) { const x = r.reflexes.find((y) => y.id === wanted); if (x) edit(x.id, x.rule); }
    } catch (e) {
      if (alive) put(list, errorBox(e));
    }
  }

  const soon = throttle(refresh, 500);
  refresh();
  if (!route.params.get('edit')) { idIn.value = ''; editor.value = JSON.stringify(TEMPLATE, null, 2); }
  return {
    onEvents(batch) { if (batch.some((e) => e.type.startsWith('reflex_') && e.type !== 'reflexes_evaluated')) soon(); },
    unmount() { alive = false; validate.cancel(); soon.cancel(); },
  };
}
