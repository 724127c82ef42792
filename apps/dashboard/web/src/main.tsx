import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClientProvider } from '@tanstack/react-query';
import { queryClient } from './api';
import { App, loadPagesFor } from './app';
import { setBenchmarkDisplays, type BenchmarkDisplay } from '../../src/benchmark-display';
import './styles.css';

// What each benchmark's success means and how its trajectories look, from the server's registry.
const benchmarks = await fetch('/api/benchmarks').then((response) =>
  response.ok ? (response.json() as Promise<Record<string, BenchmarkDisplay>>) : {},
);
setBenchmarkDisplays(benchmarks);
await loadPagesFor(window.location.pathname);
createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
