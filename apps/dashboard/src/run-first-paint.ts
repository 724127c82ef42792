import { runProgress, type RunProgressCounts } from '../shared/run-progress.js';

// The run page's first screen as plain HTML inside the page the server sends: the run's name,
// status and progress are on screen before the script bundle has been parsed. React replaces it
// with the same content on its first render (the numbers also travel as JSON for that render).

export interface FirstPaintRun extends RunProgressCounts {
  run_id: string;
  name: string;
  benchmark: string;
  run_status: string;
}

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

export function runFirstPaintHtml(run: FirstPaintRun, provisional: boolean): string {
  const progress = runProgress(run);
  const status = escapeHtml(run.run_status);
  const statusClass = run.run_status.replace(/[^a-z]/g, '');
  return (
    '<nav class="top-nav"><a href="/" class="brand">benchfleet</a><a href="/">Runs</a><a href="/compare">Compare</a><a href="/queues">Queues</a></nav>' +
    '<main><div class="run-page"><header class="page-header">' +
    `<h1>${escapeHtml(run.name)} <span class="status status-${statusClass}">${status}</span>${provisional ? ' <span class="provisional">provisional</span>' : ''}</h1>` +
    `<p class="muted">${escapeHtml(run.run_id)} · ${escapeHtml(run.benchmark)}</p></header>` +
    '<section class="panel"><header class="panel-header"><h2>Progress</h2></header>' +
    `<div class="progress-line"><progress max="${run.total || 1}" value="${progress.ran}"></progress><span data-progress="done" elementtiming="run-progress">${escapeHtml(progress.text)}</span></div>` +
    '</section></div></main>'
  );
}
