import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Lists every module the bundle took in (`bundled-modules.json`), so a test can keep server code out of it. */
function bundledModules(): Plugin {
  return {
    name: 'benchfleet-bundled-modules',
    generateBundle() {
      const modules = [...this.getModuleIds()]
        .filter((id) => !id.startsWith('\0'))
        .map((id) => relative(REPO_ROOT, id.split('?')[0] ?? id))
        .sort();
      this.emitFile({
        type: 'asset',
        fileName: 'bundled-modules.json',
        source: `${JSON.stringify(modules, null, 1)}\n`,
      });
    },
  };
}

// The browser bundle: everything is served from the dashboard's own files, nothing from a CDN.
export default defineConfig({
  root: fileURLToPath(new URL('./web', import.meta.url)),
  base: '/',
  plugins: [react(), bundledModules()],
  build: {
    outDir: fileURLToPath(new URL('./dist/web', import.meta.url)),
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 1_000,
  },
});
