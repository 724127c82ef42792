import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The browser bundle: everything is served from the dashboard's own files, nothing from a CDN.
export default defineConfig({
  root: fileURLToPath(new URL('./web', import.meta.url)),
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('./dist/web', import.meta.url)),
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 1_000,
  },
});
