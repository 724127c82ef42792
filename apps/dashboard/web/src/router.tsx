import {
  useEffect,
  useRef,
  useState,
  useSyncExternalStore,
  type AnchorHTMLAttributes,
  type MouseEvent,
} from 'react';

// A few routes and query-string view state need no router library: the History API and one event.

const CHANGE = 'benchfleet:navigate';

function subscribe(callback: () => void): () => void {
  window.addEventListener('popstate', callback);
  window.addEventListener(CHANGE, callback);
  return () => {
    window.removeEventListener('popstate', callback);
    window.removeEventListener(CHANGE, callback);
  };
}

const snapshot = () => window.location.pathname + window.location.search;

export function useLocation(): { path: string; query: URLSearchParams } {
  const href = useSyncExternalStore(subscribe, snapshot);
  const url = new URL(href, window.location.origin);
  return { path: url.pathname, query: url.searchParams };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === snapshot()) return;
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  window.dispatchEvent(new Event(CHANGE));
  if (!options.replace) window.scrollTo(0, 0);
}

/** The current query string with `changes` applied (empty values removed), replacing the history entry. */
export function setQuery(changes: Record<string, string | number | null | undefined>): void {
  const url = new URL(window.location.href);
  for (const [key, value] of Object.entries(changes)) {
    if (value === null || value === undefined || value === '') url.searchParams.delete(key);
    else url.searchParams.set(key, String(value));
  }
  navigate(url.pathname + url.search, { replace: true });
}

export function Link({
  href,
  onClick,
  ...rest
}: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const handle = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    )
      return;
    event.preventDefault();
    navigate(href);
  };
  return <a href={href} onClick={handle} {...rest} />;
}

export function match(pattern: string, path: string): Record<string, string> | undefined {
  const names: string[] = [];
  const regex = new RegExp(
    `^${pattern.replace(/:([a-z]+)/g, (_, name: string) => (names.push(name), '([^/]+)'))}/?$`,
  );
  const found = regex.exec(path);
  if (!found) return undefined;
  return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(found[i + 1] ?? '')]));
}

export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · benchfleet`;
  }, [title]);
}

/**
 * A text field kept in the query string: typing updates the field at once and the URL (and what
 * filters on it) a moment later, so a 20,000-row filter does not run on every keystroke.
 */
export function useQueryText(name: string, delayMs = 200): [string, (value: string) => void] {
  const { query } = useLocation();
  const fromUrl = query.get(name) ?? '';
  const [text, setText] = useState(fromUrl);
  const timer = useRef<number | undefined>(undefined);
  const typed = useRef(fromUrl);
  useEffect(() => {
    // The URL changed by itself (back, a link): show what it says.
    if (fromUrl !== typed.current) {
      typed.current = fromUrl;
      setText(fromUrl);
    }
  }, [fromUrl]);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  const update = (value: string) => {
    setText(value);
    typed.current = value;
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => setQuery({ [name]: value }), delayMs);
  };
  return [text, update];
}
