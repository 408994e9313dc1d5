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
svg .state.type-choice rect.box { fill: #eff6ff; stroke: #60a5fa; }
svg .state.type-succeed rect.box { fill: #f0fdf4; stroke: #4ade80; }
svg .state.type-fail rect.box { fill: #fef2f2; stroke: #f87171; }
svg .state.type-pass rect.box, svg .state.type-wait rect.box { fill: #f9fafb; }
svg .state.type-start rect.box { fill: #374151; stroke: #374151; }
svg .state.unvisited { opacity: .5; }
svg .state.onpath rect.box { stroke: var(--path); stroke-width: 3.5; }
svg .state.step-error rect.box { fill: #ffedd5; stroke: #ea580c; }
svg .state.end-ok rect.box { fill: #bbf7d0; stroke: var(--ok); }
svg .state.end-failed rect.box { fill: #fecaca; stroke: var(--bad); }
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
ol.steps li.step-error { border-left-color: #ea580c; } ol.steps li.end-failed { border-left-color: var(--bad); }
ol.steps li.end-ok { border-left-color: var(--ok); }
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
  function select(index) {
    var execution = data.executions[index];
    if (!execution) { return; }
    document.querySelectorAll('section.execution').forEach(function (s) { s.hidden = s.dataset.index !== String(index); });
    document.querySelectorAll('tr.pick').forEach(function (r) { r.classList.toggle('selected', r.dataset.index === String(index)); });
    document.querySelectorAll('svg .state').forEach(function (n) { n.classList.remove('onpath', 'step-error', 'end-ok', 'end-failed'); });
    document.querySelectorAll('svg .edge').forEach(function (e) { e.classList.remove('onpath'); });
    Object.keys(execution.states).forEach(function (id) {
      var node = document.getElementById(id);
      if (!node) { return; }
      node.classList.add('onpath');
      if (execution.states[id]) { node.classList.add(execution.states[id]); }
    });
    execution.edges.forEach(function (id) { var e = document.getElementById(id); if (e) { e.classList.add('onpath'); } });
    document.getElementById('selected-name').textContent = execution.name;
    if (history.replaceState) { history.replaceState(null, '', '#execution=' + encodeURIComponent(execution.name)); }
  }
  document.querySelectorAll('tr.pick').forEach(function (row) {
    row.addEventListener('click', function () { select(row.dataset.index); });
    row.addEventListener('keydown', function (event) {
      if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); select(row.dataset.index); }
    });
  });
  var wanted = decodeURIComponent((location.hash.match(/^#execution=(.*)$/) || [])[1] || '');
  data.executions.forEach(function (e, i) { if (e.name === wanted) { select(i); } });
})();
"""
