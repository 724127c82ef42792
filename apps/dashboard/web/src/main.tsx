import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClientProvider } from '@tanstack/react-query';
import { queryClient } from './api';
import { App, loadPagesFor } from './app';
import { loadBenchmarkViews } from './benchmark-views';
import './styles.css';

// What each benchmark's success means and how its tasks are shown, from the server's registry.
await loadBenchmarkViews();
await loadPagesFor(window.location.pathname);
createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
