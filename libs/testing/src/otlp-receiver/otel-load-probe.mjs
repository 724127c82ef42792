// Preloaded into a process under test (`NODE_OPTIONS=--import <this file>`): at exit it writes one
// line, `otel-probe {...}`, to stderr saying how many OpenTelemetry modules the process loaded (and
// how many beyond the API: the SDK, exporters) and
// which globals it registered with the OpenTelemetry API (tracer provider, context manager, …),
// ever, even if a shutdown took them away again. Plain JavaScript: it must load before anything.
import { createRequire } from 'node:module';
import { sep } from 'node:path';

const API_KEY = Symbol.for('opentelemetry.js.api.1');
const registered = new Set();
let stored;

// The API keeps its globals in one object under this key: every registration is a write to it.
Object.defineProperty(globalThis, API_KEY, {
  configurable: true,
  get: () => stored,
  set: (value) => {
    stored =
      value === undefined
        ? undefined
        : new Proxy(value, {
            set(target, key, entry) {
              if (entry !== undefined && key !== 'version') registered.add(String(key));
              target[key] = entry;
              return true;
            },
          });
  },
});

const cache = createRequire(import.meta.url).cache;
process.on('exit', () => {
  const modules = Object.keys(cache).filter((path) => path.includes(`${sep}@opentelemetry${sep}`));
  // The API alone is a no-op facade other packages load too (prom-client, for exemplars).
  const sdkModules = modules.filter(
    (path) => !path.includes(`${sep}@opentelemetry${sep}api${sep}`),
  );
  const report = {
    modules: modules.length,
    sdkModules: sdkModules.length,
    registered: [...registered].sort(),
  };
  process.stderr.write(`otel-probe ${JSON.stringify(report)}\n`);
  if (process.env.OTEL_LOAD_PROBE_LIST === '1')
    process.stderr.write(`otel-probe-modules: ${modules.join(' ')}\n`);
});
