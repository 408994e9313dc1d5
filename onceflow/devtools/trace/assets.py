"""The page's own CSS and JavaScript, inlined: the page is viewed with no network at all."""

CSS = """
:root { --ink:#111827; --muted:#6b7280; --line:#e5e7eb; --ok:#15803d; --bad:#b91c1c; --warn:#b45309; --path:#0d9488; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: var(--ink); background: #f9fafb; }
header { padding: 16px 24px 8px; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 0 0 10px; }
h3 { font-size: 14px; margin: 0; }
.sub { color: var(--muted); margin: 0; }
main { padding: 8px 24px 32px; display: grid; gap: 16px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; min-width: 0; }
.top { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 16px; align-items: start; }
.stack { display: grid; gap: 16px; min-width: 0; }
.graph-scroll svg.graph { margin: 0 auto; max-width: 100%; height: auto; }
@media (max-width: 1200px) { .top { grid-template-columns: 1fr; } }
.graph-scroll { overflow: auto; }
.chips { display: flex; flex-wrap: wrap; gap: 8px; margin-top: 10px; }
.chip { border-radius: 999px; padding: 3px 12px; font-weight: 600; background: #eef2ff; border: 1px solid #c7d2fe; }
.status-SUCCEEDED { color: var(--ok); } .status-FAILED, .status-TIMED_OUT, .status-ABORTED { color: var(--bad); }
.status-RUNNING { color: #1d4ed8; }
.chip.status-SUCCEEDED { background: #dcfce7; border-color: #86efac; }
.chip.status-FAILED, .chip.status-TIMED_OUT, .chip.status-ABORTED { background: #fee2e2; border-color: #fca5a5; }
.legend { display: flex; flex-wrap: wrap; gap: 14px; color: var(--muted); font-size: 12px; margin-bottom: 8px; }
.legend svg { vertical-align: middle; }
svg.graph { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; display: block; }
svg .edge path.line { fill: none; }
svg .edge.unused path.line { opacity: .35; }
svg .edge.kind-default path.line { stroke-dasharray: 7 4; }
svg .edge.kind-catch path.line { stroke-dasharray: 5 3; }
svg .edge.kind-other path.line { stroke-dasharray: 2 3; }
svg .edge path.halo { fill: none; stroke: var(--path); opacity: 0; }
svg .edge.onpath path.halo { opacity: .28; }
svg rect.count { fill: #fff; stroke-width: 1.2; }
svg text.count { font-size: 11px; font-weight: 700; text-anchor: middle; }
svg .state rect.box { fill: #fff; stroke: #9ca3af; stroke-width: 1.3; }
svg .state.type-pass rect.box, svg .state.type-wait rect.box { fill: #f9fafb; }
svg .state.type-start rect.box { fill: #374151; stroke: #374151; }
svg .state.unvisited { opacity: .5; }
svg .state.type-choice rect.box { stroke: #60a5fa; stroke-dasharray: 3 2; }
svg .state.onpath rect.box { stroke: var(--path); stroke-width: 3.5; }
svg .state.st-succeeded rect.box, .swatch.st-succeeded { fill: #bbf7d0; background: #bbf7d0; stroke: var(--ok); border-color: var(--ok); }
svg .state.st-retried rect.box, .swatch.st-retried { fill: #bbf7d0; background: #bbf7d0; stroke: #d97706; border-color: #d97706; }
svg .state.st-caught rect.box, .swatch.st-caught { fill: #fde68a; background: #fde68a; stroke: #b45309; border-color: #b45309; }
svg .state.st-failed rect.box, .swatch.st-failed { fill: #fecaca; background: #fecaca; stroke: var(--bad); border-color: var(--bad); }
svg .state.st-running rect.box, .swatch.st-running { fill: #bfdbfe; background: #bfdbfe; stroke: #1d4ed8; border-color: #1d4ed8; }
svg .state { cursor: pointer; }
svg .state.chosen rect.box { stroke: #111827; stroke-width: 4; stroke-dasharray: 6 3; }
.swatch { display: inline-block; width: 16px; height: 12px; border: 2.5px solid; border-radius: 3px; vertical-align: middle; }
.swatch.unentered { background: #fff; border-color: #9ca3af; opacity: .6; }
.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-bottom: 8px; }
.filters input, .filters select { font: inherit; padding: 3px 6px; border: 1px solid var(--line); border-radius: 6px; }
.filters input { flex: 1 1 180px; min-width: 0; }
#state-details .entry { border-left: 4px solid var(--path); padding: 6px 10px; margin: 6px 0; background: #f9fafb; }
#state-details .entry.st-caught { border-left-color: #b45309; } #state-details .entry.st-failed { border-left-color: var(--bad); }
#state-details .entry.st-retried { border-left-color: #d97706; } #state-details .entry.st-succeeded { border-left-color: var(--ok); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 6px 0; font-size: 13px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
svg text.name { font-size: 13px; font-weight: 600; text-anchor: middle; fill: var(--ink); }
svg text.subtitle { font-size: 11px; text-anchor: middle; fill: var(--muted); }
svg text.start { font-size: 12px; font-weight: 600; text-anchor: middle; fill: #fff; }
svg rect.visits { fill: #1f2937; }
svg text.visits { font-size: 11px; font-weight: 700; text-anchor: middle; fill: #fff; }
svg text.note { font-size: 11px; font-weight: 600; }
svg text.note-retry { fill: var(--warn); } svg text.note-error { fill: var(--bad); }
svg text.note-ok { fill: var(--ok); } svg text.note-failed { fill: var(--bad); }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; position: sticky; top: 0; background: #fff; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { max-height: 420px; overflow: auto; }
tr.pick { cursor: pointer; } tr.pick:hover, tr.pick:focus { background: #f0fdfa; outline: none; }
tr.pick.selected { background: #ccfbf1; }
.execution dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 8px 0; font-size: 13px; }
.execution dt { color: var(--muted); } .execution dd { margin: 0; overflow-wrap: anywhere; }
ol.steps { list-style: none; padding: 0; margin: 8px 0 0; counter-reset: none; }
ol.steps li { border-left: 4px solid var(--path); padding: 6px 10px; margin: 0 0 8px; background: #f9fafb; border-radius: 0 6px 6px 0; }
ol.steps li.st-caught { border-left-color: #b45309; } ol.steps li.st-failed { border-left-color: var(--bad); }
ol.steps li.st-retried { border-left-color: #d97706; } ol.steps li.st-succeeded { border-left-color: var(--ok); }
.step-head { display: flex; gap: 8px; align-items: baseline; flex-wrap: wrap; }
.step-no { font-weight: 700; color: var(--path); } .meta { color: var(--muted); font-size: 12px; }
.failure { color: var(--bad); font-size: 12px; margin: 2px 0; overflow-wrap: anywhere; }
.via { color: var(--muted); font-size: 12px; }
details { margin: 3px 0; } summary { cursor: pointer; color: #374151; font-size: 12px; }
pre { background: #111827; color: #e5e7eb; padding: 8px; border-radius: 6px; overflow: auto; max-height: 320px; font-size: 12px; margin: 4px 0; }
.empty { color: var(--muted); font-style: italic; }
code { font-size: 12px; }
"""

JS = """
(function () {
  var data = JSON.parse(document.getElementById('trace-data').textContent);
  var executions = data.executions, LIMIT = 300, current = null, currentState = null;
  var STATUS_TEXT = {succeeded: 'succeeded', retried: 'succeeded after retries', caught: 'failed, caught',
                     failed: 'failed: the execution ended here', running: 'running'};
  function esc(text) {
    return String(text === null || text === undefined ? '' : text).replace(/[&<>"']/g, function (c) {
      return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c];
    });
  }
  function pre(title, text, open) {
    if (text === null || text === undefined) { return ''; }
    return '<details' + (open ? ' open' : '') + '><summary>' + title + '</summary><pre>' + esc(text) + '</pre></details>';
  }
  function ms(value) { return value === null || value === undefined ? '—' : value + ' ms'; }
  function failures(list) {
    return list.map(function (f, i) {
      return '<div class="failure">attempt ' + (i + 1) + ' failed: <b>' + esc(f[0]) + '</b> — ' + esc(f[1]) + '</div>';
    }).join('');
  }
  function stepHtml(step, number) {
    var attempts = step[2] > 1 ? ' · ' + step[2] + ' attempts' : '';
    var io = step.length > 7 ? pre('Input', step[7]) + pre('Output', step[8]) : '';
    var name = data.states[step[0]];
    return '<li class="step st-' + step[5] + '" data-state="' + esc(name) + '"><div class="step-head">' +
      '<span class="step-no">' + number + '</span><h3>' + esc(name) + '</h3><span class="meta">' + esc(step[1]) +
      ' · ' + ms(step[4]) + attempts + '</span></div>' + failures(step[3]) +
      (step[6] ? '<div class="via">' + esc(step[6]) + '</div>' : '') + io + '</li>';
  }
  function sectionHtml(index) {
    var e = executions[index];
    var facts = [['Status', '<b class="status-' + esc(e.status) + '">' + esc(e.status) + '</b>']];
    if (e.event_id) { facts.push(['event_id', esc(e.event_id)]); }
    if (e.subscriber) { facts.push(['Subscriber', esc(e.subscriber)]); }
    facts.push(['Started', esc(e.started)], ['Duration', ms(e.ms)],
      ['Steps', e.steps.length + ' states, ' + e.retries + ' retries, ' + e.failures + ' failed attempts']);
    if (e.error) { facts.push(['Error', '<span class="failure">' + esc(e.error) + ': ' + esc(e.cause) + '</span>']); }
    facts.push(['ARN', '<code>' + esc(e.arn) + '</code>']);
    var note = e.detailed ? '' : '<p class="empty">Inputs and outputs are left out for this execution (page size).</p>';
    return '<section class="execution" data-index="' + index + '" data-name="' + esc(e.name) + '"><h3>' +
      esc(e.name) + '</h3><dl>' + facts.map(function (f) { return '<dt>' + f[0] + '</dt><dd>' + f[1] + '</dd>'; }).join('') +
      '</dl>' + (e.detailed ? pre('Execution input', e.input) + pre('Execution output', e.output) : '') + note +
      '<ol class="steps">' + e.steps.map(function (s, i) { return stepHtml(s, i + 1); }).join('') + '</ol></section>';
  }
  function markGraph(e) {
    document.querySelectorAll('svg .state').forEach(function (n) {
      n.className.baseVal = n.className.baseVal.replace(/ onpath| st-[a-z]+/g, '');
    });
    document.querySelectorAll('svg .edge').forEach(function (n) { n.classList.remove('onpath'); });
    Object.keys(e.states).forEach(function (id) {
      var node = document.getElementById(id);
      if (node) { node.classList.add('onpath'); if (e.states[id]) { node.classList.add('st-' + e.states[id]); } }
    });
    e.edges.forEach(function (id) { var n = document.getElementById(id); if (n) { n.classList.add('onpath'); } });
  }
  function setHash() {
    if (current === null || !history.replaceState) { return; }
    var hash = '#execution=' + encodeURIComponent(executions[current].name);
    if (currentState) { hash += '&state=' + encodeURIComponent(currentState); }
    history.replaceState(null, '', hash);
  }
  function select(index) {
    index = Number(index);
    var e = executions[index];
    if (!e) { return; }
    current = index;
    markGraph(e);
    var view = document.getElementById('execution-view');
    var shown = view.querySelector('section.execution');
    if (!shown || shown.dataset.index !== String(index)) { view.innerHTML = sectionHtml(index); }
    document.getElementById('selected-name').textContent = e.name;
    document.querySelectorAll('#executions tbody tr').forEach(function (r) {
      r.classList.toggle('selected', r.dataset.index === String(index));
    });
    if (currentState) { showState(currentState); } else { setHash(); }
  }
  function showState(name) {
    currentState = name;
    var panel = document.getElementById('state-details');
    var node = document.querySelector('svg .state[data-state="' + CSS.escape(name) + '"]');
    document.querySelectorAll('svg .state.chosen').forEach(function (n) { n.classList.remove('chosen'); });
    if (node) { node.classList.add('chosen'); }
    var html = '<h2>State details: <span id="state-name">' + esc(name) + '</span></h2>';
    if (node) {
      html += '<p class="meta">' + esc(node.dataset.type) + ' · entered by ' + esc(node.dataset.executions) +
        ' executions of this run, ' + esc(node.dataset.retries) + ' retries in all</p>';
    }
    var e = current === null ? null : executions[current];
    var index = data.states.indexOf(name);
    var entries = e ? e.steps.map(function (s, i) { return [s, i + 1]; }).filter(function (p) { return p[0][0] === index; }) : [];
    if (!e) {
      html += '<p class="empty">No execution selected.</p>';
    } else if (!entries.length) {
      html += '<p class="empty">Not entered by the selected execution (' + esc(e.name) + ').</p>';
    } else {
      html += entries.map(function (p) {
        var s = p[0], number = p[1];
        var parts = '<div class="entry st-' + s[5] + '" data-status="' + s[5] + '"><h3>Step ' + number + ': ' +
          esc(STATUS_TEXT[s[5]] || s[5]) + '</h3><dl class="facts"><dt>Status</dt><dd class="entry-status">' + esc(s[5]) +
          '</dd><dt>Attempts</dt><dd class="entry-attempts">' + s[2] + '</dd><dt>Retries</dt><dd class="entry-retries">' +
          Math.max(s[2] - 1, 0) + '</dd><dt>Duration</dt><dd>' + ms(s[4]) + '</dd></dl>' + failures(s[3]) +
          (s[6] ? '<div class="via">' + esc(s[6]) + '</div>' : '');
        if (s.length > 7) {
          parts += pre('Input', s[7], true) + pre('Output', s[8], true);
        } else {
          parts += '<p class="empty">Input and output left out for this execution (page size).</p>';
        }
        return parts + '</div>';
      }).join('');
    }
    panel.innerHTML = html;
    setHash();
  }
  function renderList() {
    var query = document.getElementById('search').value.trim().toLowerCase();
    var status = document.getElementById('status-filter').value;
    var path = document.getElementById('path-filter').value;
    var rows = [], matched = 0;
    for (var i = 0; i < executions.length; i++) {
      var e = executions[i];
      if (status && e.status !== status) { continue; }
      if (path !== '' && String(e.path) !== path) { continue; }
      if (query && e.name.toLowerCase().indexOf(query) < 0 && e.event_id.toLowerCase().indexOf(query) < 0) { continue; }
      matched++;
      if (rows.length < LIMIT) {
        rows.push('<tr class="pick' + (i === current ? ' selected' : '') + '" tabindex="0" data-index="' + i + '"><td>' +
          esc(e.started.slice(11)) + '</td><td>' + esc(e.name) + '</td><td>' + esc(e.event_id) + '</td><td class="status-' +
          esc(e.status) + '">' + esc(e.status) + '</td><td>path ' + (e.path + 1) + '</td><td class="num">' + e.retries +
          '</td><td>' + esc(e.error || '') + '</td></tr>');
      }
    }
    document.querySelector('#executions tbody').innerHTML = rows.join('') ||
      '<tr><td colspan="7" class="empty">No execution matches.</td></tr>';
    document.getElementById('match-count').textContent = matched > LIMIT ?
      matched + ' match, first ' + LIMIT + ' shown: narrow the search' : matched + ' of ' + executions.length;
  }
  function pick(event) {
    var row = event.target.closest('tr.pick');
    if (row) { select(row.dataset.index); }
  }
  ['search', 'status-filter', 'path-filter'].forEach(function (id) {
    document.getElementById(id).addEventListener('input', renderList);
  });
  document.querySelectorAll('#executions tbody, #paths tbody').forEach(function (body) {
    body.addEventListener('click', pick);
    body.addEventListener('keydown', function (event) {
      if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); pick(event); }
    });
  });
  document.querySelectorAll('svg .state').forEach(function (node) {
    node.addEventListener('click', function () { showState(node.dataset.state); });
  });
  current = data.selected;
  var params = {};
  location.hash.replace(/^#/, '').split('&').forEach(function (part) {
    var kv = part.split('=');
    if (kv.length === 2) { params[kv[0]] = decodeURIComponent(kv[1]); }
  });
  // A link can carry the list's filters too: #q=order-12&status=FAILED&path=0
  if (params.q) { document.getElementById('search').value = params.q; }
  if (params.status) { document.getElementById('status-filter').value = params.status; }
  if (params.path) { document.getElementById('path-filter').value = params.path; }
  renderList();
  executions.forEach(function (e, i) { if (e.name === params.execution) { select(i); } });
  if (params.state) { showState(params.state); }
  document.body.dataset.ready = 'true';
})();
"""
