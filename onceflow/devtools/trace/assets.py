"""The page's own CSS and JavaScript, inlined: the page is viewed with no network at all."""

CSS = """
:root { --ink:#111827; --muted:#6b7280; --line:#e5e7eb; --ok:#15803d; --bad:#b91c1c; --warn:#b45309; --path:#0d9488; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: var(--ink); background: #f9fafb; }
header { padding: 12px 24px 4px; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 0 0 10px; }
h3 { font-size: 14px; margin: 0; }
.sub { color: var(--muted); margin: 0; }
main { padding: 8px 24px 32px; display: grid; gap: 16px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; min-width: 0; }
.view { display: grid; grid-template-columns: minmax(0, 1fr) 340px; gap: 16px; align-items: start; }
.view #state-details { position: sticky; top: 8px; max-height: calc(100vh - 16px); overflow: auto; }
@media (max-width: 1100px) { .view { grid-template-columns: 1fr; } }
.graph-card { padding: 10px 12px; }
.graph-bar { display: flex; flex-wrap: wrap; gap: 8px 18px; align-items: center; margin-bottom: 8px; }
.graph-bar h2 { margin: 0; }
.graph-bar button, .legend-box > summary, .notice button { font: inherit; font-size: 13px; padding: 2px 10px; border: 1px solid var(--line); border-radius: 6px; background: #fff; cursor: pointer; color: var(--ink); }
.graph-bar button:disabled { opacity: .4; cursor: default; }
.zoom, .stepper { display: flex; gap: 4px; align-items: center; }
.zoom #zoom-level { min-width: 3.5em; text-align: right; }
.stepper #graph-showing { max-width: 26em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; padding: 0 4px; }
.legend-box { position: relative; margin-left: auto; }
.legend-box > summary { list-style: none; } .legend-box > summary::-webkit-details-marker { display: none; }
.legend-box > summary::after { content: " ▾"; } .legend-box[open] > summary::after { content: " ▴"; }
.legend-panel { position: absolute; right: 0; top: 30px; z-index: 5; width: min(680px, 86vw); background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; box-shadow: 0 8px 24px rgba(17,24,39,.12); }
.graph-viewport { position: relative; height: calc(100vh - 200px); min-height: 360px; max-height: 1200px; border: 1px solid var(--line); border-radius: 8px; overflow: hidden; background: #fcfcfd; cursor: grab; touch-action: none; user-select: none; }
.graph-viewport:focus-visible { outline: 2px solid #93c5fd; outline-offset: 1px; }
.graph-viewport.dragging { cursor: grabbing; }
.graph-viewport svg.graph { width: 100%; height: 100%; }
.execution-top { display: grid; grid-template-columns: minmax(280px, 1fr) minmax(0, 2fr); gap: 8px 24px; align-items: start; }
@media (max-width: 900px) { .execution-top { grid-template-columns: 1fr; } }
.notice.live { background: #eff6ff; border-color: #93c5fd; }
.notice { background: #fffbeb; border: 1px solid #fcd34d; border-radius: 8px; padding: 8px 12px; margin: 10px 0 0; }
.notice.unknown { background: #fef2f2; border-color: #fca5a5; }
.chip.chip-pruned { background: #fef3c7; border-color: #fcd34d; }
.legend-head { color: var(--ink); font-weight: 600; }
i.note-sample { font-style: normal; font-weight: 600; } i.note-sample.warn { color: var(--warn); } i.note-sample.bad { color: var(--bad); } i.note-sample.ok { color: var(--ok); }
i.badge-sample { font-style: normal; background: #1f2937; color: #fff; border-radius: 9px; padding: 0 7px; font-weight: 700; }
.pager { display: flex; gap: 10px; align-items: center; margin: 4px 0 8px; }
.pager button, .filters button { font: inherit; padding: 2px 10px; border: 1px solid var(--line); border-radius: 6px; background: #fff; cursor: pointer; }
.pager button:disabled { opacity: .4; cursor: default; }
th.sortable { cursor: pointer; white-space: nowrap; user-select: none; }
th.sortable[aria-sort="ascending"]::after { content: " ▲"; } th.sortable[aria-sort="descending"]::after { content: " ▼"; }
#executions td { white-space: nowrap; } #executions td.error-cell { white-space: normal; min-width: 12em; }
tr.pruned td { color: var(--muted); }
table.events td { white-space: nowrap; } table.events td.summary { white-space: normal; overflow-wrap: anywhere; }
table.events td.step { white-space: normal; min-width: 12em; }  /* a state's name breaks between words only */
table.events td.summary { min-width: 24em; width: 60%; }
.events-box .scroll { max-height: 560px; }
.state-links a { margin-right: 12px; }
.stack { display: grid; gap: 16px; min-width: 0; }
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
.filters #search { flex: 1 1 180px; min-width: 0; }
.filters select { max-width: 24em; }
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

JS = r"""
(function () {
  var data = JSON.parse(document.getElementById('trace-data').textContent);
  var executions = data.executions, PAGE = 300, current = null, currentState = null;
  executions.forEach(function (e) {  // fields left out of the data have their default value (read-only)
    Object.keys(data.defaults).forEach(function (key) { if (!(key in e)) { e[key] = data.defaults[key]; } });
  });
  var page = 0, sortKey = 'started', sortDir = -1, matches = [];
  var STATUS_TEXT = {succeeded: 'succeeded', retried: 'succeeded after retries', caught: 'failed, caught',
                     failed: 'failed: the execution ended here', running: 'running'};
  function $(id) { return document.getElementById(id); }
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
  function leftOut(e) {
    return '<p class="empty">Inputs and outputs are left out for this execution (page size); `onceflow trace --execution ' +
      esc(e.name) + '` writes a page that shows them.</p>';
  }
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
  function addMs(iso, value) {
    if (value === null || value === undefined || iso === '—') { return '—'; }
    return new Date(Date.parse(iso) + value).toISOString().replace('Z', '+00:00');
  }
  function eventsHtml(e) {
    if (!e.events.length) { return ''; }
    var rows = e.events.map(function (ev, position) {
      var step = ev[2] ? e.steps[ev[2] - 1] : null, type = data.eventTypes[ev[0]];
      return '<tr class="event" data-type="' + esc(type) + '"><td class="num">' + (position + 1) + '</td><td>' +
        esc(type) + '</td><td class="step">' + (step ? esc(data.states[step[0]]) : '') + '</td><td class="num">' +
        ms(ev[1]) + '</td><td>' + esc(addMs(e.started, ev[1]).slice(11, 23)) + '</td><td class="summary">' +
        esc(ev[3] || '') + (ev.length > 4 ? pre('details', ev[4]) : '') + '</td></tr>';
    }).join('');
    return '<details class="events-box" open><summary>Events (' + e.events.length + ')</summary>' +
      '<div class="scroll"><table class="events" id="events"><thead><tr><th class="num">ID</th><th>Type</th>' +
      '<th>Step</th><th class="num">Elapsed</th><th>Timestamp (UTC)</th><th>Details</th></tr></thead><tbody>' +
      rows + '</tbody></table></div></details>';
  }
  function sectionHtml(index) {
    var e = executions[index];
    var facts = [['Status', '<b class="status-' + esc(e.status) + '">' + esc(e.status) + '</b>']];
    if (e.event_id) { facts.push(['event_id', esc(e.event_id)]); }
    if (e.subscriber) { facts.push(['Subscriber', esc(e.subscriber)]); }
    facts.push(['Started', esc(e.started)], ['Stopped', esc(addMs(e.started, e.ms))], ['Duration', ms(e.ms)]);
    if (!e.pruned) {
      facts.push(['Steps', e.steps.length + ' states, ' + e.retries + ' retries, ' + e.failures + ' failed attempts']);
    }
    if (e.error) { facts.push(['Error', '<span class="failure">' + esc(e.error) + ': ' + esc(e.cause) + '</span>']); }
    facts.push(['ARN', '<code>' + esc(data.arnPrefix + e.arn) + '</code>']);
    var note = (e.detailed ? '' : leftOut(e)) + (e.pruned ? '<p class="empty pruned">No history: the endpoint\'s ' +
      'history budget pruned it, so there are no steps or events; what DescribeExecution still knows is shown.</p>' : '');
    return '<section class="execution" data-index="' + index + '" data-name="' + esc(e.name) + '">' +
      '<div class="execution-top"><div class="facts-column"><h3>' + esc(e.name) + '</h3><dl>' +
      facts.map(function (f) { return '<dt>' + f[0] + '</dt><dd>' + f[1] + '</dd>'; }).join('') + '</dl>' +
      (e.detailed ? pre('Execution input', e.input) + pre('Execution output', e.output) : '') + note + '</div>' +
      '<ol class="steps">' + e.steps.map(function (s, i) { return stepHtml(s, i + 1); }).join('') + '</ol></div>' +
      eventsHtml(e) + '</section>';
  }
  function markGraph(e) {
    document.querySelectorAll('svg .state').forEach(function (n) {
      n.className.baseVal = n.className.baseVal.replace(/ onpath| st-[a-z]+/g, '');
    });
    document.querySelectorAll('svg .edge').forEach(function (n) { n.classList.remove('onpath'); });
    Object.keys(e.states).forEach(function (index) {
      var node = $('node-' + index);
      if (node) { node.classList.add('onpath'); if (e.states[index]) { node.classList.add('st-' + e.states[index]); } }
    });
    e.edges.forEach(function (number) { var n = $('edge-e' + number); if (n) { n.classList.add('onpath'); } });
  }
  function setHash() {
    if (!history.replaceState) { return; }
    var parts = [];
    if (current !== null) { parts.push('execution=' + encodeURIComponent(executions[current].name)); }
    if (currentState) { parts.push('state=' + encodeURIComponent(currentState)); }
    FILTERS.forEach(function (f) {
      var value = $(f[0]).value;
      if (value && !(f[0] === 'state-how' && value === 'entered')) { parts.push(f[1] + '=' + encodeURIComponent(value)); }
    });
    if (sortKey !== 'started' || sortDir !== -1) { parts.push('sort=' + sortKey, 'dir=' + sortDir); }  // read back below
    if (page > 0) { parts.push('page=' + (page + 1)); }
    history.replaceState(null, '', '#' + parts.join('&'));
  }
  function select(index, reveal) {
    index = Number(index);
    var e = executions[index];
    if (!e) { return; }
    current = index;
    markGraph(e);
    $('execution-view').innerHTML = sectionHtml(index);
    $('selected-name').textContent = e.name;
    $('graph-showing').textContent = e.name;
    $('graph-showing').title = e.name;
    document.querySelectorAll('#executions tbody tr').forEach(function (r) {
      r.classList.toggle('selected', r.dataset.index === String(index));
    });
    stepperState();
    if (reveal) { $('graph-card').scrollIntoView({block: 'start'}); }
    if (currentState) { showState(currentState, false); } else { setHash(); }
  }
  function countWhere(how, index) {
    var n = 0;
    for (var i = 0; i < executions.length; i++) { if (executions[i][how].indexOf(index) >= 0) { n++; } }
    return n;
  }
  function showState(name, reveal) {
    currentState = name;
    var panel = $('state-details');
    var node = document.querySelector('svg .state[data-state="' + CSS.escape(name) + '"]');
    document.querySelectorAll('svg .state.chosen').forEach(function (n) { n.classList.remove('chosen'); });
    var index = data.states.indexOf(name);
    if (!node || index < 0) {
      panel.innerHTML = '<h2>State details</h2><p class="notice unknown" id="unknown-state">No state named “' +
        esc(name) + '” in this state machine.</p>';
      setHash();
      return;
    }
    node.classList.add('chosen');
    var html = '<h2>State details: <span id="state-name">' + esc(name) + '</span></h2>';
    var entered = countWhere('entered', index), failed = countWhere('failed', index);
    var pruned = executions.filter(function (x) { return x.pruned; }).length;
    html += '<p class="meta">' + esc(node.dataset.type) + ' · whole run: entered by ' + entered +
      ' executions, ' + esc(node.dataset.retries) + ' retries in all, failed in ' + failed + '</p>' +
      (pruned ? '<p class="meta" id="state-pruned">Counted among the ' + (executions.length - pruned) +
        ' executions with a history; the ' + pruned + ' without one (pruned) are in no count here.</p>' : '') +
      '<p class="state-links"><a href="#" id="show-entered" data-how="entered">list the ' + entered +
      ' that entered it</a><a href="#" id="show-failed" data-how="failed">list the ' + failed +
      ' that failed there</a></p>';
    var e = current === null ? null : executions[current];
    var entries = e ? e.steps.map(function (s, i) { return [s, i + 1]; }).filter(function (p) { return p[0][0] === index; }) : [];
    if (!e) {
      html += '<p class="empty">No execution selected.</p>';
    } else if (!entries.length) {
      html += '<p class="empty">Not entered by the selected execution (' + esc(e.name) + ')' +
        (e.pruned ? ': its history was pruned' : '') + '.</p>';
    } else {
      html += '<h3>In the selected execution (' + esc(e.name) + ')</h3>' + entries.map(function (p) {
        var s = p[0], number = p[1];
        var parts = '<div class="entry st-' + s[5] + '" data-status="' + s[5] + '"><h3>Step ' + number + ': ' +
          esc(STATUS_TEXT[s[5]] || s[5]) + '</h3><dl class="facts"><dt>Status</dt><dd class="entry-status">' + esc(s[5]) +
          '</dd><dt>Attempts</dt><dd class="entry-attempts">' + s[2] + '</dd><dt>Retries</dt><dd class="entry-retries">' +
          Math.max(s[2] - 1, 0) + '</dd><dt>Duration</dt><dd>' + ms(s[4]) + '</dd></dl>' + failures(s[3]) +
          (s[6] ? '<div class="via">' + esc(s[6]) + '</div>' : '');
        parts += s.length > 7 ? pre('Input', s[7], true) + pre('Output', s[8], true) : leftOut(e);
        return parts + '</div>';
      }).join('');
    }
    panel.innerHTML = html;
    panel.querySelectorAll('.state-links a').forEach(function (link) {
      link.addEventListener('click', function (event) {
        event.preventDefault();
        $('state-filter').value = String(index);
        $('state-how').value = link.dataset.how;
        page = 0;
        renderList();
        $('executions').scrollIntoView({block: 'nearest'});
      });
    });
    if (reveal) { panel.scrollIntoView({block: 'nearest'}); }
    setHash();
  }
  var FILTERS = [['search', 'q'], ['status-filter', 'status'], ['path-filter', 'path'], ['error-filter', 'error'],
                 ['state-filter', 'in'], ['state-how', 'how'], ['time-from', 'from'], ['time-to', 'to']];
  function isoTime(text) {  // as the list shows it ('2026-01-01 00:00:10') or as ISO ('2026-01-01T00:00:10')
    return text.trim().replace(' ', 'T');
  }
  function matching() {
    var query = $('search').value.trim().toLowerCase(), status = $('status-filter').value;
    var path = $('path-filter').value, error = $('error-filter').value, state = $('state-filter').value;
    var how = $('state-how').value, from = isoTime($('time-from').value), to = isoTime($('time-to').value);
    var found = [];
    for (var i = 0; i < executions.length; i++) {
      var e = executions[i];
      if (status && e.status !== status) { continue; }
      if (path !== '' && String(e.path) !== path) { continue; }
      if (error === '*' && !e.errors.length) { continue; }
      if (error && error !== '*' && e.errors.indexOf(error) < 0) { continue; }
      if (state !== '' && e[how].indexOf(Number(state)) < 0) { continue; }
      if (from && e.started < from) { continue; }
      if (to && e.started >= to) { continue; }
      if (query && e.name.toLowerCase().indexOf(query) < 0 && e.event_id.toLowerCase().indexOf(query) < 0) { continue; }
      found.push(i);
    }
    var key = sortKey;
    found.sort(function (a, b) {
      var x = executions[a][key], y = executions[b][key];
      if (key === 'error') { x = x || ''; y = y || ''; }
      if (x === null || x === undefined) { x = -1; } if (y === null || y === undefined) { y = -1; }
      if (x < y) { return -sortDir; } if (x > y) { return sortDir; }
      return (a - b) * sortDir;
    });
    return found;
  }
  function rowHtml(i) {
    var e = executions[i];
    return '<tr class="pick' + (i === current ? ' selected' : '') + (e.pruned ? ' pruned' : '') + '" tabindex="0" data-index="' +
      i + '"><td>' + esc(e.started.slice(0, 23).replace('T', ' ')) + '</td><td>' + esc(e.name) + '</td><td>' +
      esc(e.event_id) + '</td><td class="status-' + esc(e.status) + '">' + esc(e.status) + '</td><td class="error-cell">' +
      esc(e.error || '') + '</td><td>' + (e.pruned ? 'no history' : 'path ' + (e.path + 1)) + '</td><td class="num">' +
      ms(e.ms) + '</td><td class="num">' + (e.pruned ? '—' : e.retries) + '</td></tr>';
  }
  function renderList() {
    matches = matching();
    var pages = Math.max(1, Math.ceil(matches.length / PAGE));
    page = Math.min(Math.max(page, 0), pages - 1);
    var shown = matches.slice(page * PAGE, (page + 1) * PAGE);
    document.querySelector('#executions tbody').innerHTML = shown.map(rowHtml).join('') ||
      '<tr><td colspan="8" class="empty">No execution matches.</td></tr>';
    $('match-count').textContent = matches.length ? 'rows ' + (page * PAGE + 1) + '–' + (page * PAGE + shown.length) +
      ' of ' + matches.length + ' matching (' + executions.length + ' in all), page ' + (page + 1) + ' of ' + pages :
      '0 of ' + executions.length;
    $('page-newer').disabled = page === 0;
    $('page-older').disabled = page >= pages - 1;
    stepperState();
    document.querySelectorAll('th.sortable').forEach(function (th) {
      th.setAttribute('aria-sort', th.dataset.sort === sortKey ? (sortDir > 0 ? 'ascending' : 'descending') : 'none');
    });
    setHash();
  }
  function pick(event) {
    var row = event.target.closest('tr.pick');
    if (row) { select(row.dataset.index, true); }
  }
  FILTERS.forEach(function (f) {
    $(f[0]).addEventListener('input', function () { page = 0; renderList(); });
  });
  $('clear-filters').addEventListener('click', function () {
    FILTERS.forEach(function (f) { $(f[0]).value = f[0] === 'state-how' ? 'entered' : ''; });
    page = 0; renderList();
  });
  $('page-newer').addEventListener('click', function () { page--; renderList(); });
  $('page-older').addEventListener('click', function () { page++; renderList(); });
  function sortBy(key) {
    if (sortKey === key) { sortDir = -sortDir; } else { sortKey = key; sortDir = key === 'started' ? -1 : 1; }
    page = 0; renderList();
  }
  document.querySelectorAll('th.sortable').forEach(function (th) {
    th.addEventListener('click', function () { sortBy(th.dataset.sort); });
    th.addEventListener('keydown', function (event) { if (event.key === 'Enter') { sortBy(th.dataset.sort); } });
  });
  document.querySelectorAll('#executions tbody, #paths tbody').forEach(function (body) {
    body.addEventListener('click', pick);
    body.addEventListener('keydown', function (event) {
      if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); pick(event); }
    });
  });
  document.querySelectorAll('svg .state').forEach(function (node) {
    node.addEventListener('click', function () { showState(node.dataset.state, true); });
  });
  // The list's order steps through executions from the graph: the one shown, then the next newer or older.
  function stepperState() {
    var at = matches.indexOf(current);
    $('select-newer').disabled = !matches.length || at === 0;
    $('select-older').disabled = !matches.length || (at >= 0 && at === matches.length - 1);
  }
  function step(by) {
    if (!matches.length) { return; }
    var at = matches.indexOf(current), next = at < 0 ? 0 : Math.min(Math.max(at + by, 0), matches.length - 1);
    page = Math.floor(next / PAGE);
    select(matches[next], false);
    renderList();
  }
  $('select-newer').addEventListener('click', function () { step(-1); });
  $('select-older').addEventListener('click', function () { step(1); });

  // Zoom and pan, as the console's graph: the viewBox is the part of the graph in view.
  var port = $('graph-viewport'), graphSvg = port.querySelector('svg.graph');
  var GW = Number(graphSvg.dataset.width), GH = Number(graphSvg.dataset.height);
  var LEGIBLE = 0.85, MIN_ZOOM = 0.1, MAX_ZOOM = 4;  // at 0.85 a state's name (13 px) is drawn at 11 px
  var view = {x: 0, y: 0, k: 1};
  var VIEW_KEY = 'onceflow-trace-view:' + location.pathname;
  function size() { return {w: port.clientWidth || 1, h: port.clientHeight || 1}; }
  function fillWindow() {  // the graph takes the window's height below the page's head (the console's view)
    var top = port.getBoundingClientRect().top + scrollY;
    port.style.height = Math.max(360, Math.min(innerHeight - top - 12, 1400)) + 'px';
  }
  fillWindow();
  function applyView() {
    var box = size();
    graphSvg.setAttribute('viewBox', [view.x, view.y, box.w / view.k, box.h / view.k].map(function (v) {
      return v.toFixed(2);
    }).join(' '));
    graphSvg.setAttribute('preserveAspectRatio', 'xMinYMin meet');
    $('zoom-level').textContent = Math.round(view.k * 100) + '%';
    port.dataset.zoom = view.k.toFixed(4);
    try { sessionStorage.setItem(VIEW_KEY, JSON.stringify(view)); } catch (error) { /* storage off: fine */ }
  }
  function fitScale() { var box = size(); return Math.min(box.w / GW, box.h / GH); }
  function centreOn(x0, y0, x1, y1, k) {
    var box = size();
    view.k = Math.min(Math.max(k, MIN_ZOOM), MAX_ZOOM);
    var w = box.w / view.k, h = box.h / view.k;
    view.x = (x0 + x1) / 2 - w / 2;
    view.y = y1 - y0 <= h ? (y0 + y1) / 2 - h / 2 : y0 - 16;
    applyView();
  }
  function fit() { centreOn(0, 0, GW, GH, fitScale()); }
  function zoomAt(factor, px, py) {
    var k = Math.min(Math.max(view.k * factor, MIN_ZOOM), MAX_ZOOM);
    var gx = view.x + px / view.k, gy = view.y + py / view.k;
    view.k = k; view.x = gx - px / k; view.y = gy - py / k;
    applyView();
  }
  function zoomCentre(factor) { var box = size(); zoomAt(factor, box.w / 2, box.h / 2); }
  function pathBox() {  // the selected execution's states, in the graph's units
    var e = current === null ? null : executions[current], box = null;
    Object.keys(e ? e.states : {}).forEach(function (index) {
      var node = $('node-' + index);
      if (!node) { return; }
      var b = node.getBBox();
      box = box ? [Math.min(box[0], b.x), Math.min(box[1], b.y), Math.max(box[2], b.x + b.width),
                   Math.max(box[3], b.y + b.height)] : [b.x, b.y, b.x + b.width, b.y + b.height];
    });
    return box;
  }
  function showPath() {  // the whole graph when it can be read whole, else the path at a legible zoom
    var whole = fitScale();
    if (whole >= LEGIBLE) { fit(); return; }
    var box = pathBox() || [0, 0, GW, GH], room = size();
    var k = Math.max(LEGIBLE, Math.min(room.w / (box[2] - box[0] + 48), room.h / (box[3] - box[1] + 48), 1));
    centreOn(box[0] - 24, box[1] - 24, box[2] + 24, box[3] + 24, k);
  }
  $('zoom-in').addEventListener('click', function () { zoomCentre(1.25); });
  $('zoom-out').addEventListener('click', function () { zoomCentre(0.8); });
  $('zoom-fit').addEventListener('click', fit);
  $('zoom-actual').addEventListener('click', function () { zoomCentre(1 / view.k); });
  $('zoom-path').addEventListener('click', showPath);
  port.addEventListener('wheel', function (event) {
    event.preventDefault();
    var rect = port.getBoundingClientRect(), lines = event.deltaMode === 1 ? 16 : 1;
    zoomAt(Math.exp(-event.deltaY * lines * 0.0015), event.clientX - rect.left, event.clientY - rect.top);
  }, {passive: false});
  var drag = null;
  port.addEventListener('pointerdown', function (event) {
    if (event.button !== 0) { return; }
    drag = {x: event.clientX, y: event.clientY, vx: view.x, vy: view.y, moved: false, id: event.pointerId};
  });
  port.addEventListener('pointermove', function (event) {
    if (!drag || event.pointerId !== drag.id) { return; }
    var dx = event.clientX - drag.x, dy = event.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) { return; }
    if (!drag.moved) { drag.moved = true; port.classList.add('dragging'); port.setPointerCapture(drag.id); }
    view.x = drag.vx - dx / view.k; view.y = drag.vy - dy / view.k;
    applyView();
  });
  function endDrag(event) {
    if (!drag || event.pointerId !== drag.id) { return; }
    if (drag.moved) {  // a drag is no click on the state it ends on
      port.addEventListener('click', function swallow(click) {
        click.stopPropagation(); port.removeEventListener('click', swallow, true);
      }, true);
      setTimeout(function () { drag = null; }, 0);
    } else { drag = null; }
    port.classList.remove('dragging');
  }
  port.addEventListener('pointerup', endDrag);
  port.addEventListener('pointercancel', endDrag);
  port.addEventListener('keydown', function (event) {
    var by = 80 / view.k, handled = true;
    if (event.key === '+' || event.key === '=') { zoomCentre(1.25); }
    else if (event.key === '-' || event.key === '_') { zoomCentre(0.8); }
    else if (event.key === '0') { fit(); }
    else if (event.key === '1') { zoomCentre(1 / view.k); }
    else if (event.key === 'p') { showPath(); }
    else if (event.key === 'ArrowLeft') { view.x -= by; applyView(); }
    else if (event.key === 'ArrowRight') { view.x += by; applyView(); }
    else if (event.key === 'ArrowUp') { view.y -= by; applyView(); }
    else if (event.key === 'ArrowDown') { view.y += by; applyView(); }
    else if (event.key === '[') { step(-1); }
    else if (event.key === ']') { step(1); }
    else { handled = false; }
    if (handled) { event.preventDefault(); }
  });
  window.addEventListener('resize', function () { fillWindow(); applyView(); });
  window.onceflowGraph = {fit: fit, showPath: showPath, zoomAt: zoomAt, view: view, legible: LEGIBLE};
  current = data.selected;
  var params = {};
  location.hash.replace(/^#/, '').split('&').forEach(function (part) {
    var at = part.indexOf('=');
    if (at > 0) { params[part.slice(0, at)] = decodeURIComponent(part.slice(at + 1)); }
  });
  // A link carries the list's filters and order too: #status=FAILED&error=X&from=2026-01-01T00:00&sort=ms&dir=1&page=2
  FILTERS.forEach(function (f) { if (params[f[1]] !== undefined) { $(f[0]).value = params[f[1]]; } });
  if (params.sort && executions.length && params.sort in executions[0]) { sortKey = params.sort; }
  if (params.dir) { sortDir = params.dir === '1' ? 1 : -1; }
  if (params.page) { page = Number(params.page) - 1 || 0; }
  if (params.execution !== undefined) {
    var found = -1;
    executions.forEach(function (e, i) { if (e.name === params.execution || data.arnPrefix + e.arn === params.execution) { found = i; } });
    if (found >= 0) {
      current = found;
    } else {
      $('execution-view').insertAdjacentHTML('afterbegin', '<p class="notice unknown" id="unknown-execution">No execution ' +
        'named “' + esc(params.execution) + '” among the ' + executions.length + ' on this page; showing ' +
        (current === null ? 'none' : esc(executions[current].name)) + ' instead.</p>');
    }
  }
  renderList();
  if (current !== null) {
    var unknown = $('unknown-execution');
    select(current, false);
    if (unknown) { $('execution-view').insertAdjacentElement('afterbegin', unknown); }
  }
  if (params.state) { showState(params.state, false); }
  var saved = null;
  try { saved = JSON.parse(sessionStorage.getItem(VIEW_KEY) || 'null'); } catch (error) { saved = null; }
  if (saved && saved.k > 0) { view.x = saved.x; view.y = saved.y; view.k = saved.k; applyView(); } else { showPath(); }
  // Live (`onceflow trace --watch`): the command rewrites the file; the page reloads itself, keeping the
  // selection, the filters (the address) and the zoom (this tab's session storage).
  var PAUSE_KEY = 'onceflow-trace-paused:' + location.pathname;
  function paused() { try { return sessionStorage.getItem(PAUSE_KEY) === '1'; } catch (error) { return false; } }
  if (data.live) {
    var button = $('live-pause');
    var reload = function () { if (!paused()) { location.reload(); } };
    button.textContent = paused() ? 'resume reloading' : 'pause reloading';
    button.addEventListener('click', function () {
      try { sessionStorage.setItem(PAUSE_KEY, paused() ? '0' : '1'); } catch (error) { /* nothing to keep */ }
      button.textContent = paused() ? 'resume reloading' : 'pause reloading';
      if (!paused()) { setTimeout(reload, data.live.every * 1000); }
    });
    document.body.dataset.live = String(data.live.every);
    window.onceflowReload = reload;
    setTimeout(reload, data.live.every * 1000);
  }
  document.body.dataset.ready = 'true';
})();
"""
