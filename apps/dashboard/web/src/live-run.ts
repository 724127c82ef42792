import { useEffect, useRef } from 'react';
import { queryClient, setDatabaseDown, type RunFeedEvent } from './api';

/**
 * Follows a run's server-sent events: each moved cursor refreshes the run's queries (and calls
 * `onChange`, throttled to one call per 500 ms); EventSource reconnects by itself after an outage.
 */
export function useLiveRun(runId: string, onChange: () => void): void {
  const latest = useRef(onChange);
  latest.current = onChange;
  useEffect(() => {
    const source = new EventSource(`/api/runs/${encodeURIComponent(runId)}/events`);
    let first = true;
    let timer: number | undefined;
    let pending = false;
    const refresh = () => {
      if (timer !== undefined) {
        pending = true;
        return;
      }
      void queryClient.invalidateQueries({ queryKey: ['run', runId] });
      latest.current();
      timer = window.setTimeout(() => {
        timer = undefined;
        if (pending) {
          pending = false;
          refresh();
        }
      }, 500);
    };
    source.addEventListener('run', (message) => {
      const event = JSON.parse((message as MessageEvent<string>).data) as RunFeedEvent;
      if (event.kind === 'database-down') {
        setDatabaseDown(true);
        return;
      }
      setDatabaseDown(false);
      // The first event only reports where the run stands: the page has just loaded that.
      if (first) {
        first = false;
        return;
      }
      refresh();
    });
    return () => {
      source.close();
      window.clearTimeout(timer);
    };
  }, [runId]);
}
