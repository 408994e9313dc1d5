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
.top { display: grid; grid-template-columns: minmax(0, 1.6fr) minmax(0, 1fr); gap: 16px; align-items: start; }
.beside { display: grid; grid-template-columns: minmax(0, 1.6fr) minmax(300px, 1fr); gap: 16px; align-items: start; }
.beside #state-details { position: sticky; top: 8px; max-height: calc(100vh - 16px); overflow: auto; }
@media (max-width: 1100px) { .beside { grid-template-columns: 1fr; } }
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
table.events td.step { white-space: normal; min-width: 8em; }  /* a state's name breaks between words only */
table.events td.summary { min-width: 10em; }
.state-links a { margin-right: 12px; }
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
.filters #search { flex: 1 1 180px; min-width: 0; }
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
    return '<section class="execution" data-index="' + index + '" data-name="' + esc(e.name) + '"><h3>' +
      esc(e.name) + '</h3><dl>' + facts.map(function (f) { return '<dt>' + f[0] + '</dt><dd>' + f[1] + '</dd>'; }).join('') +
      '</dl>' + (e.detailed ? pre('Execution input', e.input) + pre('Execution output', e.output) : '') + note +
      '<ol class="steps">' + e.steps.map(function (s, i) { return stepHtml(s, i + 1); }).join('') + '</ol>' +
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
    document.querySelectorAll('#executions tbody tr').forEach(function (r) {
      r.classList.toggle('selected', r.dataset.index === String(index));
    });
    if (reveal) { $('selected').scrollIntoView({block: 'nearest'}); }
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
  document.body.dataset.ready = 'true';
})();
"""
